"""Play Fire & Ice or Go with the Floe in a window (pygame): click, then click.

Click one of your pegs / tokens (it is ringed in yellow; its legal destinations get green
dots), then a destination.  Keys: ``p`` pass (when it is the only move it is played for you),
``u`` undo (your last move and the replies), ``h`` hint (the opponent agent's choice, ringed
in blue), ``n`` hole numbers on / off (Fire & Ice: a hole is its island's letter + the number),
``q`` or closing the window quits.  The last move is marked by the renderer.  Used by
``python -m polarzoo.baselines.play --window``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.play.turns import outcome_line, play_to_the_end
from polarzoo.envs import ENVIRONMENTS, GAMES


def window_games() -> tuple[str, ...]:
    """The games played in a window: those whose facts say so (``GameInfo.window``: the env has
    ``cell_centres()`` and ``cell_at(x, y)``, and its moves join cells)."""
    return tuple(env_id for env_id, info in GAMES.items() if info.window)


class _Board:
    """Where cells are on the picture and how (from, to) pairs map to actions: the env's own
    ``cell_centres``, ``cell_at`` and ``move_parts``."""

    def __init__(self, env_id: str, env: Any) -> None:
        if env_id not in window_games():
            raise ValueError(f"window play is for {', '.join(window_games())}; use the terminal for {env_id}")
        self.env_id = env_id
        self.centres = env.cell_centres()
        self.cell_at = env.cell_at
        self.parts = env.move_parts

    def ends(self, action: int) -> tuple[int, int]:
        parts = self.parts(action)
        return parts.get("from", -1), parts.get("to", -1)

    def moves(self, mask: np.ndarray) -> dict[tuple[int, int], int]:
        moves = {}
        for action in map(int, np.flatnonzero(mask)):
            source, target = self.ends(action)
            if target >= 0:
                moves[(source, target)] = action
        return moves

    def passes(self, mask: np.ndarray) -> list[int]:
        """The legal actions that move nothing (a pass)."""
        return [int(a) for a in np.flatnonzero(mask) if self.ends(int(a))[1] < 0]


class WindowGame:
    """One game between a person (mouse) and an agent.

    ``events``: an iterable of pygame events used instead of the real event queue (tests);
    ``on_frame``: called with each frame shown (a uint8 (H, W, 3) array)."""

    def __init__(
        self,
        env_id: str,
        human: str,
        opponent_spec: str,
        seed: int = 0,
        events: Iterable[Any] | None = None,
        on_frame: Callable[[np.ndarray], None] | None = None,
    ) -> None:
        from polarzoo.envs.utils import require_pygame

        self.pygame = require_pygame()
        self.env = ENVIRONMENTS[env_id].raw_env(render_mode="rgb_array")
        self.board = _Board(env_id, self.env)
        self.env.reset(seed=seed)
        if human not in self.env.possible_agents:
            raise ValueError(f"human must be one of {self.env.possible_agents}, got {human!r}")
        self.human, self.opponent = human, make_agent(opponent_spec, env_id)
        self.rng = np.random.default_rng(seed)
        self.scripted = None if events is None else iter(events)
        self.on_frame = on_frame
        self.selected, self.hint, self.message = -1, -1, ""
        self.history: list[dict[str, Any]] = []  # snapshots before each of the person's moves
        self.screen: Any = None

    # ---- drawing ---------------------------------------------------------------------------
    def draw(self) -> np.ndarray:
        pygame = self.pygame
        frame = self.env.render()
        surface = pygame.surfarray.make_surface(np.transpose(frame, (1, 0, 2)))
        if self.env.agents and self.env.agent_selection == self.human:
            moves = self.board.moves(self.env.observe(self.human)["action_mask"])
            if self.selected >= 0:
                pygame.draw.circle(surface, (250, 220, 40), tuple(self.board.centres[self.selected]), 15, width=3)
                for source, target in moves:
                    if source == self.selected:
                        pygame.draw.circle(surface, (40, 200, 60), tuple(self.board.centres[target]), 6)
            if self.hint >= 0:
                source, target = self.board.ends(self.hint)
                for cell in (source, target):
                    if cell >= 0:
                        pygame.draw.circle(surface, (60, 120, 250), tuple(self.board.centres[cell]), 17, width=3)
        if self.message:
            font = pygame.font.Font(None, 24)
            # above the status line: the top left holds the picture's colour key
            surface.blit(font.render(self.message, True, (250, 250, 120)), (12, frame.shape[0] - 58))
        picture = np.transpose(pygame.surfarray.array3d(surface), (1, 0, 2)).copy()
        if self.scripted is None:
            if self.screen is None:
                pygame.display.init()
                pygame.display.set_caption(f"{self.board.env_id}: you play {self.human}")
                self.screen = pygame.display.set_mode((picture.shape[1], picture.shape[0]))
            self.screen.blit(surface, (0, 0))
            pygame.display.flip()
        if self.on_frame is not None:
            self.on_frame(picture)
        return picture

    # ---- input -----------------------------------------------------------------------------
    def next_event(self) -> Any:
        if self.scripted is not None:
            return next(self.scripted, None)
        # A wait with a timeout, so that Ctrl-C (handled between Python steps) always ends the game.
        while True:
            event = self.pygame.event.wait(200)
            if event.type != self.pygame.NOEVENT:
                return event

    def human_move(self) -> int | None:
        """The person's action; ``None`` after an undo; raises ``StopIteration`` to quit."""
        pygame, env = self.pygame, self.env
        mask = env.observe(self.human)["action_mask"]
        moves = self.board.moves(mask)
        passes = self.board.passes(mask)
        if not moves and passes:
            self.message = "no move: you pass"
            return passes[0]
        while True:
            self.draw()
            event = self.next_event()
            if event is None or event.type == pygame.QUIT:
                raise StopIteration
            if event.type == pygame.KEYDOWN:
                key = getattr(event, "unicode", "") or ""
                if key == "q":
                    raise StopIteration
                if key == "u":
                    if self.history:
                        self.env.restore(self.history.pop())
                        self.selected, self.hint, self.message = -1, -1, "undone"
                        return None
                    self.message = "nothing to undo"
                elif key == "h":
                    self.hint = int(self.opponent.act(copy.deepcopy(env), self.human, np.random.default_rng(0)))
                    self.message = f"hint: {env.action_to_notation(self.hint)}"
                elif key == "n" and hasattr(env, "render_hole_labels"):
                    env.render_hole_labels = not env.render_hole_labels
                    self.message = "hole numbers shown" if env.render_hole_labels else "hole numbers hidden"
                elif key == "p":
                    if passes:
                        return passes[0]
                    self.message = "you cannot pass: you have a move"
                continue
            if event.type != pygame.MOUSEBUTTONDOWN:
                continue
            cell = self.board.cell_at(*event.pos)
            if self.selected >= 0 and (self.selected, cell) in moves:
                action = moves[(self.selected, cell)]
                self.history.append(env.snapshot())
                self.selected, self.hint, self.message = -1, -1, ""
                return action
            if any(source == cell for source, _ in moves):
                self.selected, self.message = cell, ""
            else:
                self.selected = -1
                self.message = "click one of your pieces that can move" if cell >= 0 else ""

    def _agent_move(self, agent: str) -> int:
        action = int(self.opponent.act(self.env, agent, self.rng))
        self.message = f"{agent} played {self.env.action_to_notation(action)}"
        return action

    def run(self) -> str:
        """Play to the end; returns the result line (``"... wins"``, ``"draw"`` or ``"quit"``)."""
        try:
            totals = play_to_the_end(self.env, self.human, self.human_move, self._agent_move)
        except StopIteration:
            return "quit"
        result = outcome_line(self.env, totals)
        self.message = result + " (close the window)"
        self.draw()
        if self.scripted is None:
            while self.next_event().type not in (self.pygame.QUIT, self.pygame.KEYDOWN):
                pass
        return result
