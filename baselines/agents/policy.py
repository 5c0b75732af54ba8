"""A saved MaskablePPO model as an agent (``model:PATH``, ``pretrained``)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents.base import unpickled
from polarzoo.baselines.policies.weights import load_policy
from polarzoo.envs import ENVIRONMENTS, GAMES, game_info

#: Probabilities within this relative distance of the best are a tie, which goes to the lowest
#: action id.  The equivariant board networks give symmetric moves the same probability up to
#: float rounding, and the rounding depends on the number of torch threads: without this rule a
#: greedy agent's move in about one Fire & Ice position in ten changed with the thread count.
TIE_TOLERANCE = 1e-4


def greedy_action(probabilities: np.ndarray) -> int:
    """The most probable action; a tie (:data:`TIE_TOLERANCE`) goes to the lowest action id."""
    best = float(probabilities.max())
    return int(np.flatnonzero(probabilities >= best * (1.0 - TIE_TOLERANCE))[0])


@functools.cache
def _game_sizes(env_id: str) -> tuple[int, int]:
    probe = ENVIRONMENTS[env_id].raw_env()
    agent = probe.possible_agents[0]
    return int(probe.action_space(agent).n), int(np.prod(probe.observation_space(agent)["observation"].shape))


def fixed_game_sizes() -> dict[str, tuple[int, int]]:
    """(actions, observation values) of every game whose sizes do not depend on its arguments."""
    return {env_id: _game_sizes(env_id) for env_id, info in GAMES.items() if not info.variable_players}


class PolicyAgent:
    """A MaskablePPO policy (a model file at ``path``: ``.safetensors`` or an SB3 ``.zip``, read
    without unpickling by :func:`polarzoo.baselines.policies.weights.load_policy`; or given as
    ``model``), acting on its masked policy
    (greedy unless ``deterministic=False``; a tie goes to the lowest action id, see
    :data:`TIE_TOLERANCE`).  Observations are normalised the way
    :class:`polarzoo.wrappers.SingleAgentEnv` normalised them in training."""

    def __init__(
        self, path: str | Path | None = None, deterministic: bool = True, name: str | None = None, model: Any = None
    ) -> None:
        if model is None:
            if path is None:
                raise ValueError("PolicyAgent needs a path or a model")
            from polarzoo.envs.utils import require

            require("sb3_contrib", "a saved model (model:PATH, pretrained)")
            model = load_policy(path)  # data only: nothing in the file runs (docs/security.md)
        self.path = None if path is None else str(path)
        self.model = model
        self.deterministic = deterministic
        self.name = name or (f"model:{Path(self.path).parent.name}/{Path(self.path).stem}" if self.path else "model")
        self._scales: dict[int, np.ndarray] = {}

    def check_fits(self, env_id: str) -> PolicyAgent:
        """``ValueError`` when the model was trained on another game (its action or observation
        size differs from ``env_id``'s default env): said at load time, not at the first move."""
        sizes = fixed_game_sizes()
        games = {actions: game for game, (actions, _) in sizes.items()}
        model_actions = getattr(self.model.action_space, "n", None)
        if env_id not in sizes:  # a game whose sizes vary with its arguments (Thin Ice): a board game's model does not fit
            if model_actions in games and games[model_actions] != env_id:
                raise ValueError(
                    f"{self.path or 'the model'} is a {games[model_actions]} model ({model_actions} actions), not a {env_id} one"
                )
            return self
        actions, size = sizes[env_id]
        model_size = int(np.prod(self.model.observation_space.shape))
        if model_actions != actions or model_size != size:
            hint = f" (it looks like a {games[model_actions]} model)" if model_actions in games else ""
            raise ValueError(
                f"{self.path or 'the model'} does not fit {env_id}: it takes {model_size} observation values "
                f"and {model_actions} actions, {env_id} has {size} and {actions}{hint}"
            )
        return self

    def _model_input(self, env: Any, agent: str) -> tuple[np.ndarray, np.ndarray]:
        from polarzoo.wrappers.single_agent import normalize, observation_scale

        observation = env.observe(agent)
        raw = observation["observation"]
        if len(self.model.observation_space.shape) == 1 and raw.ndim > 1:
            space = env.observation_space(agent)["observation"]
            scale = self._scales.get(id(space))
            if scale is None:
                scale = self._scales[id(space)] = observation_scale(space)
            raw = normalize(raw, scale)
        elif raw.ndim == 1 and len(self.model.observation_space.shape) == 1:
            size = int(self.model.observation_space.shape[0])
            if raw.shape[0] < size:
                # A model trained on tables of several sizes (Thin Ice) reads each padded to the
                # largest (wrappers.SingleAgentEnv); a smaller table is padded the same way here.
                pad, players_of_size = game_info(env.unwrapped.metadata["name"]).observation_padding()
                raw = pad(np.asarray(raw, dtype=np.float32), players_of_size(size))
        return raw, observation["action_mask"].astype(bool)

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        raw, mask = self._model_input(env, agent)
        distribution = self._distribution(raw[None], mask[None])
        if not self.deterministic:
            return self._sample(distribution, [rng])[0]
        return greedy_action(distribution.distribution.probs.cpu().numpy()[0])

    @staticmethod
    def _sample(distribution: Any, rngs: Sequence[np.random.Generator]) -> list[int]:
        """One action per row, drawn with the game's own generator (not torch's global one: the
        draws are then reproducible in any process, and a checkpoint of the envs holds them)."""
        probabilities = distribution.distribution.probs.cpu().numpy().astype(np.float64)
        actions = []
        for row, rng in zip(probabilities, rngs):
            cumulative = np.cumsum(row)
            actions.append(int(min(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"), len(row) - 1)))
        return actions

    def _distribution(self, raw: np.ndarray, masks: np.ndarray) -> Any:
        """The masked action distribution of a batch of observations of any size the network
        reads (SB3's ``predict`` accepts only the training size; the Thin Ice pile policy plays
        any number of players)."""
        import torch

        policy = self.model.policy
        with torch.no_grad():
            observation = torch.as_tensor(np.asarray(raw, dtype=np.float32), device=policy.device)
            return policy.get_distribution(observation, action_masks=masks)

    def action_probabilities(self, env: Any, agent: str) -> np.ndarray:
        """The masked policy's probability of every action (zero for illegal ones)."""
        raw, mask = self._model_input(env, agent)
        return self._distribution(raw[None], mask[None]).distribution.probs.cpu().numpy().reshape(-1)

    def value(self, env: Any, agent: str) -> float:
        """The critic's estimate of ``agent``'s return from this position (about -1 lost .. +1 won)."""
        import torch

        raw, _ = self._model_input(env, agent)
        policy = self.model.policy
        with torch.no_grad():
            observation = torch.as_tensor(np.asarray(raw, dtype=np.float32)[None], device=policy.device)
            return float(policy.predict_values(observation).reshape(-1)[0])

    def act_batch(self, envs: Sequence[Any], agents: Sequence[str], rngs: Sequence[np.random.Generator]) -> list[int]:
        """One move in each of several games with one forward pass of the network (what
        :class:`polarzoo.wrappers.opponent_batching.OpponentBatchingVecEnv` calls)."""
        inputs = [self._model_input(env, agent) for env, agent in zip(envs, agents)]
        raws, masks = np.stack([raw for raw, _ in inputs]), np.stack([mask for _, mask in inputs])
        distribution = self._distribution(raws, masks)
        if not self.deterministic:
            return self._sample(distribution, rngs)
        return [greedy_action(row) for row in distribution.distribution.probs.cpu().numpy()]

    @property
    def batch_key(self) -> tuple[Any, ...] | None:
        """What makes two agents play the same (their model file and sampling): agents with equal
        keys answer in one batched pass (:class:`polarzoo.wrappers.opponent_batching.OpponentBatchingVecEnv`);
        ``None`` for an in-memory model (then only the object itself)."""
        if self.path is None:
            return None
        return ("PolicyAgent", self.path, self.deterministic)

    def __getstate__(self) -> dict[str, Any]:  # subprocesses reload the model from disk
        if self.path is None:
            raise TypeError("a PolicyAgent built from an in-memory model cannot be pickled; save the model first")
        return {"path": self.path, "deterministic": self.deterministic, "name": self.name}

    def __setstate__(self, state: dict[str, Any]) -> None:
        path = state["path"]
        self.__dict__.update(unpickled(path, (), lambda: type(self)(path)))
        self.deterministic, self.name = state["deterministic"], state["name"]
