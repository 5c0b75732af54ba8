"""Compiled (numba) kernels for B Go with the Floe games at once: one pass per game per step.

The readable rules in :mod:`polarzoo.envs.go_with_the_floe.rules` are the specification; these
kernels do the same with the same tables (``TARGET``, the bitboard masks of the isolation flood
fill) and are tested in lockstep against them (``tests/test_batch.py``).  They back
:class:`polarzoo.envs.batch.GoWithTheFloeBatch`, which validates inputs before any kernel runs.

State per game: ``board`` int8 (64,), ``rings`` uint8 (64,), ``to_move`` / ``passes`` /
``winner`` int8.  Single games (no match play).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polarzoo.envs._common.kernels import clear_step, record_end
from polarzoo.envs.go_with_the_floe import rules

_SQUARES = rules.NUM_SQUARES
_PASS = rules.PASS
_TARGET = rules.TARGET.astype(np.int64)  # (64, 8, 2): near, far square or -1
_START = rules.initial_state().board.copy()
_ON_BOARD = rules.ON_BOARD.astype(np.uint8)
_EMPTY, _SEAL, _BEAR = rules.EMPTY, rules.SEAL, rules.BEAR
_BLACK, _WHITE = rules.BLACK, rules.WHITE
_U = np.uint64
_NOT_A = _U(rules.NOT_FILE_A_BITS)
_NOT_H = _U(rules.NOT_FILE_H_BITS)
_ON_BOARD_BITS = _U(rules.ON_BOARD_BITS)
_KING = np.array(rules.KING_NEIGHBOURS_BITS, dtype=np.uint64)
_ONE = _U(1)
_CHANNELS = 11
_MAX_MOVES = 64  # two tokens x 8 directions x 2 distances = 32 at most


@njit(cache=True, nogil=True)
def _spread(reach, nodes, rings):
    # rules.spread_bits on uint64 (every operand uint64, so numba never goes through floats).
    one, seven, eight, nine = _U(1), _U(7), _U(8), _U(9)
    horizontal = reach | ((reach << one) & _NOT_A) | ((reach >> one) & _NOT_H)
    grown = horizontal | (horizontal << eight) | (horizontal >> eight)
    grown |= (((reach << eight) & rings) << eight) | (((reach >> eight) & rings) >> eight)
    grown |= ((((reach << one) & _NOT_A & rings) << one) & _NOT_A) | ((((reach >> one) & _NOT_H & rings) >> one) & _NOT_H)
    grown |= ((((reach << nine) & _NOT_A & rings) << nine) & _NOT_A) | ((((reach >> nine) & _NOT_H & rings) >> nine) & _NOT_H)
    grown |= ((((reach << seven) & _NOT_H & rings) << seven) & _NOT_H) | ((((reach >> seven) & _NOT_A & rings) >> seven) & _NOT_A)
    return (grown & nodes) | reach


@njit(cache=True, nogil=True)
def _write_plane(bits, out, b, plane):
    for sq in range(_SQUARES):
        out[b, plane, sq] = (bits >> _U(sq)) & _ONE


@njit(cache=True, nogil=True)
def _write_reach(reach, nodes, rings, marks, out, b, first):
    # out[b, first + j] = squares within marks[j] moves; out[b, first + len(marks)] = ever.
    j = 0
    for step in range(1, 53):  # 52 spreads cover any path over the 52 ice squares
        grown = _spread(reach, nodes, rings)
        if j < len(marks) and step == marks[j]:
            _write_plane(grown, out, b, first + j)
            j += 1
        elif j == len(marks) and grown == reach:
            break
        reach = grown
    _write_plane(reach, out, b, first + len(marks))


@njit(cache=True, nogil=True)
def reach_planes(features, channels, bear_marks, seal_marks, out):
    """Reach in the isolation graph (the rules' ``spread_bits``: king steps and single-ring jumps
    over ice without a ring) from B observations, as the networks' input planes.

    ``features`` float (B, 64 * channels), the env's observation flattened square-major (channels
    0-3: mine, opponent's, rings, ice; channel 4 > 0: "I play White", so the bears are mine);
    ``bear_marks`` / ``seal_marks`` increasing move counts >= 1.  Writes ``out`` (B, planes, 64):
    for the bears, the squares within each mark and then ever reachable; the same for the seals.
    """
    for b in range(features.shape[0]):
        mine = _U(0)
        theirs = _U(0)
        ring_bits = _U(0)
        ice = _U(0)
        white = False
        for sq in range(_SQUARES):
            if not _ON_BOARD[sq]:
                continue  # water (H8 among it) is never a node
            bit = _ONE << _U(sq)
            base = sq * channels
            if features[b, base] > 0:
                mine |= bit
            if features[b, base + 1] > 0:
                theirs |= bit
            if features[b, base + 2] > 0:
                ring_bits |= bit
            if features[b, base + 3] > 0:
                ice |= bit
            if features[b, base + 4] > 0:
                white = True
        bears, seals = (mine, theirs) if white else (theirs, mine)
        nodes = ice & ~ring_bits
        _write_reach(bears, nodes, ring_bits, bear_marks, out, b, 0)
        _write_reach(seals, nodes, ring_bits, seal_marks, out, b, len(bear_marks) + 1)


@njit(cache=True, nogil=True)
def seal_isolated(bears, seal_sq, ring_bits):
    """Whether the seal on ``seal_sq`` is isolated from the bears (uint64 bitboards ``bears``,
    ``ring_bits``): :func:`polarzoo.envs.go_with_the_floe.rules.is_isolated` on bitboards."""
    target = _KING[seal_sq]
    nodes = _ON_BOARD_BITS & ~ring_bits & ~(_ONE << _U(seal_sq))
    reach = bears & nodes
    while True:
        grown = _spread(reach, nodes, ring_bits)
        if (grown & target) != _U(0):
            return False
        if grown == reach:
            return True
        reach = grown


@njit(cache=True, nogil=True)
def decide(board, rings, passes):
    """The winner of one game (``board`` (64,), ``rings`` (64,), ``passes``), or -1: the rules'
    ``_decide_winner`` on uint64 bitboards."""
    seals = _U(0)
    bears = _U(0)
    ring_bits = _U(0)
    for sq in range(_SQUARES):
        bit = _ONE << _U(sq)
        v = board[sq]
        if v == _SEAL:
            seals |= bit
        elif v == _BEAR:
            bears |= bit
        if rings[sq]:
            ring_bits |= bit
    if seals == _U(0):
        return _WHITE
    for sq in range(_SQUARES):
        if board[sq] == _SEAL and seal_isolated(bears, sq, ring_bits):
            return _BLACK
    if passes >= 2:
        return _BLACK
    return -1


@njit(cache=True, nogil=True)
def _reset_game(board, rings, to_move, passes, winner, g):
    board[g, :] = _START
    rings[g, :] = 0
    to_move[g] = _BLACK
    passes[g] = 0
    winner[g] = -1


@njit(cache=True, nogil=True)
def reset_games(board, rings, to_move, passes, winner, rows):
    for i in range(rows.shape[0]):
        _reset_game(board, rings, to_move, passes, winner, rows[i])


@njit(cache=True, nogil=True)
def move(board, rings, action):
    """Play a move (not PASS) on one game's ``board`` / ``rings`` rows, in place."""
    source = action // 16
    rest = action - 16 * source
    direction, far_move = rest // 2, rest % 2
    near, far = _TARGET[source, direction, 0], _TARGET[source, direction, 1]
    token = board[source]
    board[source] = _EMPTY
    rings[source] = 1
    if far_move == 0:
        if board[near] == _SEAL and token == _BEAR:
            board[near] = _EMPTY  # capture: both tokens leave
        else:
            board[near] = token
    else:
        rings[near] = 1
        board[far] = token


@njit(cache=True, nogil=True)
def _play(board, rings, to_move, passes, winner, g, action):
    if action == _PASS:
        passes[g] += 1
    else:
        passes[g] = 0
        move(board[g], rings[g], action)
    to_move[g] = 1 - to_move[g]
    winner[g] = decide(board[g], rings[g], passes[g])


@njit(cache=True, nogil=True)
def write_observation(board, rings, to_move, passes, winner, colour, out):
    """One game's (8, 8, 11) observation for ``colour``, flat into ``out`` (704,): square sq's
    eleven channels at 11 sq .. 11 sq + 10 (the match channels 8-10 are written 0)."""
    own = _SEAL if colour == _BLACK else _BEAR
    other = _BEAR if colour == _BLACK else _SEAL
    is_white = 1 if colour == _WHITE else 0
    my_turn = 1 if (to_move == colour and winner < 0) else 0
    passed = 1 if passes > 0 else 0
    i = 0
    for sq in range(_SQUARES):
        v = board[sq]
        ring = 1 if rings[sq] else 0
        on = _ON_BOARD[sq]
        out[i] = 1 if v == own else 0
        out[i + 1] = 1 if v == other else 0
        out[i + 2] = ring
        out[i + 3] = on
        out[i + 4] = is_white
        out[i + 5] = my_turn
        out[i + 6] = 1 if (on and not ring and v == _EMPTY) else 0
        out[i + 7] = passed
        out[i + 8] = 0
        out[i + 9] = 0
        out[i + 10] = 0
        i += _CHANNELS


@njit(cache=True, nogil=True)
def legal_moves(board, rings, to_move, out):
    """The legal moves of one game into ``out`` (at most 2 tokens x 16), in mask order; count."""
    token = _SEAL if to_move == _BLACK else _BEAR
    is_bear = token == _BEAR
    n = 0
    for source in range(_SQUARES):
        if board[source] != token:
            continue
        for d in range(8):
            near = _TARGET[source, d, 0]
            if near < 0:
                continue
            near_token = board[near]
            if (not rings[near] and near_token == _EMPTY) or (is_bear and near_token == _SEAL):
                out[n] = 16 * source + 2 * d
                n += 1
            far = _TARGET[source, d, 1]
            if far >= 0 and not rings[far] and board[far] == _EMPTY and near_token == _EMPTY:
                out[n] = 16 * source + 2 * d + 1
                n += 1
    return n


@njit(cache=True, nogil=True)
def write_mask(board, rings, to_move, winner, row, moves):
    """One game's legal-action mask (1,025,) into ``row``; ``moves`` is (64,) int64 scratch."""
    row[:] = 0
    if winner >= 0:
        return
    n = legal_moves(board, rings, to_move, moves)
    for i in range(n):
        row[moves[i]] = 1
    if n == 0:
        row[_PASS] = 1


@njit(cache=True, nogil=True)
def observe_games(board, rings, to_move, passes, winner, colours, out):
    """Observations of every game seen by ``colours[g]`` (-1: the player to move) into ``out``."""
    for g in range(board.shape[0]):
        colour = colours[g] if colours[g] >= 0 else to_move[g]
        write_observation(board[g], rings[g], to_move[g], passes[g], winner[g], colour, out[g])


@njit(cache=True, nogil=True)
def mask_games(board, rings, to_move, winner, out):
    moves = np.empty(_MAX_MOVES, dtype=np.int64)
    for g in range(board.shape[0]):
        write_mask(board[g], rings[g], to_move[g], winner[g], out[g], moves)


@njit(cache=True, nogil=True)
def step_games(
    board,
    rings,
    to_move,
    passes,
    winner,
    actions,
    active,
    auto_reset,
    observer,
    out,
):
    """One step of every game (see :func:`polarzoo.envs.fire_and_ice.kernels.step_games`)."""
    # written: every game's next observation and mask, and what ended
    observation, mask, final_observation, rewards, terminated, winner_out, mover_out = out
    moves = np.empty(_MAX_MOVES, dtype=np.int64)
    for g in range(board.shape[0]):
        clear_step(g, out)
        ended = False
        if active[g]:
            mover = to_move[g]
            mover_out[g] = mover
            _play(board, rings, to_move, passes, winner, g, actions[g])
            w = winner[g]
            if w >= 0:
                ended = True
                record_end(g, w, out)
                seen_by = observer[g] if observer[g] >= 0 else mover
                write_observation(board[g], rings[g], to_move[g], passes[g], winner[g], seen_by, final_observation[g])
                if auto_reset:
                    _reset_game(board, rings, to_move, passes, winner, g)
        if not ended:
            final_observation[g, :] = 0
        write_observation(board[g], rings[g], to_move[g], passes[g], winner[g], to_move[g], observation[g])
        write_mask(board[g], rings[g], to_move[g], winner[g], mask[g], moves)


@njit(cache=True, nogil=True)
def _playout(board, rings, to_move, passes, seed, limit):
    np.random.seed(seed)
    moves = np.empty(_MAX_MOVES, dtype=np.int64)
    winner = -1
    plies = 0
    while plies < limit:
        n = legal_moves(board, rings, to_move, moves)
        if n == 0:
            passes += 1
        else:
            passes = 0
            move(board, rings, moves[np.random.randint(0, n)])
        to_move = 1 - to_move
        plies += 1
        winner = decide(board, rings, passes)
        if winner >= 0:
            break
    return winner


def playout_winner(state: rules.State, rng: np.random.Generator, limit: int = 200) -> int:
    """Uniformly random play from ``state`` (left unchanged) to the end or ``limit`` plies, in
    one compiled call; the winner or -1.  MCTS rollouts use it."""
    if state.winner >= 0:
        return int(state.winner)
    return int(
        _playout(
            state.board.copy(), state.rings.copy(), int(state.to_move), int(state.passes), int(rng.integers(2**31 - 1)), limit
        )
    )
