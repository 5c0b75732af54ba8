"""Tic-tac-toe's rules core: a state and pure functions (the interface ``mcts:N`` searches).

Cells 0..8 row by row from the top left, named a1..c3 (column letter, row number from the top);
an action is the cell to mark.  ``winner``: -1 while the game goes on, 0 / 1 the player who made
a line, 2 a draw (a full board without a line).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

NUM_CELLS = 9
DRAW = 2
COLOUR_NAMES = ("x", "o")
LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])


@dataclass
class State:
    board: NDArray[np.int8] = field(default_factory=lambda: np.full(NUM_CELLS, -1, dtype=np.int8))
    to_move: int = 0
    winner: int = -1
    plies: int = 0
    last_action: int = -1

    def copy(self) -> State:
        return State(self.board.copy(), self.to_move, self.winner, self.plies, self.last_action)


def cell_name(cell: int) -> str:
    row, col = divmod(cell, 3)
    return f"{'abc'[col]}{row + 1}"


def action_to_notation(action: int) -> str:
    if not 0 <= int(action) < NUM_CELLS:
        raise ValueError(f"action must be a whole number in 0..{NUM_CELLS - 1}; got {action}")
    return cell_name(int(action))


def notation_to_action(text: str) -> int:
    text = text.strip().lower()
    if len(text) == 2 and text[0] in "abc" and text[1] in "123":
        return (int(text[1]) - 1) * 3 + "abc".index(text[0])
    raise ValueError(f"{text!r} is not a cell: a1..c3 (column a-c, row 1-3)")


def legal_action_mask(state: State) -> NDArray[np.int8]:
    if state.winner >= 0:
        return np.zeros(NUM_CELLS, dtype=np.int8)
    return (state.board < 0).astype(np.int8)


def explain_illegal(state: State, action: int) -> str:
    if state.winner >= 0:
        return "the game is over"
    return f"{cell_name(action)} is taken"


def apply_inplace(state: State, action: int) -> State:
    state.board[action] = state.to_move
    if any((state.board[line] == state.to_move).all() for line in LINES):
        state.winner = state.to_move
    elif (state.board >= 0).all():
        state.winner = DRAW
    state.to_move = 1 - state.to_move
    state.plies += 1
    state.last_action = int(action)
    return state


def returns(state: State) -> NDArray[np.float32]:
    result = np.zeros(2, dtype=np.float32)
    if state.winner in (0, 1):
        result[state.winner], result[1 - state.winner] = 1.0, -1.0
    return result
