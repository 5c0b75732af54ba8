"""MaskablePPO whose rollouts step each env as soon as its last step is back (``rollouts: async``).

SB3 collects a rollout in lock step: one forward pass for all envs, every env stepped, then wait
for the slowest.  Thin Ice's steps are heavy-tailed (a pile that topples settles for many physics
steps: median 1.2 ms, 90th percentile 17 ms), so in lock step a core often idles while one env
settles.  :class:`AsyncRolloutPPO` (with :class:`~polarzoo.wrappers.subproc.MaskCachingSubprocVecEnv`)
gives an env its next action as soon as its result is in, until every env has made ``n_steps``
steps; the rollout buffer gets the same per-env trajectories as a lock step would, the update is
MaskablePPO's own.

A result must not depend on which env happened to finish first (the machine's load), so:

* every env samples its actions from its own generator (seeded at the start of each rollout from
  torch's global generator, which ``--resume`` restores), by the Gumbel-max trick on the masked
  log-probabilities the policy gives;
* every forward pass is of one observation (a batch of whichever envs are ready would round
  differently from one run to the next);
* the callbacks' ``on_step`` (snapshots, evaluations, progress) and the episode statistics run
  after the rollout, step by step in lock-step order, with the envs idle: a new opponent pool
  then reaches the envs at the next rollout instead of mid-rollout.

So a run is reproducible from its seed and config, and an exact resume (update boundaries) works
as with lock-step rollouts; the rollouts differ from lock-step ones only in the random numbers
drawn (a frozen trained policy samples the same games from each learner seat:
``benchmarks.rollout_seats``).  Thin Ice's learning A/B puts it within the seed spread of lock
step's but below it on average (results page "Thin Ice physics", sessions 21-22), so it is
opt-in, not a default.
Other vectorised envs (or ``Dict`` observations) fall back to MaskablePPO's own collector.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from polarzoo.baselines.policies.sb3 import gumbel_max


class AsyncRolloutPPO(MaskablePPO):
    """``MaskablePPO`` with the asynchronous, load-independent collector of the module docstring
    (for vectorised envs with ``send_step`` / ``ready`` / ``receive_step``); a model it saves
    loads with ``MaskablePPO.load``."""

    def collect_rollouts(self, env: VecEnv, callback: BaseCallback, rollout_buffer: Any, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        if not (use_masking and hasattr(env, "send_step") and isinstance(self.observation_space, spaces.Box)
                and isinstance(self.action_space, spaces.Discrete)):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()  # an update boundary: --resume restores the generators drawn below
        n_envs = env.num_envs
        seeds = torch.randint(0, 2**62, (n_envs,), dtype=torch.int64).tolist()
        generators = [torch.Generator().manual_seed(seed) for seed in seeds]
        observations = np.array(self._last_obs, copy=True)
        starts = np.array(self._last_episode_starts, dtype=bool, copy=True)
        masks = [np.asarray(mask, dtype=bool) for mask in get_action_masks(env)]
        shape = (n_rollout_steps, n_envs)
        record = {
            "obs": np.zeros(shape + observations.shape[1:], dtype=observations.dtype),
            "action": np.zeros(shape, dtype=np.int64), "reward": np.zeros(shape, dtype=np.float32),
            "start": np.zeros(shape, dtype=bool), "value": np.zeros(shape, dtype=np.float32),
            "log_prob": np.zeros(shape, dtype=np.float32), "mask": np.zeros(shape + masks[0].shape, dtype=bool),
            "done": np.zeros(shape, dtype=bool),
        }
        infos: list[list[dict[str, Any]]] = [[{} for _ in range(n_envs)] for _ in range(n_rollout_steps)]
        counts = [0] * n_envs
        pending: set[int] = set()

        def act(index: int) -> None:
            step = counts[index]
            action, value, log_prob = self._act_one(observations[index], masks[index], generators[index])
            record["obs"][step, index], record["mask"][step, index] = observations[index], masks[index]
            record["start"][step, index] = starts[index]
            record["action"][step, index], record["value"][step, index], record["log_prob"][step, index] = action, value, log_prob
            env.send_step(index, np.int64(action))
            pending.add(index)

        try:
            for index in range(n_envs):
                act(index)
            while pending:
                for index in env.ready(pending):
                    pending.discard(index)
                    observation, reward, done, info, mask = env.receive_step(index)
                    step = counts[index]
                    if done and info.get("terminal_observation") is not None and info.get("TimeLimit.truncated", False):
                        # A truncated episode (not a loss or a win): bootstrap with the value of its last position.
                        reward += self.gamma * self._value_one(info["terminal_observation"])
                    record["reward"][step, index], record["done"][step, index] = reward, done
                    infos[step][index] = info
                    counts[index] += 1
                    observations[index], starts[index] = observation, done
                    masks[index] = mask if mask is not None else np.asarray(env.env_method("action_masks", indices=[index])[0], dtype=bool)
                    if counts[index] < n_rollout_steps:
                        act(index)
        finally:
            if pending:  # an interruption (Ctrl-C) mid-rollout: the envs' answers are read, not left for the next call
                env.discard_steps(sorted(pending))
        for step in range(n_rollout_steps):
            # The callbacks and the episode statistics in lock-step order, as a lock-step rollout
            # would have run them (the envs are idle now).
            self.num_timesteps += n_envs
            dones, step_infos = record["done"][step], infos[step]
            callback.update_locals({"dones": dones, "infos": step_infos, "n_steps": step + 1})
            if not callback.on_step():
                return False
            self._update_info_buffer(step_infos, dones)
            rollout_buffer.add(record["obs"][step], record["action"][step].reshape(-1, 1), record["reward"][step],
                               record["start"][step], torch.as_tensor(record["value"][step]),
                               torch.as_tensor(record["log_prob"][step]), action_masks=record["mask"][step])
        self._last_obs, self._last_episode_starts = observations, starts
        with torch.no_grad():
            # One forward pass of the rollout's last observations (always a batch of n_envs).
            last_values = self.policy.predict_values(torch.as_tensor(observations, device=self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=last_values, dones=starts)
        callback.update_locals({"dones": starts, "infos": infos[-1]})
        callback.on_rollout_end()
        return True

    def _act_one(self, observation: np.ndarray, mask: np.ndarray, generator: torch.Generator) -> tuple[int, float, float]:
        """One env's action (drawn with its own ``generator``), value and log-probability; the
        same arithmetic as ``policy.forward`` on a batch of one observation."""
        policy = self.policy
        with torch.no_grad():
            features = policy.extract_features(torch.as_tensor(observation[None], device=self.device))
            if policy.share_features_extractor:
                latent_pi, latent_vf = policy.mlp_extractor(features)
            else:
                latent_pi = policy.mlp_extractor.forward_actor(features[0])
                latent_vf = policy.mlp_extractor.forward_critic(features[1])
            value = policy.value_net(latent_vf)
            distribution = policy._get_action_dist_from_latent(latent_pi)
            distribution.apply_masking(mask[None])
            # (normalised log-probabilities, masked actions at about -1e8, for either distribution class)
            action = gumbel_max(distribution.distribution.logits, generator)
            log_prob = distribution.log_prob(action)
        return int(action.item()), float(value.item()), float(log_prob.item())

    def _value_one(self, observation: np.ndarray) -> float:
        with torch.no_grad():
            return float(self.policy.predict_values(torch.as_tensor(np.asarray(observation)[None], device=self.device)).item())
