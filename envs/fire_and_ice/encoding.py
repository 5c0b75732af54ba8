"""Fire & Ice's observation encoding (the ``observation`` of ``fire_and_ice_v0``, see its
docstring): written once here, read by the AEC env, the batch core, the JAX twin's tests, the
OpenSpiel game and the search agents.  No PettingZoo or Gymnasium import (the rules layer)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.fire_and_ice import kernels, rules

NUM_CHANNELS = 9
SUPPLY_CHANNELS = (7, 8)
#: The observation's shape: (island, position, channel).
OBSERVATION_SHAPE = (rules.NUM_ISLANDS, rules.NUM_POSITIONS, NUM_CHANNELS)


def observation_tensor(state: rules.State, colour: int, control: NDArray[np.int8] | None = None) -> NDArray[np.int8]:
    """The (7, 7, 9) int8 observation of ``state`` for ``colour`` (see the module docstring);
    written by the compiled kernel the batch core uses (:mod:`polarzoo.envs.fire_and_ice.kernels`)."""
    if control is None:
        control = rules.island_control(state.board)
    obs = np.empty((rules.NUM_ISLANDS, rules.NUM_POSITIONS, NUM_CHANNELS), dtype=np.int8)
    kernels.write_observation(state.board, state.to_move, state.supply, state.winner, control, colour, obs.reshape(-1))
    return obs


# The readable specification of the encoding above, kept as the reference the compiled kernel is
# tested against (tests/test_batch.py): board value -> channels 0-2, controller + 1 -> channels 3-4.
_PEG_TABLE = np.array(
    [[[0, 0, 1], [1, 0, 0], [0, 1, 0]], [[0, 0, 1], [0, 1, 0], [1, 0, 0]]], dtype=np.int8
)  # [colour][EMPTY, FIRE + 1, ICE + 1]
_CONTROL_TABLE = np.array([[[0, 0], [1, 0], [0, 1]], [[0, 0], [0, 1], [1, 0]]], dtype=np.int8)  # [colour][-1, FIRE, ICE]


def reference_observation_tensor(state: rules.State, colour: int) -> NDArray[np.int8]:
    """:func:`observation_tensor` in plain numpy (the specification; slower)."""
    control = rules.island_control(state.board)
    obs = np.empty((rules.NUM_ISLANDS, rules.NUM_POSITIONS, NUM_CHANNELS), dtype=np.int8)
    obs[:, :, 0:3] = _PEG_TABLE[colour][state.board].reshape(rules.NUM_ISLANDS, rules.NUM_POSITIONS, 3)
    obs[:, :, 3:5] = _CONTROL_TABLE[colour][control + 1][:, None, :]
    obs[:, :, 5:9] = (
        state.to_move == colour and state.winner < 0,
        colour == rules.FIRE,
        state.supply[colour],
        state.supply[1 - colour],
    )
    return obs


def observation_high() -> NDArray[np.int8]:
    """Each observation value's largest value (the smallest is 0): 1, the pegs in supply 25."""
    high = np.ones(OBSERVATION_SHAPE, dtype=np.int8)
    high[:, :, list(SUPPLY_CHANNELS)] = rules.PEGS_PER_PLAYER
    return high
