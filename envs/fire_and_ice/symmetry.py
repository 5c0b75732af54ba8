"""Symmetries of Fire & Ice: collineations of the Fano plane, on positions and on islands.

The movement rule only asks "same island?" / "same position?", control asks for three pegs on a
position line, and the win for three islands on an island line.  So any collineation ``s`` of the
positions (a permutation of 1..7 that maps lines to lines), applied to every island at once,
together with any collineation ``t`` of the islands, maps a position to an equivalent one:
168 x 168 = 28,224 maps of holes ``(island, position) -> (t(island), s(position))``.  The 24 x 24
= 576 of them with ``s(4) = 4`` and ``t(D) = D`` also fix the starting hole D4.

A symmetry is an index ``k`` in ``range(NUM_SYMMETRIES)`` (``k = 168 * island_index +
position_index`` into :data:`COLLINEATIONS`); :func:`hole_map` and :func:`action_map` give its
permutations, and the ``transform_*`` functions apply it to states, observations, masks and
actions.  The rules commute with every map (``tests/test_fire_and_ice_symmetry.py``).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.symmetry import permute_actions
from polarzoo.envs.fire_and_ice import rules


def _collineations() -> NDArray[np.intp]:
    lines = {frozenset(line.tolist()) for line in rules.LINES}
    found = [
        perm
        for perm in itertools.permutations(range(rules.NUM_POSITIONS))
        if all(frozenset(perm[p] for p in line) in lines for line in lines)
    ]
    return np.array(found, dtype=np.intp)


#: (168, 7): every collineation of the Fano plane as a permutation of the indices 0..6
#: (positions 1..7 or islands A..G; the two use the same lines).  Row 0 is the identity.
COLLINEATIONS: NDArray[np.intp] = _collineations()
NUM_COLLINEATIONS = len(COLLINEATIONS)  # 168
NUM_SYMMETRIES = NUM_COLLINEATIONS * NUM_COLLINEATIONS  # 28,224
_CENTRE = rules.CENTRE_HOLE % rules.NUM_POSITIONS  # index 3: position 4 and island D
#: Indices of the collineations that fix the centre (position 4 / island D): 24 of them.
CENTRE_FIXING: NDArray[np.intp] = np.flatnonzero(COLLINEATIONS[:, _CENTRE] == _CENTRE)
#: The 576 symmetries that keep D4 in place (the starting position is invariant under them).
START_FIXING: NDArray[np.intp] = (NUM_COLLINEATIONS * CENTRE_FIXING[:, None] + CENTRE_FIXING[None, :]).ravel()


def split(k: int) -> tuple[int, int]:
    """``k -> (island collineation index, position collineation index)``."""
    if not 0 <= int(k) < NUM_SYMMETRIES:
        raise ValueError(f"symmetry index {k} is out of range 0..{NUM_SYMMETRIES - 1}")
    return divmod(int(k), NUM_COLLINEATIONS)


@lru_cache(maxsize=4096)
def _maps(k: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    island, position = split(k)
    t, s = COLLINEATIONS[island], COLLINEATIONS[position]
    holes = (rules.NUM_POSITIONS * t[:, None] + s[None, :]).ravel()
    actions = np.empty(rules.NUM_ACTIONS, dtype=np.intp)
    actions[: rules.NUM_MOVE_ACTIONS] = (rules.NUM_HOLES * holes[:, None] + holes[None, :]).ravel()
    actions[rules.PASS] = rules.PASS
    holes.setflags(write=False)
    actions.setflags(write=False)
    return holes, actions


def hole_map(k: int) -> NDArray[np.intp]:
    """(49,): hole ``h`` goes to ``hole_map(k)[h]`` under symmetry ``k``."""
    return _maps(int(k))[0]


def action_map(k: int) -> NDArray[np.intp]:
    """(2402,): action ``a`` goes to ``action_map(k)[a]`` (PASS to PASS)."""
    return _maps(int(k))[1]


def inverse(k: int) -> int:
    """The index of the inverse symmetry."""
    island, position = split(k)
    return NUM_COLLINEATIONS * _INVERSE[island] + _INVERSE[position]


def _inverse_table() -> NDArray[np.intp]:
    index = {tuple(perm): i for i, perm in enumerate(COLLINEATIONS.tolist())}
    return np.array([index[tuple(np.argsort(perm).tolist())] for perm in COLLINEATIONS], dtype=np.intp)


_INVERSE = _inverse_table()


def transform_board(board: NDArray[np.int8], k: int) -> NDArray[np.int8]:
    out = np.empty_like(board)
    out[hole_map(k)] = board
    return out


def transform_state(state: rules.State, k: int) -> rules.State:
    """A copy of ``state`` with the board mapped by symmetry ``k`` (last action mapped too)."""
    out = state.copy()
    out.board = transform_board(state.board, k)
    if state.last_action >= 0:
        out.last_action = int(action_map(k)[state.last_action])
    return out


def transform_observation(observation: NDArray, k: int) -> NDArray:
    """An observation ``(..., 7, 7, C)`` (island, position, channel) mapped by symmetry ``k``.

    Every channel is per hole or per island (control) or constant, so the channels move with
    their hole."""
    island, position = split(k)
    t, s = COLLINEATIONS[island], COLLINEATIONS[position]
    out = np.empty_like(observation)
    out[..., t[:, None], s[None, :], :] = observation
    return out


def transform_mask(mask: NDArray, k: int) -> NDArray:
    """A mask or per-action vector ``(..., 2402)`` mapped by symmetry ``k``."""
    return permute_actions(mask, action_map(k))


def transform_action(action: int, k: int) -> int:
    return int(action_map(k)[int(action)])
