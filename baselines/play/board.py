"""What a browser needs to show a position: the board as SVG (Fire & Ice, Go with the Floe) or the
MuJoCo picture of every pile (Thin Ice), the status, and the legal moves in a form a page can
click.  Shared by the live web game (:mod:`polarzoo.baselines.play.web`) and the replay viewer
(:mod:`polarzoo.baselines.play.replay`); the drawing itself is the envs' own
(``envs/<game>/render.py``: ``render_svg``, ``PileRenderer``)."""

from __future__ import annotations

import io
import threading
from typing import Any

import numpy as np

#: The games a browser can play; every game of :data:`polarzoo.envs.ENVIRONMENTS` but the solitaire.
WEB_GAMES = ("fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0")


def seat_of(env: Any) -> dict[str, int]:
    return {agent: i for i, agent in enumerate(env.possible_agents)}


def status_line(env: Any) -> str:
    """One line: whose move it is, the last move, the result once over."""
    if hasattr(env, "_status"):
        return env._status()
    return env._render_ansi().splitlines()[0]  # Thin Ice: the table's header line


def position(env: Any) -> dict[str, Any]:
    """The position as JSON-ready data: ``status``; ``svg`` for the board games; for Thin Ice
    ``players`` (each pile's status: in, or out by rule T / A / N, and points at the end) and
    ``phase`` / ``call`` / ``pending`` / ``in_hand``."""
    env_id = env.metadata["name"]
    view: dict[str, Any] = {"status": status_line(env)}
    if env_id == "fire_and_ice_v0":
        from polarzoo.envs.fire_and_ice import render

        view["svg"] = render.render_svg(env.state.board, int(env.state.last_action))
    elif env_id == "go_with_the_floe_v0":
        from polarzoo.envs.go_with_the_floe import render

        view["svg"] = render.render_svg(env.state)
    else:
        from polarzoo.envs.thin_ice import rules

        s = env.game.state
        players = []
        for i, agent in enumerate(env.possible_agents):
            rule = s.out_rule[i] if s.out_round[i] >= 0 else ""
            pieces = "".join(rules.SIZE_LETTERS[size] for size, inside in zip(s.slot_sizes[i], s.slot_in_pile[i]) if inside)
            players.append({"agent": agent, "out": rule, "pieces": pieces,
                            "points": float(s.points[i]) if s.points else None})
        view.update(players=players, phase=rules.PHASE_NAMES[s.phase],
                    call=rules.CALLS[s.current_call] if s.current_call >= 0 else None,
                    pending="".join(rules.SIZE_LETTERS[x] for x in s.pending),
                    in_hand=rules.SIZE_LETTERS[s.slot_sizes[s.adder][s.in_hand]] if s.in_hand >= 0 else None,
                    supply=[int(x) for x in s.supply], grid=int(env.grid))
    return view


def move_ends(env_id: str, action: int) -> tuple[int, int] | None:
    """``(from, to)`` cells of a board game's move (the SVG's ``data-cell`` numbers), ``None`` for a pass."""
    if env_id == "fire_and_ice_v0":
        from polarzoo.envs.fire_and_ice import rules

        return None if action == rules.PASS else divmod(action, rules.NUM_HOLES)
    from polarzoo.envs.go_with_the_floe import rules as floe

    return None if action == floe.PASS else (action // floe.ACTIONS_PER_SQUARE, floe.action_destination(action))


def legal_moves(env: Any, agent: str) -> list[dict[str, Any]]:
    """Every legal move of ``agent``: ``action`` and ``notation``; board games add ``from`` /
    ``to`` cells (absent for a pass); Thin Ice adds ``kind`` (call, place, pickup, done) and for a
    placement ``size`` / ``cell`` / ``orientation``, for a pick-up ``slot`` and the piece's ``size``."""
    env_id = env.metadata["name"]
    mask = env.observe(agent)["action_mask"]
    moves = []
    for action in map(int, np.flatnonzero(mask)):
        move: dict[str, Any] = {"action": action, "notation": env.action_to_notation(action)}
        if env_id == "thin_ice_v0":
            words = move["notation"].split()
            move["kind"] = words[0]
            if words[0] == "place":
                move.update(size=words[1], cell=words[2], orientation=words[3])
            elif words[0] == "pickup":
                from polarzoo.envs.thin_ice.rules import SIZE_LETTERS

                slot = int(words[1])
                move.update(slot=slot, size=SIZE_LETTERS[env.game.state.slot_sizes[seat_of(env)[agent]][slot]])
            elif words[0] == "call":
                move["call"] = words[1]
        else:
            ends = move_ends(env_id, action)
            if ends is not None:
                move["from"], move["to"] = int(ends[0]), int(ends[1])
        moves.append(move)
    return moves


_drawing = threading.local()


def picture(env: Any) -> np.ndarray:
    """Thin Ice: every pile's MuJoCo picture side by side (what the env's ``rgb_array`` shows).

    Drawn by a renderer that belongs to the calling thread and stays with it (an OpenGL context
    is bound to its thread: a renderer the env kept would be freed by whichever thread drops the
    env, as undo does), one per pile configuration."""
    from polarzoo.envs.thin_ice.render import PileRenderer

    renderers = getattr(_drawing, "renderers", None)
    if renderers is None:
        renderers = _drawing.renderers = {}
    key = (env.grid, env.pitch, repr(env.piles.piles[0].config))
    if key not in renderers:
        renderers[key] = PileRenderer()
    return renderers[key].render(env.game.state, env.piles)


def picture_png(env: Any) -> bytes:
    """:func:`picture` as PNG."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(picture(env)).save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def picture_jpeg(env: Any, quality: int = 80) -> bytes:
    """:func:`picture` as a smaller JPEG (the documentation site's static replays)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(picture(env)).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
