"""
# Tic-tac-toe (test-only)

| Agents | `["x", "o"]` (`"x"` acts first) |
|---|---|
| Action Space | `Discrete(9)`: the cell to mark, row by row from a1 |
| Observation | `{"observation": (3, 3, 2) int8 (own marks, the opponent's), "action_mask": (9,) int8}` |
| Rewards | +1 for a line, -1 for the other player, 0 each for a draw |

Written to polarzoo's game interface (a rules core, :class:`polarzoo.envs.utils.TurnBasedAECEnv`
and a ``GameInfo``) to show that a new game needs nothing outside its folder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from polarzoo.envs.utils import TurnBasedAECEnv, default_wrappers, turn_based_parallel
from tests.games.tic_tac_toe import rules

CELL, MARGIN = 100, 10


class raw_env(TurnBasedAECEnv):
    metadata = {
        "name": "tic_tac_toe_v0",
        "render_modes": ["ansi", "rgb_array", "human"],
        "is_parallelizable": False,
        "render_fps": 2,
    }
    num_actions = rules.NUM_CELLS
    rules = rules

    def __init__(self, render_mode: str | None = None) -> None:
        self.possible_agents = list(rules.COLOUR_NAMES)
        self._init_spaces(spaces.Box(0, 1, (3, 3, 2), dtype=np.int8))
        super().__init__(render_mode)
        self.state = rules.State()

    def action_to_notation(self, action: int) -> str:
        return rules.action_to_notation(action)

    def notation_to_action(self, text: str) -> int:
        return rules.notation_to_action(text)

    def _new_game(self, options: dict[str, Any] | None) -> None:
        self.state = rules.State()

    def _current_seat(self) -> int:
        return self.state.to_move

    def _legal_mask(self) -> NDArray[np.int8]:
        return rules.legal_action_mask(self.state)

    def _explain_illegal(self, action: int) -> str:
        return rules.explain_illegal(self.state, action)

    def _apply(self, action: int) -> None:
        rules.apply_inplace(self.state, action)

    def _outcome(self) -> NDArray[np.float32] | None:
        return rules.returns(self.state) if self.state.winner >= 0 else None

    def _plies(self) -> int:
        return self.state.plies

    def _observation(self, seat: int) -> NDArray[np.int8]:
        board = self.state.board.reshape(3, 3)
        return np.stack([board == seat, board == 1 - seat], axis=-1).astype(np.int8)

    def result(self) -> dict[str, Any]:
        winner = self.state.winner
        return {"winner": rules.COLOUR_NAMES[winner] if winner in (0, 1) else None}

    def status(self) -> str:
        s = self.state
        if s.winner == rules.DRAW:
            return f"draw after {s.plies} moves"
        if s.winner >= 0:
            return f"{rules.COLOUR_NAMES[s.winner]} wins after {s.plies} moves"
        last = f", last {rules.cell_name(s.last_action)}" if s.last_action >= 0 else ""
        return f"{rules.COLOUR_NAMES[s.to_move]} to move (move {s.plies + 1}{last})"

    def describe(self, pictures: bool = True) -> dict[str, Any]:
        cells = []
        for cell in range(rules.NUM_CELLS):
            row, col = divmod(cell, 3)
            mark = {0: "x", 1: "o"}.get(int(self.state.board[cell]), "")
            cells.append(
                f'<g class="cell" data-cell="{cell}" data-name="{rules.cell_name(cell)}" '
                f'transform="translate({MARGIN + col * CELL},{MARGIN + row * CELL})">'
                f'<rect width="{CELL - 4}" height="{CELL - 4}" fill="#dde6f0"/>'
                f'<text x="48" y="66" font-size="56" text-anchor="middle">{mark}</text></g>'
            )
        size = 2 * MARGIN + 3 * CELL
        return {
            "status": self.status(),
            "svg": f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" '
            f'class="board tic-tac-toe">{"".join(cells)}</svg>',
        }

    def move_parts(self, action: int) -> dict[str, Any]:
        return {**super().move_parts(action), "to": int(action)}  # a placement: a target, no source

    def _render_ansi(self) -> str:
        marks = {-1: ".", 0: "x", 1: "o"}
        rows = [" ".join(marks[int(v)] for v in self.state.board[r * 3 : (r + 1) * 3]) for r in range(3)]
        return "\n".join([self.status(), *rows])

    def _render_rgb(self) -> NDArray[np.uint8]:
        frame = np.full((90, 90, 3), 230, dtype=np.uint8)
        for cell in range(rules.NUM_CELLS):
            row, col = divmod(cell, 3)
            value = int(self.state.board[cell])
            if value >= 0:
                frame[row * 30 + 5 : row * 30 + 25, col * 30 + 5 : col * 30 + 25] = (200, 40, 40) if value == 0 else (40, 40, 200)
        return frame


def env(**kwargs: Any) -> Any:
    return default_wrappers(raw_env(**kwargs))


def parallel_env(**kwargs: Any) -> Any:
    return turn_based_parallel(env(**kwargs))
