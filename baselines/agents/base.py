"""What every agent is: ``act(env, agent, rng) -> action`` on the unwrapped AEC env, and the
uniformly random agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
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


#: Agents rebuilt from their files in this process, by what they were built from.
_UNPICKLED: dict[tuple, Any] = {}


def unpickled(path: str | Path, settings: tuple, build: Callable[[], Any]) -> dict[str, Any]:
    """The attributes of an agent that a worker process rebuilds from its model file, once per
    file and settings in the process: game tasks pickle their agents one game at a time, and
    loading a model (or compiling a search) for each game would cost more than the game.  The
    agents that use it keep no state between moves, so one loaded model serves every game.  A
    file changed since (its size or time) is loaded again."""
    try:
        stat = Path(path).stat()
        stamp: tuple = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        stamp = ()
    key = (str(path), settings, stamp)
    if key not in _UNPICKLED:
        _UNPICKLED[key] = build()
    return dict(_UNPICKLED[key].__dict__)
