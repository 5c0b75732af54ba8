"""A wrapper whose whole env stack can be saved and put back in place, for exact checkpoints.

A training run that is interrupted and resumed should continue exactly where it stopped: the
games in progress (mid-episode), every generator (the env's, the opponents' draws), the
opponent pool and the wrappers' own state (``Monitor``'s episode sums, reward shaping's last
potential).  :class:`Checkpointable` is the outermost wrapper of each env of a vector env;
``vec_env.env_method("get_state")`` returns each env stack pickled (in subprocesses too), and
``env_method("set_state", blob, indices=[i])`` copies a saved stack's state into the live
objects layer by layer, so references held elsewhere (``OpponentBatchingVecEnv`` keeps the
:class:`~polarzoo.wrappers.SingleAgentEnv` underneath) stay valid.
"""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym

from polarzoo.envs.utils import restricted_loads


def _layers(env: Any) -> list[Any]:
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


class Checkpointable(gym.Wrapper):
    """Passes everything through; adds :meth:`get_state` and :meth:`set_state`."""

    def get_state(self) -> bytes:
        """The env stack below this wrapper, pickled (games in progress and generators included)."""
        return pickle.dumps(self.env)

    def set_state(self, blob: bytes) -> None:
        """Make the live env stack continue exactly as the saved one would."""
        saved = restricted_loads(blob)  # a checkpoint from elsewhere builds no arbitrary callable
        live, stored = _layers(self.env), _layers(saved)
        if [type(layer) for layer in live] != [type(layer) for layer in stored]:
            raise ValueError(
                f"the saved env stack {[type(x).__name__ for x in stored]} is not this one {[type(x).__name__ for x in live]}"
            )
        for mine, theirs in zip(live, stored):
            for key, value in vars(theirs).items():
                if key != "env":  # the layer below stays the live object (its state is copied next)
                    setattr(mine, key, value)
