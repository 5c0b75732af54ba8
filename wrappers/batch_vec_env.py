"""An SB3 ``VecEnv`` over a batch core: the learner's seat in B games against a batched opponent.

    from sb3_contrib import MaskablePPO
    from polarzoo.wrappers.batch_vec_env import BatchVecEnv
    venv = BatchVecEnv("fire_and_ice_v0", num_envs=64, opponent="random", seed=0)
    model = MaskablePPO("MlpPolicy", venv)       # masks via env_method("action_masks")

The learner plays Fire in even-numbered games of each slot and Ice in odd ones (alternating per
game), the opponent moves inside ``step`` (uniformly random legal actions, or a frozen
MaskablePPO model acting on all games at once), and the learner receives the true final outcome,
including the -1 when the opponent's move ends the game.  Observations are flattened float32 in
[0, 1], the same as :class:`polarzoo.wrappers.SingleAgentEnv`, so models move freely between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray
from stable_baselines3.common.vec_env import VecEnv

from polarzoo.envs.batch.core import sample_legal_actions
from polarzoo.wrappers.single_agent import observation_scale


class BatchVecEnv(VecEnv):
    """``num_envs`` games of ``env_id`` in one batch core (see the module docstring)."""

    def __init__(
        self,
        env_id: str,
        num_envs: int = 64,
        opponent: Any = "random",
        seed: int | None = None,
        shaping: float = 0.0,
        gamma: float = 0.99,
    ) -> None:
        from polarzoo.envs import ENVIRONMENTS
        from polarzoo.envs.batch import BATCH_CORES

        if env_id not in BATCH_CORES:
            raise ValueError(f"no batch core for {env_id!r}; available: {sorted(BATCH_CORES)}")
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive whole number; got {num_envs!r}")
        if isinstance(opponent, str) and opponent != "random":
            # A file is read by the baselines' loader (it never unpickles); this layer takes the model.
            raise ValueError(
                f"opponent must be 'random' or a model object (a file: "
                f"polarzoo.baselines.policies.weights.load_policy(path)); got {opponent[:80]!r}"
            )
        self.env_id = env_id
        self.core = BATCH_CORES[env_id](num_envs, seed=seed)
        aec = ENVIRONMENTS[env_id].raw_env()
        raw_space = aec.observation_space(aec.possible_agents[0])["observation"]
        self._scale = observation_scale(raw_space)
        observation_space = gym.spaces.Box(0.0, 1.0, (int(np.prod(raw_space.shape)),), dtype=np.float32)
        action_space = gym.spaces.Discrete(self.core.num_actions)
        self.render_mode = None
        super().__init__(num_envs, observation_space, action_space)
        self.opponent = opponent
        self.rng = np.random.default_rng(seed)
        self.learner_colour = np.zeros(num_envs, dtype=np.int8)
        self._games = np.zeros(num_envs, dtype=np.int64)
        self._returns = np.zeros(num_envs, dtype=np.float32)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._actions: NDArray[np.int64] | None = None
        self.shaping = float(shaping)
        self.gamma = float(gamma)
        self._potential = np.zeros(num_envs, dtype=np.float32)

    # ---- helpers ----------------------------------------------------------------------------
    def _normalise(self, observations: NDArray) -> NDArray[np.float32]:
        return observations.reshape(self.num_envs, -1).astype(np.float32) * self._scale

    def _opponent_actions(self, mask: NDArray[np.int8], observations: NDArray) -> NDArray[np.int64]:
        if isinstance(self.opponent, str):  # random
            return sample_legal_actions(mask, self.rng)
        actions, _ = self.opponent.predict(self._normalise(observations), action_masks=mask.astype(bool), deterministic=False)
        return np.asarray(actions, dtype=np.int64)

    def _play_opponents(self, rewards: NDArray[np.float32], dones: NDArray[np.bool_], infos: list[dict[str, Any]]) -> None:
        """Opponent moves until every game waits for the learner (games may end and restart)."""
        for _ in range(4):
            waiting = self.core.to_move != self.learner_colour
            if not waiting.any():
                return
            observations = self.core.observe()
            result = self.core.step(
                self._opponent_actions(self.core.mask, observations), active=waiting, observer=self.learner_colour
            )
            self._finish(result, rewards, dones, infos)
        raise RuntimeError("the opponent kept the move for more than 4 consecutive turns")  # pragma: no cover

    def _finish(self, result: Any, rewards: NDArray[np.float32], dones: NDArray[np.bool_], infos: list[dict[str, Any]]) -> None:
        for i in np.flatnonzero(result.terminated):
            reward = float(result.rewards[i, self.learner_colour[i]])
            rewards[i] += reward
            self._returns[i] += reward
            dones[i] = True
            infos[i]["terminal_observation"] = result.final_observation[i].ravel().astype(np.float32) * self._scale
            infos[i]["episode"] = {"r": float(self._returns[i]), "l": int(self._lengths[i])}
            infos[i]["is_success"] = reward > 0
            self._returns[i] = 0.0
            self._lengths[i] = 0
            self._games[i] += 1
            self.learner_colour[i] = self._games[i] % 2

    # ---- VecEnv API -------------------------------------------------------------------------
    def reset(self) -> NDArray[np.float32]:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.core.reset(seed)
        self._reset_seeds()
        self._games[:] = 0
        self.learner_colour[:] = 0
        self._returns[:] = 0
        self._lengths[:] = 0
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        self._play_opponents(rewards, dones, [{} for _ in range(self.num_envs)])
        self._potential = self.shaping * self.core.potential(self.learner_colour) if self.shaping else self._potential * 0
        return self._normalise(self.core.observe())

    def step_async(self, actions: NDArray) -> None:
        array = np.asarray(actions)
        # Reject, never truncate: a float 3.7 or a string is a caller's bug, not action 3.
        if array.shape != (self.num_envs,) or not np.issubdtype(array.dtype, np.integer):
            raise TypeError(f"actions must be integers of shape ({self.num_envs},); got {array.dtype} {array.shape}")
        self._actions = array.astype(np.int64)

    def step_wait(self) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_], list[dict[str, Any]]]:
        assert self._actions is not None, "step_async first"
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        result = self.core.step(self._actions, observer=self.learner_colour)  # raises on bad actions: nothing counted
        self._lengths += 1
        self._finish(result, rewards, dones, infos)
        self._play_opponents(rewards, dones, infos)
        if self.shaping:
            # Potential-based shaping (Ng et al. 1999): gamma * phi(s') - phi(s), phi(terminal) = 0,
            # so the optimal policy, and every win/loss the learner sees, stay the same.
            potential = self.shaping * self.core.potential(self.learner_colour)
            potential[dones] = 0.0
            rewards += np.where(dones, 0.0, self.gamma * potential) - self._potential
            self._potential = potential
        return self._normalise(self.core.observe()), rewards, dones, infos

    def action_masks(self) -> NDArray[np.bool_]:
        return self.core.mask.astype(bool)

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(rows)

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)
