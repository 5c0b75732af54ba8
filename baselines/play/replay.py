"""Replays: a recorded game (a line of a ``games.jsonl``) played again in its env, position by
position, for the browser's replay viewer.

Every ``games.jsonl`` that ``evaluate``, ``polarzoo-league`` and ``polarzoo-benchmark`` write
holds, per game, the env's seed (``env_seed``), its arguments (``env_kwargs``) and every action
(``actions``, the random opening's included); this module resets the env with that seed and
plays the actions again, so each position shown is the env's own (Thin Ice's physics
included: the seed fixes the hand tremor).  Records written before the actions were kept are
refused with a line that says so.

    # a static replay (JSON + pictures) of one recorded game, for a web page with no server
    python -m polarzoo.baselines.play.replay export runs/eval-.../games.jsonl --game 3 --out replays/
    # record a new game between two agents and export it
    python -m polarzoo.baselines.play.replay record --env fire_and_ice_v0 --agents pretrained heuristic --out replays/

The page that shows such a file is ``replay.js`` (served by ``polarzoo-web``, copied into the
documentation site).
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.cli.runs import HelpFormatter, atomic_write, prog_name, writes_fail_in_one_line
from polarzoo.baselines.play.board import picture_jpeg, position, web_games
from polarzoo.baselines.play.turns import next_live_agent, outcome_line
from polarzoo.envs import ENVIRONMENTS, GAMES, table_kwargs
from polarzoo.envs.utils import loads_json


class ReplayError(ValueError):
    """A record that cannot be replayed (one line that names the problem)."""


def read_records(text: str, source: str = "games.jsonl") -> list[dict[str, Any]]:
    """The game records of a ``games.jsonl`` text, in file order.  A line that is not a JSON
    object is refused with its line number; a file with no game record at all too."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:  # the one safe reader: no RecursionError or 4,300-digit ValueError from a crafted line
            record = loads_json(line, what=f"{source}:{number}", max_bytes=16 * 1024 * 1024, max_depth=16)
        except ValueError as error:
            raise ReplayError(str(error)) from None
        if not isinstance(record, dict):
            raise ReplayError(f"{source}:{number}: not a game record (a JSON object per line)")
        record["_line"] = number
        records.append(record)
    if not records:
        raise ReplayError(f"{source}: no game records in it")
    return records


def record_label(record: dict[str, Any]) -> str:
    """``"game 3: pretrained (fire) vs heuristic, win"``: a record in a list of games."""
    if "seats" in record:
        who = " vs ".join(map(str, record["seats"]))
    else:
        who = f"{record.get('agent', '?')} (seat {record.get('agent_seat', '?')}) vs {record.get('opponent', '?')}"
    outcome = record.get("result") or ("points " + "/".join(f"{p:g}" for p in record["points"]) if "points" in record else "")
    where = f"line {record['_line']}: " if "_line" in record else ""
    return f"{where}game {record.get('game', '?')}, {who}" + (f", {outcome}" if outcome else "")


def record_env(record: dict[str, Any], env_id: str | None = None) -> tuple[str, dict[str, Any], int, list[int]]:
    """``(env id, env kwargs, env seed, actions)`` of a record; ``env_id`` for records that do not
    name their env (older league files).  :class:`ReplayError` when something is missing."""
    env_id = record.get("env") or env_id
    where = f"line {record.get('_line', '?')}"
    if env_id is None:
        raise ReplayError(f"{where}: the record does not name its env; say which (--env)")
    if not isinstance(env_id, str) or env_id not in GAMES:
        raise ReplayError(f"{where}: {str(env_id)[:80]!r} has no replay viewer; replays are for {', '.join(web_games())}")
    if "actions" not in record or "env_seed" not in record:
        raise ReplayError(
            f"{where}: the record has no moves (written before games.jsonl kept them); evaluate the agents again to watch their games"
        )
    kwargs = record.get("env_kwargs") or {}
    actions, seed = record["actions"], record["env_seed"]
    if (
        not isinstance(kwargs, dict)
        or not isinstance(actions, list)
        or not all(isinstance(a, int) and not isinstance(a, bool) for a in actions)
    ):
        raise ReplayError(f"{where}: damaged record (env_kwargs must be an object, actions a list of integers)")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise ReplayError(f"{where}: damaged record (env_seed must be a non-negative integer, got {str(seed)[:40]!r})")
    if len(actions) > MAX_ACTIONS:
        raise ReplayError(f"{where}: damaged record ({len(actions):,} actions; no game of these has more than {MAX_ACTIONS:,})")
    return env_id, kwargs, seed, actions


#: more actions than any game of these envs plays (their ply caps are far below)
MAX_ACTIONS = 10_000


def record_replay_env(record: dict[str, Any], env_id: str | None = None) -> tuple[Any, int, list[int]]:
    """The env of a record (made with its arguments, not yet reset), its seed and its actions;
    :class:`ReplayError` for arguments the env refuses."""
    env_id, kwargs, seed, actions = record_env(record, env_id)
    try:
        env = ENVIRONMENTS[env_id].raw_env(**kwargs)
    except (TypeError, ValueError) as problem:
        raise ReplayError(
            f"line {record.get('_line', '?')}: env_kwargs {json.dumps(kwargs)[:80]} do not make a "
            f"{env_id} ({str(problem).splitlines()[0][:120] if str(problem) else type(problem).__name__})"
        ) from None
    return env, seed, actions


def replay(record: dict[str, Any], env_id: str | None = None, picture: Callable[[Any, int], str] | None = None) -> dict[str, Any]:
    """Every position of a recorded game: ``{"env", "title", "seats", "result", "frames"}``, each
    frame ``{"ply", "player", "notation", "status", "svg" | "picture", ...}`` (frame 0 is the start;
    frame k follows the k-th action).  Frames of a game drawn as pictures (Thin Ice) carry ``picture``: what ``picture(env, ply)``
    returns (a URL), and the piles' table of :func:`~polarzoo.baselines.play.board.position`."""
    env, seed, actions = record_replay_env(record, env_id)
    env_id = env.metadata["name"]
    try:
        env.reset(seed=seed)
        totals = {agent: 0.0 for agent in env.possible_agents}
        frames = [_frame(env, 0, None, None, picture)]
        for ply, action in enumerate(actions, 1):
            agent = next_live_agent(env, totals)
            if agent is None:
                raise ReplayError(f"line {record.get('_line', '?')}: the game ended before action {ply} of {len(actions)}")
            mask = env.observe(agent)["action_mask"]
            if not (0 <= action < len(mask)) or not mask[action]:
                raise ReplayError(
                    f"line {record.get('_line', '?')}: action {action} (ply {ply}) is illegal for {agent} here: "
                    "the record is not from this game or version"
                )
            notation = env.action_to_notation(action)
            env.step(action)
            frames.append(_frame(env, ply, agent, notation, picture))
        over = next_live_agent(env, totals) is None
        result = outcome_line(env, totals) if over else f"unfinished after {len(actions)} actions"
        illegal = record.get("illegal")
        if any(illegal) if isinstance(illegal, list) else bool(illegal):
            result += " (the record ends with an illegal move, which lost)"
        return {
            "env": env_id,
            "title": record_label(record),
            "seats": list(env.possible_agents),
            "lineup": record.get("seats") or _lineup(record, env.possible_agents),
            "result": result,
            "frames": frames,
        }
    finally:
        env.close()


def _lineup(record: dict[str, Any], seats: list[str]) -> list[str]:
    lineup = [str(record.get("opponent", "?"))] * len(seats)
    seat = record.get("agent_seat")
    if isinstance(seat, int) and 0 <= seat < len(seats):
        lineup[seat] = str(record.get("agent", "?"))
    return lineup


def _frame(
    env: Any, ply: int, player: str | None, notation: str | None, picture: Callable[[Any, int], str] | None
) -> dict[str, Any]:
    frame = {"ply": ply, "player": player, "notation": notation, **position(env)}
    if GAMES[env.metadata["name"]].view == "piles" and picture is not None:
        frame["picture"] = picture(env, ply)
    return frame


#: the viewer's files (shared with the web app's /replay page)
VIEWER = Path(__file__).parent / "web_static"


def replay_script(name: str, data_json: str) -> str:
    """``<name>.js``: the replay as a script that hands it to ``replay.js`` (a page opened from
    the disk may not fetch a JSON file; it may load a script)."""
    return f"PolarzooReplay.register({json.dumps(name)}, {data_json}, document.currentScript.src);\n"


def export(record: dict[str, Any], out: Path, name: str, env_id: str | None = None) -> Path:
    """A replay a web page shows with ``replay.js`` and no server: ``out/name.json`` (the data),
    ``out/name.js`` (the data as a script), ``out/name.html`` (a page that plays it: open it in a
    browser, or copy its two lines into your own page), ``out/replay.js`` and ``out/style.css``;
    for a game drawn as pictures (Thin Ice), ``out/name/NNN.jpg``.  Returns the JSON's path."""
    out.mkdir(parents=True, exist_ok=True)
    pictures = out / name

    def picture(env: Any, ply: int) -> str:
        pictures.mkdir(exist_ok=True)
        atomic_write(pictures / f"{ply:03d}.jpg", picture_jpeg(env))
        return f"{name}/{ply:03d}.jpg"

    data = replay(record, env_id, picture)
    text = json.dumps(data, separators=(",", ":"))
    path = out / f"{name}.json"
    atomic_write(path, text)
    atomic_write(out / f"{name}.js", replay_script(name, text))
    for viewer in ("replay.js", "style.css"):
        atomic_write(out / viewer, (VIEWER / viewer).read_text())
    title = html.escape(f"{GAMES[data['env']].title}: {data['title']}")
    atomic_write(out / f"{name}.html", STATIC_PAGE.format(title=title, name=html.escape(name), script=html.escape(f"{name}.js")))
    return path


#: The page ``export`` writes beside a replay: these two script lines play it in any page.
STATIC_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>{title}</title><link rel="stylesheet" href="style.css"></head>
<body>
<div class="polarzoo-replay" data-replay="{name}"></div>
<script src="replay.js"></script>
<script src="{script}"></script>
</body>
</html>
"""


def record_game(
    env_id: str, agent_specs: list[str], seed: int, env_kwargs: dict[str, Any] | None = None, opening_plies: int = 0
) -> dict[str, Any]:
    """Play one game between agents (one spec per seat; the last repeats for more seats) and
    return its record, as ``evaluate`` writes them."""
    env = ENVIRONMENTS[env_id].raw_env(**(env_kwargs or {}))
    env.reset(seed=seed)
    specs = list(agent_specs) + [agent_specs[-1]] * (len(env.possible_agents) - len(agent_specs))
    agents = {agent: make_agent(spec, env_id) for agent, spec in zip(env.possible_agents, specs)}
    rng, opening = np.random.default_rng(seed + 1_000_003), np.random.default_rng(seed)
    totals = {agent: 0.0 for agent in env.possible_agents}
    actions: list[int] = []
    while (agent := next_live_agent(env, totals)) is not None:
        if len(actions) < opening_plies:
            action = int(opening.choice(np.flatnonzero(env.observe(agent)["action_mask"])))
        else:
            action = int(agents[agent].act(env, agent, rng))
        actions.append(action)
        env.step(action)
    named = (env.result() if hasattr(env, "result") else {}).get("points") or {}
    points = [float(named.get(a, totals[a])) for a in env.possible_agents]
    env.close()
    return {
        "env": env_id,
        "seats": specs,
        "game": 0,
        "points": points,
        "length": len(actions),
        "env_seed": seed,
        "env_kwargs": env_kwargs or {},
        "actions": actions,
    }


def _main_writes(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.play.replay"), description=__doc__, formatter_class=HelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, help="export a recorded game, or record a new one")
    exporting = commands.add_parser(
        "export",
        help="a recorded game as a static replay (NAME.json, NAME.js, NAME.html: open the page)",
        formatter_class=HelpFormatter,
    )
    exporting.add_argument("games", type=Path, help="a games.jsonl")
    exporting.add_argument("--game", type=int, default=0, help="which record (0 = the file's first)")
    exporting.add_argument("--env", choices=web_games(), default=None, help="the env, for records that do not name it")
    exporting.add_argument("--out", type=Path, default=Path("replays"), help="the folder of the replay files")
    exporting.add_argument("--name", default=None, help="file name without .json (default: the env id)")
    recording = commands.add_parser(
        "record", help="play one game between agents and export its replay", formatter_class=HelpFormatter
    )
    recording.add_argument("--env", choices=web_games(), default=web_games()[0], help="the game")
    recording.add_argument(
        "--agents", nargs="+", default=["pretrained", "heuristic"], help="one agent spec per seat (the last repeats)"
    )
    recording.add_argument("--players", type=int, default=None, help="the table size, for a game with a range (Thin Ice: 2..6)")
    recording.add_argument("--seed", type=int, default=0, help="the game's seed")
    recording.add_argument("--opening", type=int, default=0, help="uniformly random moves before the agents play")
    recording.add_argument("--out", type=Path, default=Path("replays"), help="the folder of the replay files")
    recording.add_argument("--name", default=None, help="file name without .json (default: the env id)")
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            try:
                text = args.games.read_text()
            except OSError as error:
                parser.error(f"cannot read {args.games}: {error.strerror or error}")
            records = read_records(text, str(args.games))
            if not 0 <= args.game < len(records):
                parser.error(f"--game {args.game}: {args.games} has {len(records)} records (0..{len(records) - 1})")
            record = records[args.game]
        else:
            try:
                kwargs = table_kwargs(args.env, args.players)
            except ValueError as error:
                parser.error(f"--{error}")
            record = record_game(args.env, args.agents, args.seed, kwargs, args.opening)
        name = args.name or record.get("env") or args.env
        try:
            path = export(record, args.out, name, args.env)
        except OSError as error:
            sys.exit(f"error: cannot write the replay to {args.out}: {error.strerror or error}")
    except (ValueError, FileNotFoundError) as error:  # ReplayError included
        sys.exit(f"error: {error}")
    print(f"written: {path}")


main = writes_fail_in_one_line(_main_writes)


if __name__ == "__main__":
    main()
