"""The symmetries of Thin Ice: the 8 rotations and mirrors of the square (the dihedral group D4).

The placement lattice is centred on the pile, the table is a plane, every pyramid has a square
base (its own 90-degree and mirror symmetries) and the hand tremor is isotropic in distribution
(a tilt about a uniformly drawn horizontal axis, a Gaussian offset), so a pile built by placements
mapped by any of these 8 maps is the mapped pile (with the same outcome, up to MuJoCo's rounding
and the tremor's draws).  Each map acts on

* the lattice cells (``cell = row * grid + col``, ``x = col - centre``, ``y = row - centre``),
* the six orientations (upright and inverted stay; the four lying ones turn with the apex),
* the piece coordinates in the observation (``x, y`` and ``axis_x, axis_y`` of every slot),
* the actions (placements map their cell and orientation; calls, pick-ups and DONE stay).

``k`` indexes :data:`MATRICES`: 0 identity, 1-3 rotations by 90, 180, 270 degrees
(counter-clockwise), 4 the mirror ``x -> -x``, 5 ``y -> -y``, 6 the diagonal ``(x, y) -> (y, x)``,
7 the anti-diagonal ``(x, y) -> (-y, -x)``.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs._common.symmetry import permute_actions
from polarzoo.envs.thin_ice import rules

#: (8, 2, 2) integer matrices acting on (x, y) column vectors.
MATRICES = np.array(
    [
        [[1, 0], [0, 1]],
        [[0, -1], [1, 0]],
        [[-1, 0], [0, -1]],
        [[0, 1], [-1, 0]],
        [[-1, 0], [0, 1]],
        [[1, 0], [0, -1]],
        [[0, 1], [1, 0]],
        [[0, -1], [-1, 0]],
    ],
    dtype=np.int64,
)
NUM_SYMMETRIES = len(MATRICES)
#: apex direction (x, y) of the lying orientations 2..5 (lying+x, lying-x, lying+y, lying-y)
LYING_DIRECTIONS = {2: (1, 0), 3: (-1, 0), 4: (0, 1), 5: (0, -1)}
#: per slot, the indices (within the slot's SLOT_FEATURES) of (x, y) and of (axis_x, axis_y)
POSITION_FEATURES, AXIS_FEATURES = (5, 6), (8, 9)
SLOT_FEATURES, PLAYER_FEATURES = rules.SLOT_FEATURES, rules.PLAYER_FEATURES


def _check(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < NUM_SYMMETRIES:
        raise ValueError(f"symmetry index must be in 0..{NUM_SYMMETRIES - 1}, got {k!r}")
    return int(k)


def inverse(k: int) -> int:
    """The index of the inverse map."""
    matrix = MATRICES[_check(k)]
    return next(j for j in range(NUM_SYMMETRIES) if (MATRICES[j] @ matrix == np.eye(2, dtype=np.int64)).all())


def compose(j: int, k: int) -> int:
    """The index of ``j`` after ``k`` (apply ``k`` first)."""
    product = MATRICES[_check(j)] @ MATRICES[_check(k)]
    return next(i for i in range(NUM_SYMMETRIES) if (MATRICES[i] == product).all())


@cache
def orientation_map(k: int) -> tuple[int, ...]:
    """Orientation ``o`` -> its image under map ``k``."""
    matrix = MATRICES[_check(k)]
    images = [0, 1]
    for orientation in range(2, rules.NUM_ORIENTATIONS):
        direction = tuple(int(v) for v in matrix @ np.array(LYING_DIRECTIONS[orientation]))
        images.append(next(o for o, d in LYING_DIRECTIONS.items() if d == direction))
    return tuple(images)


@cache
def _cell_map(k: int, grid: int) -> tuple[int, ...]:
    matrix = MATRICES[_check(k)]
    centre = grid - 1  # doubled coordinates keep even grids exact: 2x = 2 col - (grid - 1)
    images = []
    for cell in range(grid * grid):
        row, col = divmod(cell, grid)
        x, y = matrix @ np.array([2 * col - centre, 2 * row - centre])
        images.append(int((y + centre) // 2 * grid + (x + centre) // 2))
    return tuple(images)


def cell_map(k: int, grid: int) -> NDArray[np.intp]:
    """Cell ``c`` of a ``grid x grid`` lattice -> its image under map ``k``."""
    return np.array(_cell_map(_check(k), int(grid)), dtype=np.intp)


def target_map(k: int, grid: int) -> NDArray[np.intp]:
    """Placement target ``6 * cell + orientation`` -> its image under map ``k``."""
    cells, orientations = cell_map(k, grid), np.array(orientation_map(k), dtype=np.intp)
    targets = np.arange(grid * grid * rules.NUM_ORIENTATIONS)
    cell, orientation = np.divmod(targets, rules.NUM_ORIENTATIONS)
    return cells[cell] * rules.NUM_ORIENTATIONS + orientations[orientation]


@cache
def _action_map(k: int, grid: int) -> NDArray[np.intp]:
    layout = rules.ActionLayout(grid)
    images = np.arange(layout.num_actions, dtype=np.intp)
    targets = target_map(k, grid)
    for size in range(3):
        start = layout.place_base + size * layout.num_targets
        images[start : start + layout.num_targets] = start + targets
    images.setflags(write=False)
    return images


def action_map(k: int, grid: int) -> NDArray[np.intp]:
    """Action ``a`` -> its image under map ``k`` (a permutation of ``0..num_actions-1``)."""
    return _action_map(_check(k), int(grid))


def transform_action(action: int, k: int, grid: int) -> int:
    return int(action_map(k, grid)[action])


def transform_mask(mask: NDArray, k: int, grid: int) -> NDArray:
    """The legal-action mask (or logits, visit counts) of the mapped position."""
    return permute_actions(np.asarray(mask), action_map(k, grid))


@cache
def observation_permutation(k: int, num_players: int) -> tuple[NDArray[np.intp], NDArray[np.float32]]:
    """``(index, sign)`` with ``transform_observation(x, k) == sign * x[index]``: every map is a
    signed permutation of the slots' ``x, y`` and ``axis_x, axis_y`` (all else stays)."""
    matrix = MATRICES[_check(k)]
    size = rules.observation_size(num_players)
    index = np.arange(size, dtype=np.intp)
    sign = np.ones(size, dtype=np.float32)
    for player in range(num_players):
        for slot in range(rules.MAX_SLOTS):
            base = player * PLAYER_FEATURES + slot * SLOT_FEATURES
            for pair in (POSITION_FEATURES, AXIS_FEATURES):
                for row in range(2):
                    column = int(np.flatnonzero(matrix[row])[0])  # one non-zero entry per row
                    index[base + pair[row]] = base + pair[column]
                    sign[base + pair[row]] = matrix[row, column]
    index.setflags(write=False)
    sign.setflags(write=False)
    return index, sign


def transform_observation(observation: NDArray, k: int, num_players: int) -> NDArray:
    """The flat observation vector (``raw_env.observe(agent)["observation"]``, or a batch of
    them on the last axis) of the mapped piles."""
    index, sign = observation_permutation(_check(k), int(num_players))
    observation = np.asarray(observation)
    return (observation[..., index] * sign).astype(observation.dtype)


def transform_point(point: tuple[float, float], k: int) -> tuple[float, float]:
    """A point on the table (metres from the pile centre) under map ``k``."""
    x, y = MATRICES[_check(k)] @ np.asarray(point, dtype=float)
    return float(x), float(y)
