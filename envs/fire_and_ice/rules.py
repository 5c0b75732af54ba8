"""Fire & Ice rules core: pure numpy, no RL framework imports.

The board is 49 holes, ``hole = 7 * island + (position - 1)`` (islands A..G = 0..6, positions
1..7).  Colours are ``FIRE = 0`` and ``ICE = 1``; the board array stores ``colour + 1`` for a peg
and ``EMPTY = 0`` for an empty hole.  The rules speak colours; the environments map agents to
colours.

Everything derived from the Fano-plane geometry (lines, move tables) is computed once at import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.board_rules import BoardState, move_mask, split_move, winner_returns

# --------------------------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------------------------
NUM_ISLANDS = 7
NUM_POSITIONS = 7
NUM_HOLES = NUM_ISLANDS * NUM_POSITIONS
NUM_MOVE_ACTIONS = NUM_HOLES * NUM_HOLES  # 2401, action = 49 * from + to
PASS = NUM_MOVE_ACTIONS  # 2401
NUM_ACTIONS = NUM_MOVE_ACTIONS + 1  # 2402

FIRE, ICE = 0, 1
COLOUR_NAMES = ("fire", "ice")
EMPTY = 0
PEGS_PER_PLAYER = 25
CENTRE_HOLE = 24  # D4
ISLAND_LETTERS = "ABCDEFG"

#: The seven lines of the Fano plane, as 0-based position (or island) indices.
#: sides {1,2,5} {1,3,7} {5,6,7}; medians {1,4,6} {3,4,5} {2,4,7}; circle {2,3,6}.
LINES: NDArray[np.intp] = (
    np.array(
        [[1, 2, 5], [1, 3, 7], [5, 6, 7], [1, 4, 6], [3, 4, 5], [2, 4, 7], [2, 3, 6]],
        dtype=np.intp,
    )
    - 1
)
NUM_LINES = len(LINES)

#: HOLE_LINES[island, line] = the three hole indices of that line on that island.
HOLE_LINES: NDArray[np.intp] = np.arange(NUM_ISLANDS)[:, None, None] * NUM_POSITIONS + LINES[None, :, :]


def _move_destinations() -> NDArray[np.intp]:
    """MOVE_DESTINATIONS[hole] = the 12 holes a peg on ``hole`` may move to (if empty)."""
    table = np.empty((NUM_HOLES, 12), dtype=np.intp)
    for hole in range(NUM_HOLES):
        island, position = divmod(hole, NUM_POSITIONS)
        same_island = [island * NUM_POSITIONS + q for q in range(NUM_POSITIONS) if q != position]
        same_position = [j * NUM_POSITIONS + position for j in range(NUM_ISLANDS) if j != island]
        table[hole] = same_island + same_position
    return table


MOVE_DESTINATIONS: NDArray[np.intp] = _move_destinations()
#: MOVE_ACTIONS[hole, k] = the action index of the move hole -> MOVE_DESTINATIONS[hole, k].
MOVE_ACTIONS: NDArray[np.intp] = np.arange(NUM_HOLES)[:, None] * NUM_HOLES + MOVE_DESTINATIONS
#: IS_GEOMETRIC_MOVE[action]: whether a move action connects two holes by the movement rule.
IS_GEOMETRIC_MOVE: NDArray[np.bool_] = np.zeros(NUM_ACTIONS, dtype=bool)
IS_GEOMETRIC_MOVE[MOVE_ACTIONS.ravel()] = True


# --------------------------------------------------------------------------------------------
# Notation
# --------------------------------------------------------------------------------------------
def hole_name(hole: int) -> str:
    """``24 -> "D4"``."""
    if not 0 <= hole < NUM_HOLES:
        raise ValueError(f"hole {hole} out of range 0..{NUM_HOLES - 1}")
    island, position = divmod(int(hole), NUM_POSITIONS)
    return f"{ISLAND_LETTERS[island]}{position + 1}"


_HOLE_RE = re.compile(r"^\s*([A-Ga-g])([1-7])\s*$")


def hole_from_name(name: str) -> int:
    """``"D4" -> 24``."""
    match = _HOLE_RE.match(name)
    if not match:
        raise ValueError(f"{name!r} is not a hole: expected an island A-G and a position 1-7, e.g. 'D4'")
    return ISLAND_LETTERS.index(match.group(1).upper()) * NUM_POSITIONS + int(match.group(2)) - 1


def action_to_notation(action: int) -> str:
    """``action -> "D4-A4"`` or ``"pass"``."""
    action = int(action)
    if action == PASS:
        return "pass"
    if not 0 <= action < NUM_MOVE_ACTIONS:
        raise ValueError(f"action {action} out of range 0..{PASS}")
    source, destination = divmod(action, NUM_HOLES)
    return f"{hole_name(source)}-{hole_name(destination)}"


def notation_to_action(text: str) -> int:
    """``"D4-A4" -> action`` (``"pass"`` -> PASS). Case-insensitive; ``x`` also separates."""
    squares = split_move(text, "'D4-A4'")
    if squares is None:
        return PASS
    return hole_from_name(squares[0]) * NUM_HOLES + hole_from_name(squares[1])


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------
@dataclass(eq=False)
class State(BoardState):
    """A Fire & Ice position.

    Attributes:
        board: int8 (49,), ``EMPTY`` or ``colour + 1``.
        to_move: colour to move.
        supply: int16 (2,), pegs left in each colour's supply.
        moves_made: number of completed moves (passes not counted).
        plies: number of actions taken (moves and passes).
        winner: winning colour, or -1 while the game goes on.
        last_action: last action taken, or -1.
    """

    board: NDArray[np.int8] = field(default_factory=lambda: np.zeros(NUM_HOLES, dtype=np.int8))
    to_move: int = FIRE
    supply: NDArray[np.int16] = field(default_factory=lambda: np.array([PEGS_PER_PLAYER, PEGS_PER_PLAYER], dtype=np.int16))
    moves_made: int = 0
    plies: int = 0
    winner: int = -1
    last_action: int = -1

    def copy(self) -> State:
        return State(
            self.board.copy(),
            self.to_move,
            self.supply.copy(),
            self.moves_made,
            self.plies,
            self.winner,
            self.last_action,
        )


def initial_state(
    handicap: int = 0,
    handicap_player: int = ICE,
    rng: np.random.Generator | None = None,
    handicap_holes: list[int] | None = None,
) -> State:
    """The starting position: a Fire peg on D4, plus ``handicap`` pegs of ``handicap_player``.

    Handicap pegs go on distinct islands, never on D4, at holes drawn from ``rng`` unless
    ``handicap_holes`` lists them.
    """
    if not 0 <= handicap <= NUM_ISLANDS - 1:
        raise ValueError(f"handicap must be one of 0..{NUM_ISLANDS - 1}, got {handicap!r}")
    if handicap_player not in (FIRE, ICE):
        raise ValueError(f"handicap_player must be FIRE (0) or ICE (1), got {handicap_player!r}")
    state = State()
    state.board[CENTRE_HOLE] = FIRE + 1
    state.supply[FIRE] -= 1
    if handicap_holes is not None:
        holes = [int(h) for h in handicap_holes]
        if len(holes) != handicap:
            raise ValueError(f"handicap_holes lists {len(holes)} holes but handicap={handicap}")
        islands = [h // NUM_POSITIONS for h in holes]
        if any(not 0 <= h < NUM_HOLES for h in holes):
            raise ValueError(f"handicap_holes must be in 0..{NUM_HOLES - 1}, got {holes}")
        if CENTRE_HOLE in holes:
            raise ValueError("a handicap peg may not stand on D4")
        if len(set(islands)) != len(islands):
            raise ValueError(f"handicap pegs must be on distinct islands, got {holes}")
    else:
        if handicap and rng is None:
            raise ValueError("a random handicap needs an rng (or explicit handicap_holes)")
        holes = []
        if handicap:
            assert rng is not None
            for island in rng.choice(NUM_ISLANDS, size=handicap, replace=False):
                choices = [island * NUM_POSITIONS + p for p in range(NUM_POSITIONS)]
                choices = [h for h in choices if h != CENTRE_HOLE]
                holes.append(int(choices[rng.integers(len(choices))]))
    for hole in holes:
        state.board[hole] = handicap_player + 1
    state.supply[handicap_player] -= len(holes)
    return state


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------
def legal_action_mask(state: State) -> NDArray[np.int8]:
    """int8 (2402,) mask of the legal actions; PASS is legal only when no move is."""
    legal = (state.board == state.to_move + 1)[:, None] & (state.board == EMPTY)[MOVE_DESTINATIONS]
    return move_mask(state, MOVE_ACTIONS[legal], NUM_ACTIONS, PASS)


def legal_actions(state: State) -> NDArray[np.intp]:
    """Sorted array of legal action indices."""
    return np.flatnonzero(legal_action_mask(state))


def _line_owner_table() -> NDArray[np.int8]:
    """LINE_OWNER[code] for the 3**7 fillings of a Fano plane (value 0 empty, 1 Fire, 2 Ice per
    point, ``code = sum(value[p] * 3**p)``): the colour holding a whole line, or -1."""
    values = np.array(np.unravel_index(np.arange(3**NUM_POSITIONS), (3,) * NUM_POSITIONS, order="F")).T
    owner = np.full(3**NUM_POSITIONS, -1, dtype=np.int8)
    for colour in (FIRE, ICE):
        holds_line = (values[:, LINES] == colour + 1).all(axis=2).any(axis=1)
        owner[holds_line] = colour
    return owner


#: LINE_OWNER[code]: which colour holds a line of a Fano plane filled as ``code`` (see above).
#: Two lines always meet, so at most one colour can.  Used for islands and for the island-level.
LINE_OWNER: NDArray[np.int8] = _line_owner_table()
#: POWERS_OF_THREE[p] = 3**p: a filling of a Fano plane is coded as ``sum(value[p] * 3**p)``.
POWERS_OF_THREE: NDArray[np.int64] = 3 ** np.arange(NUM_POSITIONS, dtype=np.int64)


def island_control(board: NDArray[np.int8]) -> NDArray[np.int8]:
    """The controlling colour of each island, or -1: (7,) for a board of 49 holes, (..., 7) for
    a stack of boards (..., 49)."""
    board = np.asarray(board)
    return LINE_OWNER[board.reshape(*board.shape[:-1], NUM_ISLANDS, NUM_POSITIONS) @ POWERS_OF_THREE]


def winners_from_control(control: NDArray[np.int8]) -> NDArray[np.int8]:
    """The colour whose controlled islands contain an island-line, or -1, for each row of a
    (..., 7) stack of island controls."""
    return LINE_OWNER[(np.asarray(control) + 1) @ POWERS_OF_THREE]


def winner_from_control(control: NDArray[np.int8]) -> int:
    """The colour whose controlled islands contain an island-line, or -1 (one board)."""
    # sum((c + 1) * 3**p) = sum(c * 3**p) + sum(3**p), and sum(3**p) = (3**7 - 1) / 2
    return int(LINE_OWNER[int(control.dot(POWERS_OF_THREE)) + _CONTROL_OFFSET])


_CONTROL_OFFSET = int(POWERS_OF_THREE.sum())


def winner_of(board: NDArray[np.int8]) -> int:
    """The colour controlling three islands on one island-line, or -1."""
    return winner_from_control(island_control(board))


def check_action(state: State, action: int) -> None:
    """Raise ``ValueError`` naming the action and why, if it is not legal in ``state``."""
    if state.winner >= 0:
        raise ValueError(f"the game is over ({COLOUR_NAMES[state.winner]} won); no action is legal")
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action} is out of range 0..{NUM_ACTIONS - 1}")
    if legal_action_mask(state)[action]:
        return
    mover = COLOUR_NAMES[state.to_move]
    if action == PASS:
        raise ValueError(f"illegal action {PASS} ('pass'): {mover} has a legal move, passing is not allowed")
    name = action_to_notation(action)
    source, destination = divmod(action, NUM_HOLES)
    if state.board[source] != state.to_move + 1:
        why = f"{hole_name(source)} does not hold a {mover} peg"
    elif source == destination:
        why = "a peg must move to another hole"
    elif not IS_GEOMETRIC_MOVE[action]:
        why = "the destination is neither on the same island nor at the same position"
    elif state.board[destination] != EMPTY:
        why = f"{hole_name(destination)} is not empty"
    else:  # pragma: no cover - the cases above are exhaustive
        why = "not a legal move"
    raise ValueError(f"illegal action {action} ({name!r}) for {mover}: {why}")


def apply_inplace(state: State, action: int) -> State:
    """Play ``action`` (assumed legal) on ``state`` in place and return it."""
    apply_inplace_with_control(state, action)
    return state


def apply_inplace_with_control(state: State, action: int) -> NDArray[np.int8] | None:
    """:func:`apply_inplace` that also returns the new island control (``None`` after a pass),
    so that callers needing both compute it once."""
    mover = state.to_move
    opponent = 1 - mover
    control = None
    if action != PASS:
        source, destination = divmod(action, NUM_HOLES)
        state.board[destination] = mover + 1
        if state.supply[opponent] > 0:
            state.board[source] = opponent + 1
            state.supply[opponent] -= 1
        else:
            state.board[source] = EMPTY
        state.moves_made += 1
        control = island_control(state.board)
        state.winner = winner_from_control(control)
    state.plies += 1
    state.last_action = action
    state.to_move = opponent
    return control


def winners_after(state: State, actions: NDArray[np.integer]) -> NDArray[np.int8]:
    """The winner (or -1) after each of ``actions`` (legal in ``state``), from one stack of the
    boards they leave, without making the states (a search's look at all its children)."""
    actions = np.asarray(actions, dtype=np.intp)
    winners = np.full(len(actions), state.winner, dtype=np.int8)  # a pass changes no board
    moves = actions != PASS
    if moves.any():
        sources, destinations = np.divmod(actions[moves], NUM_HOLES)
        boards = np.repeat(state.board[None], len(sources), axis=0)
        rows = np.arange(len(sources))
        opponent = 1 - state.to_move
        boards[rows, destinations] = state.to_move + 1
        boards[rows, sources] = opponent + 1 if state.supply[opponent] > 0 else EMPTY
        winners[moves] = winners_from_control(island_control(boards))
    return winners


def apply(state: State, action: int) -> State:
    """Return the state after ``action``; raises ``ValueError`` if it is illegal. Pure."""
    check_action(state, int(action))
    return apply_inplace(state.copy(), int(action))


#: per-colour returns: +1 winner, -1 loser, zeros while the game goes on
returns = winner_returns
