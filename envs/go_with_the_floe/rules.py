"""Go with the Floe rules core: pure numpy and Python ints, no RL framework imports.

Squares are ``sq = 8 * row + col`` on an 8x8 board whose 12 corner squares are off the board
(52 ice squares).  Colours: ``BLACK = 0`` (seals) and ``WHITE = 1`` (polar bears).  The board
array holds ``EMPTY``, ``SEAL`` or ``BEAR``; rings are a separate boolean array (a token never
stands on a ring).  Isolation is decided by a flood fill over 64-bit bitboards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.board_rules import BoardState, move_mask, split_move, winner_returns

# --------------------------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------------------------
SIZE = 8
NUM_SQUARES = SIZE * SIZE
NUM_DIRECTIONS = 8
#: (d_col, d_row) in the spec's order: N, NE, E, SE, S, SW, W, NW.
DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
ACTIONS_PER_SQUARE = 2 * NUM_DIRECTIONS
PASS = NUM_SQUARES * ACTIONS_PER_SQUARE  # 1024
NUM_ACTIONS = PASS + 1

BLACK, WHITE = 0, 1
COLOUR_NAMES = ("black", "white")
EMPTY, SEAL, BEAR = 0, 1, 2
TOKEN_OF = (SEAL, BEAR)  # the token kind each colour moves
RING_SUPPLY = 50
COLUMNS = "ABCDEFGH"


def _on_board(col: int, row: int) -> bool:
    return 0 <= col < SIZE and 0 <= row < SIZE and min(col, 7 - col) + min(row, 7 - row) >= 2


ON_BOARD: NDArray[np.bool_] = np.array([_on_board(sq % SIZE, sq // SIZE) for sq in range(NUM_SQUARES)])
NUM_ON_BOARD = int(ON_BOARD.sum())  # 52


def _target_table() -> NDArray[np.int16]:
    """TARGET[sq, d, k] = the on-board square k+1 steps from sq in direction d, else -1."""
    table = np.full((NUM_SQUARES, NUM_DIRECTIONS, 2), -1, dtype=np.int16)
    for sq in range(NUM_SQUARES):
        col, row = sq % SIZE, sq // SIZE
        for d, (dc, dr) in enumerate(DIRECTIONS):
            for k in range(2):
                c, r = col + dc * (k + 1), row + dr * (k + 1)
                if _on_board(c, r):
                    table[sq, d, k] = r * SIZE + c
    return table


TARGET: NDArray[np.int16] = _target_table()
_TARGET_LIST: list[list[tuple[int, int]]] = [
    [(int(TARGET[sq, d, 0]), int(TARGET[sq, d, 1])) for d in range(NUM_DIRECTIONS)] for sq in range(NUM_SQUARES)
]

# Bitboards (Python ints) for the isolation flood fill.
_ALL_BITS = (1 << NUM_SQUARES) - 1
_FILE_A = sum(1 << (8 * r) for r in range(SIZE))
#: Bitboards of every square off file A / off file H (shifts east / west must not wrap a rank).
NOT_FILE_A_BITS = _ALL_BITS & ~_FILE_A
NOT_FILE_H_BITS = _ALL_BITS & ~(_FILE_A << 7)
ON_BOARD_BITS = sum(1 << sq for sq in range(NUM_SQUARES) if ON_BOARD[sq])
KING_NEIGHBOURS_BITS = [sum(1 << int(t) for t in TARGET[sq, :, 0] if t >= 0) for sq in range(NUM_SQUARES)]


# --------------------------------------------------------------------------------------------
# Notation
# --------------------------------------------------------------------------------------------
def square_name(sq: int) -> str:
    if not 0 <= sq < NUM_SQUARES:
        raise ValueError(f"square {sq} out of range 0..63")
    return f"{COLUMNS[sq % SIZE]}{sq // SIZE + 1}"


_SQUARE_RE = re.compile(r"^([A-Ha-h])([1-8])$")


def square_from_name(name: str) -> int:
    match = _SQUARE_RE.match(name.strip())
    if not match:
        raise ValueError(f"{name!r} is not a square: expected a column A-H and a row 1-8, e.g. 'B2'")
    return (int(match.group(2)) - 1) * SIZE + COLUMNS.index(match.group(1).upper())


def encode_action(from_sq: int, direction: int, distance: int) -> int:
    return ACTIONS_PER_SQUARE * from_sq + 2 * direction + (distance - 1)


def decode_action(action: int) -> tuple[int, int, int]:
    """``action -> (from_sq, direction, distance)``; PASS is not decodable."""
    if not 0 <= action < PASS:
        raise ValueError(f"action {action} is not a move (moves are 0..{PASS - 1}, PASS = {PASS})")
    from_sq, rest = divmod(int(action), ACTIONS_PER_SQUARE)
    return from_sq, rest // 2, rest % 2 + 1


def action_destination(action: int) -> int:
    """The square an action ends on (-1 if that is off the board)."""
    from_sq, direction, distance = decode_action(action)
    return int(TARGET[from_sq, direction, distance - 1])


def action_to_notation(action: int, state: State | None = None) -> str:
    """``"B2-C3"``, ``"G2xF3"`` for a capture (needs ``state`` to tell), or ``"pass"``."""
    if action == PASS:
        return "pass"
    from_sq, direction, distance = decode_action(action)
    dc, dr = DIRECTIONS[direction]
    col, row = from_sq % SIZE + dc * distance, from_sq // SIZE + dr * distance
    on_board = 0 <= col < SIZE and 0 <= row < SIZE
    destination = f"{COLUMNS[col]}{row + 1}" if on_board else "??"
    capture = (
        state is not None
        and on_board
        and distance == 1
        and state.board[row * SIZE + col] == SEAL
        and state.board[from_sq] == BEAR
    )
    return f"{square_name(from_sq)}{'x' if capture else '-'}{destination}"


def notation_to_action(text: str) -> int:
    """``"B2-C3"`` / ``"G2xF3"`` / ``"pass"`` -> action index."""
    squares = split_move(text, "'B2-C3', 'G2xF3'")
    if squares is None:
        return PASS
    source, target = square_from_name(squares[0]), square_from_name(squares[1])
    dc, dr = target % SIZE - source % SIZE, target // SIZE - source // SIZE
    distance = max(abs(dc), abs(dr))
    if distance not in (1, 2) or (dc and dr and abs(dc) != abs(dr)) or (dc == 0 and dr == 0):
        raise ValueError(f"{text!r} is not a king-direction move of one or two squares")
    direction = DIRECTIONS.index((int(np.sign(dc)), int(np.sign(dr))))
    if "x" in text.lower() and distance != 1:
        raise ValueError(f"{text!r}: a capture is always to an adjacent square")
    return encode_action(source, direction, distance)


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------
@dataclass(eq=False)
class State(BoardState):
    """A Go with the Floe position.

    Attributes:
        board: int8 (64,): EMPTY, SEAL or BEAR.
        rings: bool (64,): squares holding a ring.
        to_move: colour to move.
        passes: consecutive passes just made (0, 1 or 2).
        plies: actions taken.
        winner: winning colour, or -1.
        last_action: last action, or -1.
    """

    board: NDArray[np.int8] = field(default_factory=lambda: np.zeros(NUM_SQUARES, dtype=np.int8))
    rings: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(NUM_SQUARES, dtype=bool))
    to_move: int = BLACK
    passes: int = 0
    plies: int = 0
    winner: int = -1
    last_action: int = -1

    def copy(self) -> State:
        return State(self.board.copy(), self.rings.copy(), self.to_move, self.passes, self.plies, self.winner, self.last_action)


START_SEALS = ("B2", "B7")
START_BEARS = ("G2", "G7")


def initial_state() -> State:
    state = State()
    for name in START_SEALS:
        state.board[square_from_name(name)] = SEAL
    for name in START_BEARS:
        state.board[square_from_name(name)] = BEAR
    return state


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------
def _moves(state: State) -> list[int]:
    board, rings = state.board, state.rings
    token = TOKEN_OF[state.to_move]
    is_bear = token == BEAR
    actions = []
    for from_sq in np.flatnonzero(board == token).tolist():
        base = ACTIONS_PER_SQUARE * from_sq
        for d, (near, far) in enumerate(_TARGET_LIST[from_sq]):
            if near < 0:
                continue
            near_ring = rings[near]
            near_token = board[near]
            if not near_ring and near_token == EMPTY:
                actions.append(base + 2 * d)  # step
            elif is_bear and near_token == SEAL:
                actions.append(base + 2 * d)  # capture
            if far >= 0 and not rings[far] and board[far] == EMPTY and near_token == EMPTY:
                actions.append(base + 2 * d + 1)  # slide (near empty) or jump (near ring)
    return actions


def legal_action_mask(state: State) -> NDArray[np.int8]:
    """int8 (1025,) mask of the legal actions; PASS only when nothing else is legal."""
    return move_mask(state, _moves(state) if state.winner < 0 else [], NUM_ACTIONS, PASS)


def legal_actions(state: State) -> NDArray[np.intp]:
    return np.flatnonzero(legal_action_mask(state))


def _bits(flags: NDArray[np.bool_]) -> int:
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


def spread_bits(reach, nodes, rings, not_file_a=NOT_FILE_A_BITS, not_file_h=NOT_FILE_H_BITS):
    """One move of growth in the isolation graph: ``reach`` plus every square of ``nodes`` one
    king step or one single-ring jump away from it (all bitboards, square ``sq`` = bit ``sq``).

    Written with ``<< >> & |`` only, so it runs on Python ints and, elementwise, on integer
    arrays (the compiled kernels in :mod:`~polarzoo.envs.go_with_the_floe.kernels` do the same on
    uint64, tested in lockstep).  The eight directions are written out: this is the hot loop of
    the end test."""
    A, H = not_file_a, not_file_h
    horizontal = reach | ((reach << 1) & A) | ((reach >> 1) & H)
    grown = horizontal | (horizontal << 8) | (horizontal >> 8)
    grown = grown | (((reach << 8) & rings) << 8) | (((reach >> 8) & rings) >> 8)  # N, S
    grown = grown | ((((reach << 1) & A & rings) << 1) & A) | ((((reach >> 1) & H & rings) >> 1) & H)  # E, W
    grown = grown | ((((reach << 9) & A & rings) << 9) & A) | ((((reach >> 9) & H & rings) >> 9) & H)  # NE, SW
    grown = grown | ((((reach << 7) & H & rings) << 7) & H) | ((((reach >> 7) & A & rings) >> 7) & A)  # NW, SE
    return (grown & nodes) | reach


def _flood(reach: int, nodes: int, rings: int, target: int) -> int:
    """Grow ``reach`` over ``nodes`` until it stops growing or touches ``target``."""
    while True:
        grown = spread_bits(reach, nodes, rings)
        if grown == reach or grown & target:
            return grown
        reach = grown


def bear_reach_bits(state: State, seal_sq: int) -> int:
    """Bitboard of the squares the bears can reach in the isolation graph for the seal on ``seal_sq``."""
    rings = _bits(state.rings)
    return _flood(_bits(state.board == BEAR), ON_BOARD_BITS & ~rings & ~(1 << seal_sq), rings, KING_NEIGHBOURS_BITS[seal_sq])


def reach_bits(state: State, token: int) -> int:
    """Bitboard of the squares the ``token`` kind (:data:`SEAL` / :data:`BEAR`) can ever reach in
    the isolation graph with nothing left out (agents' and networks' features)."""
    rings = _bits(state.rings)
    return _flood(_bits(state.board == token), ON_BOARD_BITS & ~rings, rings, 0)


def is_isolated(state: State, seal_sq: int) -> bool:
    """Whether the seal on ``seal_sq`` is isolated: no bear can ever come next to it."""
    return not bear_reach_bits(state, seal_sq) & KING_NEIGHBOURS_BITS[seal_sq]


def _decide_winner(state: State) -> int:
    seals = np.flatnonzero(state.board == SEAL).tolist()
    if not seals:
        return WHITE
    rings = _bits(state.rings)
    bears = _bits(state.board == BEAR)
    free = ON_BOARD_BITS & ~rings
    for seal in seals:
        target = KING_NEIGHBOURS_BITS[seal]
        nodes = free & ~(1 << seal)
        if not _flood(bears & nodes, nodes, rings, target) & target:
            return BLACK
    if state.passes >= 2:
        return BLACK
    return -1


def explain_illegal(state: State, action: int) -> str:
    """Why ``action`` is illegal in ``state`` (assumes it is)."""
    mover = COLOUR_NAMES[state.to_move]
    if state.winner >= 0:
        return f"the game is over ({COLOUR_NAMES[state.winner]} won); no action is legal"
    if not 0 <= action < NUM_ACTIONS:
        return f"action {action} is out of range 0..{NUM_ACTIONS - 1}"
    if action == PASS:
        return f"illegal action {PASS} ('pass'): {mover} has a legal move, passing is only allowed without one"
    from_sq, direction, distance = decode_action(action)
    name = action_to_notation(action, state)
    kind = "seal" if state.to_move == BLACK else "bear"
    near, far = (int(t) for t in TARGET[from_sq, direction])
    destination = near if distance == 1 else far
    if state.board[from_sq] != TOKEN_OF[state.to_move]:
        why = f"{square_name(from_sq)} holds no {kind}"
    elif destination < 0:
        why = "the move leaves the board"
    elif state.rings[destination]:
        why = f"{square_name(destination)} holds a ring (no move ends on a ring)"
    elif distance == 1:
        why = f"{square_name(destination)} is occupied" + (" (only bears capture)" if state.board[destination] == BEAR else "")
    elif state.board[near] != EMPTY:
        why = f"cannot pass over the token on {square_name(near)}"
    else:
        why = f"{square_name(destination)} is occupied"
    return f"illegal action {action} ({name!r}) for {mover}: {why}"


def check_action(state: State, action: int) -> None:
    if state.winner >= 0 or not 0 <= action < NUM_ACTIONS or not legal_action_mask(state)[action]:
        raise ValueError(explain_illegal(state, action))


def apply_inplace(state: State, action: int, decide: Any = None) -> State:
    """Play ``action`` (assumed legal) in place and return ``state``.

    ``decide(board, rings, passes) -> winner`` replaces the end test written here (the env
    passes the compiled :func:`polarzoo.envs.go_with_the_floe.kernels.decide`, tested in
    lockstep with it)."""
    if action == PASS:
        state.passes += 1
    else:
        state.passes = 0
        from_sq, direction, distance = decode_action(action)
        near, far = _TARGET_LIST[from_sq][direction]
        token = state.board[from_sq]
        state.board[from_sq] = EMPTY
        state.rings[from_sq] = True
        if distance == 1:
            if state.board[near] == SEAL and token == BEAR:
                state.board[near] = EMPTY  # capture: both tokens leave, the square stays empty
            else:
                state.board[near] = token
        else:
            state.rings[near] = True  # a slide's middle square gets a ring; a jump's already has one
            state.board[far] = token
    state.plies += 1
    state.last_action = action
    state.to_move = 1 - state.to_move
    state.winner = _decide_winner(state) if decide is None else int(decide(state.board, state.rings, state.passes))
    return state


def apply(state: State, action: int) -> State:
    """Return the state after ``action``; ``ValueError`` if illegal. Pure."""
    check_action(state, int(action))
    return apply_inplace(state.copy(), int(action))


#: per-colour returns: +1 winner, -1 loser, zeros while the game goes on
returns = winner_returns


def empty_squares(state: State) -> int:
    """On-board squares with neither ring nor token (the match score of a game's winner)."""
    return int((ON_BOARD & ~state.rings & (state.board == EMPTY)).sum())


_SQUARE_COLS = np.arange(NUM_SQUARES) % SIZE
_SQUARE_ROWS = np.arange(NUM_SQUARES) // SIZE
#: KING_DISTANCE[a, b]: king-move (Chebyshev) distance between squares a and b.
KING_DISTANCE: NDArray[np.int64] = np.maximum(
    np.abs(_SQUARE_COLS[:, None] - _SQUARE_COLS), np.abs(_SQUARE_ROWS[:, None] - _SQUARE_ROWS)
)


def shaping_potentials(boards: NDArray[np.int8], colours: NDArray[np.integer]) -> NDArray[np.float32]:
    """A heuristic value of each board (N, 64) for ``colours`` (N,) in [-1, 1], for
    potential-based reward shaping in training (not part of the rules; the game's rewards never
    use it).  White gains 0.4 per seal captured and loses up to 0.2 as the closest bear-seal pair
    (king distance) moves apart; Black's value is the negative."""
    boards = np.asarray(boards).reshape(-1, NUM_SQUARES)
    seals, bears = boards == SEAL, boards == BEAR
    value = 0.4 * (2 - seals.sum(axis=1))
    pairs = seals[:, :, None] & bears[:, None, :]  # (N, 64 seal squares, 64 bear squares)
    gap = np.where(pairs, KING_DISTANCE, SIZE).min(axis=(1, 2))
    value = value - np.where(pairs.any(axis=(1, 2)), 0.2 * (gap - 1) / (SIZE - 2), 0.0)
    return np.where(np.asarray(colours) == WHITE, value, -value).astype(np.float32)


def shaping_potential(state: State, colour: int) -> float:
    """:func:`shaping_potentials` of one state."""
    return float(shaping_potentials(state.board[None], np.array([colour]))[0])
