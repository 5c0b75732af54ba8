"""Compiled (numba) kernels for B Fire & Ice games at once: one pass per game per step.

The readable rules in :mod:`polarzoo.envs.fire_and_ice.rules` are the specification; these
kernels do the same with the same tables (``MOVE_DESTINATIONS``, ``LINE_OWNER``, the powers of
three) and are tested in lockstep against them (``tests/test_batch.py``).  They back
:class:`polarzoo.envs.batch.FireAndIceBatch`; the batch core validates the inputs before any
kernel runs, so the kernels assume legal actions.

State per game: ``board`` int8 (49,), ``to_move`` / ``winner`` / ``moves`` int8, ``supply`` int8
(2,), ``control`` int8 (7,) (the controlling colour of each island, -1 for none).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polarzoo.envs._common.kernels import clear_step, record_end
from polarzoo.envs.fire_and_ice import rules

_N = rules.NUM_POSITIONS
_HOLES = rules.NUM_HOLES
_PASS = rules.PASS
#: _GEOMETRY[from, to] = 1 where the movement rule joins the two holes (the 2,401 move entries).
_GEOMETRY = rules.IS_GEOMETRIC_MOVE[: rules.NUM_MOVE_ACTIONS].reshape(rules.NUM_HOLES, rules.NUM_HOLES).astype(np.int8)
_GEOMETRY_FLAT = _GEOMETRY.ravel().copy()
_GEOMETRY_BITS = np.array([sum(1 << int(t) for t in np.flatnonzero(row)) for row in _GEOMETRY], dtype=np.uint64)
_U0, _U1 = np.uint64(0), np.uint64(1)
_LINE_OWNER = rules.LINE_OWNER
_POWERS = rules.POWERS_OF_THREE
_CENTRE = rules.CENTRE_HOLE
_FIRE = rules.FIRE
_PEGS = rules.PEGS_PER_PLAYER
_CHANNELS = 9


@njit(cache=True, nogil=True)
def _reset_game(board, to_move, supply, moves, winner, control, g):
    board[g, :] = 0
    board[g, _CENTRE] = _FIRE + 1
    to_move[g] = _FIRE
    supply[g, 0] = _PEGS - 1
    supply[g, 1] = _PEGS
    moves[g] = 0
    winner[g] = -1
    control[g, :] = -1


@njit(cache=True, nogil=True)
def reset_games(board, to_move, supply, moves, winner, control, rows):
    """Put the games ``rows`` at the start."""
    for i in range(rows.shape[0]):
        _reset_game(board, to_move, supply, moves, winner, control, rows[i])


@njit(cache=True, nogil=True)
def play(board, supply, control, mover, action):
    """Play ``action`` for ``mover`` on one game's rows (``board`` (49,), ``supply`` (2,),
    ``control`` (7,), updated in place); returns the winner, or -1 (the caller flips the turn)."""
    opponent = 1 - mover
    if action == _PASS:
        return -1
    source = action // _HOLES
    destination = action - source * _HOLES
    board[destination] = mover + 1
    if supply[opponent] > 0:
        board[source] = opponent + 1
        supply[opponent] -= 1
    else:
        board[source] = 0
    # Only the two islands touched can change hands; the island-level code is recomputed.
    for island in (source // _N, destination // _N):
        code = 0
        for p in range(_N):
            code += board[island * _N + p] * _POWERS[p]
        control[island] = _LINE_OWNER[code]
    code = 0
    for island in range(_N):
        code += (control[island] + 1) * _POWERS[island]
    return _LINE_OWNER[code]


@njit(cache=True, nogil=True)
def _play(board, to_move, supply, moves, winner, control, g, action):
    mover = to_move[g]
    if action != _PASS:
        moves[g] += 1
        winner[g] = play(board[g], supply[g], control[g], mover, action)
    to_move[g] = 1 - mover


@njit(cache=True, nogil=True)
def write_observation(board, to_move, supply, winner, control, colour, out):
    """One game's (7, 7, 9) observation for ``colour``, flat into ``out`` (441,): hole h's nine
    channels at 9h .. 9h + 8.  ``board`` (49,), ``supply`` (2,), ``control`` (7,) are the
    game's rows; the env's ``observation_tensor`` calls this too."""
    own, other = colour + 1, 2 - colour
    my_turn = 1 if (to_move == colour and winner < 0) else 0
    is_fire = 1 if colour == _FIRE else 0
    mine, theirs = supply[colour], supply[1 - colour]
    i = 0
    for island in range(_N):
        c = control[island]
        held, lost = (1 if c == colour else 0), (1 if c == 1 - colour else 0)
        for p in range(_N):
            v = board[island * _N + p]
            out[i] = 1 if v == own else 0
            out[i + 1] = 1 if v == other else 0
            out[i + 2] = 1 if v == 0 else 0
            out[i + 3] = held
            out[i + 4] = lost
            out[i + 5] = my_turn
            out[i + 6] = is_fire
            out[i + 7] = mine
            out[i + 8] = theirs
            i += _CHANNELS


@njit(cache=True, nogil=True)
def write_mask(board, to_move, winner, row, empty):
    """One game's legal-action mask (2,402,) into ``row``; ``empty`` is (49,) int8 scratch.

    The 49-byte block of source s = GEOMETRY[s] & empty where s holds the mover's peg, else 0:
    whole runs the compiler vectorises (unsigned indices: no negative-index checks), no separate
    clearing pass.  "Any move at all" is a bitboard test on the side."""
    if winner >= 0:
        row[:] = 0
        return
    own = to_move + 1
    empty_bits = _U0
    for hole in range(_HOLES):
        is_empty = board[hole] == 0
        empty[hole] = 1 if is_empty else 0
        if is_empty:
            empty_bits |= _U1 << np.uint64(hole)
    any_move = False
    n = np.uint64(_HOLES)
    for source in range(n):
        base = source * n
        if board[source] == own:
            any_move |= (_GEOMETRY_BITS[source] & empty_bits) != _U0
            for destination in range(n):
                row[base + destination] = _GEOMETRY_FLAT[base + destination] & empty[destination]
        else:
            for destination in range(n):
                row[base + destination] = 0
    row[_PASS] = 0 if any_move else 1


@njit(cache=True, nogil=True)
def observe_games(board, to_move, supply, winner, control, colours, out):
    """Observations of every game seen by ``colours[g]`` (-1: the player to move) into ``out``."""
    for g in range(board.shape[0]):
        colour = colours[g] if colours[g] >= 0 else to_move[g]
        write_observation(board[g], to_move[g], supply[g], winner[g], control[g], colour, out[g])


@njit(cache=True, nogil=True)
def mask_games(board, to_move, winner, out):
    empty = np.empty(_HOLES, dtype=np.int8)
    for g in range(board.shape[0]):
        write_mask(board[g], to_move[g], winner[g], out[g], empty)


@njit(cache=True, nogil=True)
def step_games(
    board,
    to_move,
    supply,
    moves,
    winner,
    control,
    actions,
    active,
    auto_reset,
    observer,
    out,
):
    """One step of every game: play ``actions[g]`` where ``active[g]``, decide, record the
    finished games (rewards, winner, their final observation seen by ``observer[g]``, -1: the
    mover), reset them if ``auto_reset``, and write every game's next observation and mask."""
    # written: every game's next observation and mask, and what ended
    observation, mask, final_observation, rewards, terminated, winner_out, mover_out = out
    empty = np.empty(_HOLES, dtype=np.int8)
    for g in range(board.shape[0]):
        clear_step(g, out)
        if active[g]:
            mover = to_move[g]
            mover_out[g] = mover
            _play(board, to_move, supply, moves, winner, control, g, actions[g])
            w = winner[g]
            if w >= 0:
                record_end(g, w, out)
                seen_by = observer[g] if observer[g] >= 0 else mover
                write_observation(board[g], to_move[g], supply[g], winner[g], control[g], seen_by, final_observation[g])
                if auto_reset:
                    _reset_game(board, to_move, supply, moves, winner, control, g)
            else:
                final_observation[g, :] = 0
        else:
            final_observation[g, :] = 0
        write_observation(board[g], to_move[g], supply[g], winner[g], control[g], to_move[g], observation[g])
        write_mask(board[g], to_move[g], winner[g], mask[g], empty)


@njit(cache=True, nogil=True)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def sample_action(board, to_move, u):
    """The k-th legal action of one game in mask order, ``k = floor(u * count)`` (PASS when
    there is no move), from bitboards: no pass over the 2,402 mask entries."""
    own = to_move + 1
    empty_bits = _U0
    for hole in range(_HOLES):
        if board[hole] == 0:
            empty_bits |= _U1 << np.uint64(hole)
    total = 0
    for source in range(_HOLES):
        if board[source] == own:
            total += _popcount(_GEOMETRY_BITS[source] & empty_bits)
    if total == 0:
        return _PASS
    k = min(int(u * total), total - 1)
    for source in range(_HOLES):
        if board[source] == own:
            targets = _GEOMETRY_BITS[source] & empty_bits
            c = int(_popcount(targets))
            if k >= c:
                k -= c
                continue
            for destination in range(_HOLES):
                if (targets >> np.uint64(destination)) & _U1:
                    if k == 0:
                        return source * _HOLES + destination
                    k -= 1
    return _PASS  # not reached


@njit(cache=True, nogil=True)
def sample_games(board, to_move, winner, uniforms, out):
    """A uniformly random legal action of every game (0 where the game is over): the same draw
    as the generic mask sampler given the same uniforms."""
    for g in range(board.shape[0]):
        out[g] = 0 if winner[g] >= 0 else sample_action(board[g], to_move[g], uniforms[g])


@njit(cache=True, nogil=True)
def _playout(board, supply, control, to_move, winner, seed, limit):
    np.random.seed(seed)
    plies = 0
    while winner < 0 and plies < limit:
        action = sample_action(board, to_move, np.random.random())
        winner = play(board, supply, control, to_move, action)
        to_move = 1 - to_move
        plies += 1
    return winner


def playout_winner(state: rules.State, rng: np.random.Generator, limit: int = 200) -> int:
    """Uniformly random play from ``state`` (left unchanged) to the end or ``limit`` plies, in
    one compiled call; the winner or -1.  MCTS rollouts use it."""
    if state.winner >= 0:
        return int(state.winner)
    board, supply = state.board.copy(), state.supply.copy()
    control = rules.island_control(board)
    return int(_playout(board, supply, control, int(state.to_move), -1, int(rng.integers(2**31 - 1)), limit))
