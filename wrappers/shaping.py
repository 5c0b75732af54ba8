"""Potential-based reward shaping (Ng, Harada & Russell, 1999) for :class:`SingleAgentEnv`.

The learner's reward gets ``scale * (gamma * phi(s') - phi(s))`` added, with ``phi`` a heuristic
value of the position for the learner and ``phi = 0`` once the episode ends, so the optimal
policies are those of the unshaped game.  ``info["episode_return"]`` and SB3's ``Monitor`` (put it
inside this wrapper) keep reporting the game's own rewards.

    env = PotentialShaping(Monitor(SingleAgentEnv("go_with_the_floe_v0")), scale=1.0, gamma=0.99)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from polarzoo.wrappers.single_agent import SingleAgentEnv


class PotentialShaping(gym.Wrapper):
    """Adds ``scale * (gamma * phi(s') - phi(s))`` to each reward of a wrapped SingleAgentEnv."""

    def __init__(self, env: gym.Env, scale: float = 1.0, gamma: float = 0.99) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not isinstance(base, SingleAgentEnv):
            raise TypeError(f"PotentialShaping wraps a SingleAgentEnv, got {type(base).__name__}")
        # a game that shapes says so: its env's shaping_potential(agent) (Go with the Floe's)
        potential = getattr(base.aec.unwrapped, "shaping_potential", None)
        if not callable(potential):
            raise ValueError(f"no shaping potential for {base.env_id}: its env has no shaping_potential(agent)")
        self._potential_of, self.scale, self.gamma = potential, float(scale), float(gamma)
        self._phi = 0.0

    def _phi_now(self) -> float:
        base: Any = self.env.unwrapped
        return self.scale * float(self._potential_of(base.learner))

    def reset(self, **kwargs: Any) -> Any:
        observation, info = self.env.reset(**kwargs)
        self._phi = self._phi_now()
        return observation, info

    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if (terminated or truncated) else self._phi_now()
        reward = float(reward) + self.gamma * phi - self._phi
        self._phi = phi
        return observation, reward, terminated, truncated, info

    def action_masks(self) -> Any:
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined]
