"""Go with the Floe's observation encoding (the ``observation`` of ``go_with_the_floe_v0``, see
its docstring): written once here, read by the AEC env, the batch core, the JAX twin's tests, the
OpenSpiel game and the search agents.  No PettingZoo or Gymnasium import (the rules layer)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.go_with_the_floe import kernels, rules

NUM_CHANNELS = 11
MAX_MATCH_SCORE = 2 * rules.NUM_ON_BOARD
#: The observation's shape: (row, column, channel).
OBSERVATION_SHAPE = (rules.SIZE, rules.SIZE, NUM_CHANNELS)


def observation_tensor(
    state: rules.State, colour: int, second_game: bool = False, scores: tuple[int, int] = (0, 0)
) -> NDArray[np.int8]:
    """The (8, 8, 11) observation of ``state`` for the player of ``colour`` (module docstring);
    written by the compiled kernel the batch core uses (:mod:`polarzoo.envs.go_with_the_floe.kernels`)."""
    obs = np.empty((rules.NUM_SQUARES, NUM_CHANNELS), dtype=np.int8)
    kernels.write_observation(state.board, state.rings, state.to_move, state.passes, state.winner, colour, obs.reshape(-1))
    if second_game or scores[0] or scores[1]:
        obs[:, 8:11] = (second_game, scores[0], scores[1])
    return obs.reshape(rules.SIZE, rules.SIZE, NUM_CHANNELS)


# The readable specification of the encoding, kept as the reference the compiled kernel is tested
# against (tests/test_batch.py).  [colour][EMPTY, SEAL, BEAR] -> channels 0-1.
_TOKEN_TABLE = np.array([[[0, 0], [1, 0], [0, 1]], [[0, 0], [0, 1], [1, 0]]], dtype=np.int8)
_SCALAR_CHANNELS = [4, 5, 7, 8, 9, 10]


def reference_observation_tensor(
    state: rules.State, colour: int, second_game: bool = False, scores: tuple[int, int] = (0, 0)
) -> NDArray[np.int8]:
    """:func:`observation_tensor` in plain numpy (the specification; slower)."""
    obs = np.empty((rules.NUM_SQUARES, NUM_CHANNELS), dtype=np.int8)
    obs[:, 0:2] = _TOKEN_TABLE[colour][state.board]
    obs[:, 2] = state.rings
    obs[:, 3] = rules.ON_BOARD
    obs[:, 6] = rules.ON_BOARD & ~state.rings & (state.board == rules.EMPTY)
    obs[:, _SCALAR_CHANNELS] = (
        colour == rules.WHITE,
        state.to_move == colour and state.winner < 0,
        state.passes > 0,
        second_game,
        scores[0],
        scores[1],
    )
    return obs.reshape(rules.SIZE, rules.SIZE, NUM_CHANNELS)


def observation_high() -> NDArray[np.int8]:
    """Each observation value's largest value (the smallest is 0): 1, the match scores 104."""
    high = np.ones(OBSERVATION_SHAPE, dtype=np.int8)
    high[:, :, 9:] = MAX_MATCH_SCORE
    return high
