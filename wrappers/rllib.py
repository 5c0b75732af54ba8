"""Ray RLlib adapters: our turn-based envs as RLlib multi-agent envs.

    from polarzoo.wrappers.rllib import register_env
    name = register_env("fire_and_ice_v0")          # "polarzoo_fire_and_ice_v0" in Ray's registry
    config = PPOConfig().environment(name, env_config={})  # env_config: the env's kwargs

RLlib's action-masking modules read the observation dict ``{"observations", "action_mask"}``
(plural), as float tensors; :class:`RLlibObservation` gives that view of any of our AEC envs
(the observation flattened to float32 in [0, 1], scaled as :class:`SingleAgentEnv` does, and the
mask as float32), and RLlib's ``PettingZooEnv`` turns the AEC env into a ``MultiAgentEnv`` in
which each agent acts on its turn and losers receive their -1.  The masking RLModule with the
board networks is in :mod:`polarzoo.baselines.rllib_train`.
Needs the ``rllib`` extra (``pip install -e ".[rllib]"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from polarzoo.wrappers.single_agent import observation_scale


class RLlibObservation(BaseWrapper):
    """``{"observations": float32 (n,), "action_mask": float32 (A,)}`` for every agent."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        agent = env.possible_agents[0]
        raw = env.observation_space(agent)
        self._scale = observation_scale(raw["observation"])
        size = int(np.prod(raw["observation"].shape))
        actions = raw["action_mask"].shape[0]
        self._space = spaces.Dict(
            {
                "observations": spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (actions,), dtype=np.float32),
            }
        )

    def observation_space(self, agent: str) -> spaces.Space:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        raw = self.env.observe(agent)
        return {
            "observations": raw["observation"].ravel().astype(np.float32) * self._scale,
            "action_mask": raw["action_mask"].astype(np.float32),
        }


def env_name(env_id: str) -> str:
    return f"polarzoo_{env_id}"


def make_multi_agent_env(env_id: str, env_config: dict[str, Any] | None = None) -> Any:
    """RLlib ``PettingZooEnv`` over ``env()`` (standard wrappers) seen through :class:`RLlibObservation`."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from polarzoo.envs import ENVIRONMENTS

    if env_id not in ENVIRONMENTS:
        raise ValueError(f"unknown env id {env_id!r}; known: {sorted(ENVIRONMENTS)}")
    return PettingZooEnv(RLlibObservation(ENVIRONMENTS[env_id].env(**dict(env_config or {}))))


def register_env(env_id: str) -> str:
    """Register ``env_id`` with Ray Tune's registry; returns the name to give RLlib."""
    from ray.tune.registry import register_env as ray_register_env

    name = env_name(env_id)
    ray_register_env(name, lambda config: make_multi_agent_env(env_id, config))
    return name
