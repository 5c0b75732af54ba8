"""Symmetries of Go with the Floe: the mirror of the rows.

The board (8x8 without corners), the start (seals B2, B7; bears G2, G7) and every rule are
invariant under row ``r -> 9 - r`` (B2 <-> B7, G2 <-> G7), which swaps the directions N <-> S,
NE <-> SE, NW <-> SW and keeps E, W.  (The column mirror would swap the seals' side with the
bears', so it is not a symmetry of the game.)  Symmetry ``k`` is 0 (identity) or 1 (mirror); the
same public names as :mod:`polarzoo.envs.fire_and_ice.symmetry`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.symmetry import permute_actions
from polarzoo.envs.go_with_the_floe import rules

NUM_SYMMETRIES = 2
START_FIXING: NDArray[np.intp] = np.arange(NUM_SYMMETRIES)
#: Direction index -> mirrored direction index (N, NE, E, SE, S, SW, W, NW order).
DIRECTION_MIRROR: NDArray[np.intp] = np.array([4, 3, 2, 1, 0, 7, 6, 5], dtype=np.intp)


def _tables() -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    squares = np.arange(rules.NUM_SQUARES)
    rows, cols = np.divmod(squares, rules.SIZE)
    mirror_squares = rules.SIZE * (rules.SIZE - 1 - rows) + cols
    actions = np.arange(rules.NUM_ACTIONS, dtype=np.intp)
    moves = actions[: rules.PASS]
    square, rest = np.divmod(moves, rules.ACTIONS_PER_SQUARE)
    direction, step = np.divmod(rest, 2)
    mirror_actions = actions.copy()
    mirror_actions[: rules.PASS] = rules.ACTIONS_PER_SQUARE * mirror_squares[square] + 2 * DIRECTION_MIRROR[direction] + step
    squares_table = np.stack([squares, mirror_squares]).astype(np.intp)
    actions_table = np.stack([actions, mirror_actions])
    squares_table.setflags(write=False)
    actions_table.setflags(write=False)
    return squares_table, actions_table


_SQUARE_MAPS, _ACTION_MAPS = _tables()


def _check(k: int) -> int:
    if int(k) not in (0, 1):
        raise ValueError(f"symmetry index {k} is out of range 0..1")
    return int(k)


def square_map(k: int) -> NDArray[np.intp]:
    """(64,): square ``sq`` goes to ``square_map(k)[sq]``."""
    return _SQUARE_MAPS[_check(k)]


def action_map(k: int) -> NDArray[np.intp]:
    """(1025,): action ``a`` goes to ``action_map(k)[a]`` (PASS to PASS)."""
    return _ACTION_MAPS[_check(k)]


def inverse(k: int) -> int:
    return _check(k)  # the mirror is its own inverse


def transform_state(state: rules.State, k: int) -> rules.State:
    out = state.copy()
    squares = square_map(k)
    out.board[squares] = state.board
    out.rings[squares] = state.rings
    if state.last_action >= 0:
        out.last_action = int(action_map(k)[state.last_action])
    return out


def transform_observation(observation: NDArray, k: int) -> NDArray:
    """An observation ``(..., 8, 8, C)`` (row, column, channel) mapped by symmetry ``k``."""
    return observation[..., ::-1, :, :].copy() if _check(k) else observation.copy()


def transform_mask(mask: NDArray, k: int) -> NDArray:
    """A mask or per-action vector ``(..., 1025)`` mapped by symmetry ``k``."""
    return permute_actions(mask, action_map(k))


def transform_action(action: int, k: int) -> int:
    return int(action_map(k)[int(action)])
