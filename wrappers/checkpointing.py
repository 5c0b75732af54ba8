"""A wrapper whose whole env stack can be saved and put back in place, for exact checkpoints.

A training run that is interrupted and resumed should continue exactly where it stopped: the
games in progress (mid-episode), every generator (the env's, the opponents' draws), the
opponent pool and the wrappers' own state (``Monitor``'s episode sums, reward shaping's last
potential).  :class:`Checkpointable` is the outermost wrapper of each env of a vector env;
``vec_env.env_method("get_state")`` returns each env stack as data (a JSON tree and NumPy arrays:
:func:`polarzoo.envs.utils.encode_state`; no pickle, in subprocesses too), and
``env_method("set_state", saved, indices=[i])`` puts a saved stack's state into the live objects
layer by layer (:func:`polarzoo.envs.utils.restore_state`: it builds nothing the file names), so
references held elsewhere (``OpponentBatchingVecEnv`` keeps the
:class:`~polarzoo.wrappers.SingleAgentEnv` underneath) stay valid.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from polarzoo.envs.utils import encode_state, restore_state


class Checkpointable(gym.Wrapper):
    """Passes everything through; adds :meth:`get_state` and :meth:`set_state`."""

    def get_state(self) -> tuple[Any, dict[str, np.ndarray]]:
        """The env stack below this wrapper as data: ``(tree, arrays)`` (games in progress and
        generators included)."""
        return encode_state(self.env)

    def set_state(self, saved: tuple[Any, dict[str, np.ndarray]], where: str = "checkpoint") -> None:
        """Make the live env stack continue exactly as the saved one would; ``DataError`` (one
        line) for a saved stack that is not this one's."""
        tree, arrays = saved
        restore_state(self.env, tree, arrays, where)
