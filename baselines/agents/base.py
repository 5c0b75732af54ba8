"""What every agent is: ``act(env, agent, rng) -> action`` on the unwrapped AEC env, and the
uniformly random agent."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Agent(Protocol):
    name: str

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int: ...


def legal_actions(env: Any, agent: str) -> np.ndarray:
    return np.flatnonzero(env.observe(agent)["action_mask"])


class RandomAgent:
    """Uniformly random legal actions."""

    name = "random"

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        return int(rng.choice(legal_actions(env, agent)))
