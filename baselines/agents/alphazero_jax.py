"""A trained AlphaZero-on-JAX network as an agent (``az-jax:[N:]PATH``, ``az-jax:pretrained``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import unpickled
from polarzoo.baselines.policies.alphazero_jax import load_model, make_search, require_jax, twin_facts


class AlphaZeroJaxAgent:
    """Plays a trained network in the PettingZoo env: Gumbel MuZero search (deterministic, no
    root noise) with ``simulations`` evaluations on the JAX twin from the game's position."""

    def __init__(self, path: str | Path, env_id: str, simulations: int | None = None) -> None:
        self._arguments = (str(path), env_id, simulations)
        jax, _ = require_jax()
        from polarzoo.envs import jax_envs

        self.net, self.params, meta = load_model(path)
        expected = twin_facts(self.net.game)["pettingzoo"]
        if env_id != expected:
            raise ValueError(f"{path} is an az-jax model for {expected}, not {env_id}")
        self.simulations = int(simulations or meta["simulations"])
        if self.simulations < 1:
            raise ValueError(f"az-jax simulations must be >= 1, got {self.simulations}")
        self.name = f"az-jax{self.simulations}"
        self.env = jax_envs.make(self.net.game)
        self._twin = __import__(type(self.env).__module__, fromlist=["from_rules"])
        search = make_search(self.env, self.net, self.simulations, gumbel_scale=0.0)
        self._search = jax.jit(lambda params, key, state: search(params, key, jax.tree.map(lambda a: a[None], state)).action[0])

    def __getstate__(self) -> dict[str, Any]:
        # A worker process rebuilds the agent from its file (a jitted search does not pickle).
        return {"arguments": self._arguments, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        arguments = state["arguments"]
        self.__dict__.update(unpickled(arguments[0], arguments[1:], lambda: type(self)(*arguments)))
        self.name = state["name"]

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        jax, _ = require_jax()
        state = self._twin.from_rules(env.unwrapped.state)
        key = jax.random.PRNGKey(int(rng.integers(2**31 - 1)))
        return int(self._search(self.params, key, state))
