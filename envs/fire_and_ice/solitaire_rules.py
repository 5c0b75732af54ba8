"""Fire & Ice Solitaire rules: pure numpy, reusing the Fire & Ice geometry (``rules``).

14 Fire and 14 Ice pegs on 28 random holes.  Colours alternate, Fire first; the colour to move
moves one of its pegs by the two-player movement rule, but only onto a hole holding a peg of the
other colour, which is captured (removed); the vacated hole stays empty.  One peg left wins
(27 captures; the last peg is Fire's); a colour to move without a capture before that loses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.fire_and_ice.rules import (
    EMPTY,
    FIRE,
    ICE,
    MOVE_ACTIONS,
    MOVE_DESTINATIONS,
    NUM_HOLES,
    NUM_MOVE_ACTIONS,
    action_to_notation,
    hole_name,
)

NUM_ACTIONS = NUM_MOVE_ACTIONS  # 2401: no PASS in solitaire
PEGS_PER_COLOUR = 14
TOTAL_CAPTURES = 2 * PEGS_PER_COLOUR - 1


@dataclass
class SolitaireState:
    """board: int8 (49,) EMPTY / colour + 1; to_move: colour; captures: captures made."""

    board: NDArray[np.int8]
    to_move: int = FIRE
    captures: int = 0

    def copy(self) -> SolitaireState:
        return SolitaireState(self.board.copy(), self.to_move, self.captures)

    @property
    def pegs_left(self) -> int:
        return int(np.count_nonzero(self.board))


def deal(rng: np.random.Generator, pegs_per_colour: int = PEGS_PER_COLOUR) -> SolitaireState:
    """14 Fire and 14 Ice pegs on distinct random holes, Fire to move."""
    holes = rng.choice(NUM_HOLES, size=2 * pegs_per_colour, replace=False)
    board = np.zeros(NUM_HOLES, dtype=np.int8)
    board[holes[:pegs_per_colour]] = FIRE + 1
    board[holes[pegs_per_colour:]] = ICE + 1
    return SolitaireState(board)


def legal_action_mask(state: SolitaireState) -> NDArray[np.int8]:
    """int8 (2401,): captures of the colour to move (``49 * from + to``)."""
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if state.pegs_left <= 1:
        return mask
    own = state.board == state.to_move + 1
    other = state.board == (1 - state.to_move) + 1
    mask[MOVE_ACTIONS[own[:, None] & other[MOVE_DESTINATIONS]]] = 1
    return mask


def is_won(state: SolitaireState) -> bool:
    return state.pegs_left == 1


def is_over(state: SolitaireState) -> bool:
    """Won, or the colour to move has no capture."""
    return is_won(state) or not legal_action_mask(state).any()


def explain_illegal(state: SolitaireState, action: int) -> str:
    if not 0 <= action < NUM_ACTIONS:
        return f"action {action} is out of range 0..{NUM_ACTIONS - 1}"
    source, destination = divmod(action, NUM_HOLES)
    mover = ("fire", "ice")[state.to_move]
    if state.board[source] != state.to_move + 1:
        why = f"{hole_name(source)} does not hold a {mover} peg"
    elif destination not in MOVE_DESTINATIONS[source]:
        why = "the destination is neither on the same island nor at the same position"
    elif state.board[destination] != (1 - state.to_move) + 1:
        why = f"{hole_name(destination)} holds no peg of the other colour (every solitaire move captures)"
    else:  # pragma: no cover - exhaustive above
        why = "not a legal capture"
    return f"illegal action {action} ({action_to_notation(action)!r}) for {mover}: {why}"


def apply_inplace(state: SolitaireState, action: int) -> SolitaireState:
    source, destination = divmod(int(action), NUM_HOLES)
    state.board[destination] = state.board[source]
    state.board[source] = EMPTY
    state.to_move = 1 - state.to_move
    state.captures += 1
    return state


def apply(state: SolitaireState, action: int) -> SolitaireState:
    """The state after ``action``; ``ValueError`` if it is not a legal capture. Pure."""
    if not (0 <= action < NUM_ACTIONS and legal_action_mask(state)[action]):
        raise ValueError(explain_illegal(state, int(action)))
    return apply_inplace(state.copy(), action)


__all__ = [
    "FIRE",
    "ICE",
    "NUM_ACTIONS",
    "PEGS_PER_COLOUR",
    "TOTAL_CAPTURES",
    "SolitaireState",
    "deal",
    "legal_action_mask",
    "is_won",
    "is_over",
    "explain_illegal",
    "apply",
    "apply_inplace",
]
