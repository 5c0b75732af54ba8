"""MaskablePPO whose rollouts step each env as soon as its last step is back (``rollouts: async``).

SB3 collects a rollout in lock step: one forward pass for all envs, every env stepped, then wait
for the slowest.  Thin Ice's steps are heavy-tailed (a pile that topples settles for many physics
steps: median 1.2 ms, 90th percentile 17 ms), so in lock step a core often idles while one env
settles.  :class:`AsyncRolloutPPO` (with :class:`~polarzoo.wrappers.subproc.MaskCachingSubprocVecEnv`)
gives an env its next action as soon as its result is in, until every env has made ``n_steps``
steps; the update is MaskablePPO's own.

It is the lock-step rollout with the waiting taken out, to the bit:

* the random numbers are lock step's: step ``t``'s Gumbel noise for all envs is one draw from
  torch's global generator, made the first time any env reaches step ``t`` (in step order, so it
  does not matter which env that is), and env ``i`` takes row ``i``.  A policy that samples by the
  Gumbel-max trick (:class:`~polarzoo.baselines.policies.sb3.BoardPolicy`'s distribution) draws
  exactly these numbers in a lock step;
* the forward passes have the lock step's shape: whenever envs are back, one pass over every
  env's latest observation, env ``i`` in row ``i``.  A row's numbers depend on the batch's shape
  but not on the other rows (measured on Thin Ice's network: 0 of 588 rows changed when the
  other rows did, a property of the CPU kernels that tests/test_rollouts.py checks wherever it runs; a
  batch of one instead differs by a few 1e-6), so each env gets the logits and
  value the lock step would have given it, and several envs back at once cost one pass;
* the callbacks' ``on_step`` (snapshots, evaluations, progress) and the episode statistics run in
  lock-step order with every env idle: after the rollout, or, when a callback says that its next
  ``on_step`` touches the envs or the generators (``next_env_event()``: the self-play callback's
  snapshots into the opponent pool and its evaluations), at that step, where every env waits for
  them, so a new opponent pool reaches the envs at the step it would in a lock step.

So a run depends on its seed and config, not on which env finished first (the machine's load);
an exact resume (update boundaries: the global generator is in the checkpoint) works as with
lock-step rollouts; and the same run with ``rollouts: lockstep`` (MaskablePPO's own collector)
ends with the same weights to the bit (tested, with snapshots and an evaluation mid-rollout).  A
policy whose distribution samples otherwise (sb3-contrib's ``MaskableCategorical``:
``torch.multinomial``) gets the same distribution from the same generator, not the same numbers.
Other vectorised envs (or ``Dict`` observations) fall back to MaskablePPO's own collector.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from polarzoo.baselines.policies.sb3 import gumbel_noise


def next_env_event(callback: BaseCallback) -> int | None:
    """The earliest timestep count at which ``callback`` (or one inside a ``CallbackList`` /
    ``EventCallback``) says its ``on_step`` next touches the envs or the global generators
    (its ``next_env_event()``); ``None`` when none says so.

    A callback of your own whose ``on_step`` changes the envs (``env_method``, ``set_attr``) or
    draws from torch's global generator defines ``next_env_event(self) -> int | None``, the
    ``num_timesteps`` at which it next will; :class:`AsyncRolloutPPO` then runs the callbacks up
    to that step with every env idle, as a lock step would.  Other callbacks run after the
    rollout, in lock-step order."""
    events: list[int | None] = []
    for inner in [*getattr(callback, "callbacks", ()), getattr(callback, "callback", None)]:
        if isinstance(inner, BaseCallback):
            events.append(next_env_event(inner))
    own = getattr(callback, "next_env_event", None)
    if callable(own):
        events.append(own())
    due = [int(event) for event in events if event is not None]
    return min(due) if due else None


class AsyncRolloutPPO(MaskablePPO):
    """``MaskablePPO`` with the asynchronous, load-independent collector of the module docstring
    (for vectorised envs with ``send_step`` / ``ready`` / ``receive_step``); a model it saves
    loads with ``MaskablePPO.load``."""

    #: the cores this process may run on: while at least as many envs are stepping, envs that are
    #: back wait to share a forward pass (which envs share one changes no number, only the speed)
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

    def collect_rollouts(
        self, env: VecEnv, callback: BaseCallback, rollout_buffer: Any, n_rollout_steps: int, use_masking: bool = True
    ) -> bool:
        if not (
            use_masking
            and hasattr(env, "send_step")
            and isinstance(self.observation_space, spaces.Box)
            and isinstance(self.action_space, spaces.Discrete)
        ):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()  # an update boundary: --resume restores the global generator drawn from below
        n_envs, n_actions, start_timesteps = env.num_envs, int(self.action_space.n), self.num_timesteps
        stepper: Any = env  # a MaskCachingSubprocVecEnv (checked above): it steps envs one at a time
        observations = np.array(self._last_obs, copy=True)
        starts = np.array(self._last_episode_starts, dtype=bool, copy=True)
        masks = [np.asarray(mask, dtype=bool) for mask in get_action_masks(env)]
        shape = (n_rollout_steps, n_envs)
        record = {
            "obs": np.zeros(shape + observations.shape[1:], dtype=observations.dtype),
            "action": np.zeros(shape, dtype=np.int64),
            "reward": np.zeros(shape, dtype=np.float32),
            "start": np.zeros(shape, dtype=bool),
            "value": np.zeros(shape, dtype=np.float32),
            "log_prob": np.zeros(shape, dtype=np.float32),
            "mask": np.zeros(shape + masks[0].shape, dtype=bool),
            "done": np.zeros(shape, dtype=bool),
        }
        infos: list[list[dict[str, Any]]] = [[{} for _ in range(n_envs)] for _ in range(n_rollout_steps)]
        noise: dict[int, torch.Tensor] = {}  # step -> that step's Gumbel noise, one row per env
        drawn = 0  # steps whose noise has been drawn
        counts = [0] * n_envs  # steps each env has made
        pending: set[int] = set()  # envs whose step is in flight
        held: list[int] = []  # envs waiting for the callbacks of the steps before theirs
        replayed = 0  # steps whose callbacks ran and whose transitions are in the buffer

        def barrier() -> int:
            """The last step an env may make before the callbacks up to it have run."""
            event = next_env_event(callback)
            if event is None:
                return n_rollout_steps
            # the on_step that reaches `event` timesteps is step ceil((event - start) / n_envs) - 1's
            step = -(-(event - start_timesteps) // n_envs) - 1
            return max(step, replayed)

        last_free_step = barrier()

        def act(indices: list[int]) -> None:
            """The next actions of the envs ``indices``: one forward pass of every env's latest
            observation in its own row, the shape of a lock step's, whose row ``i`` does not
            depend on the other rows (tested), so each env gets the lock step's numbers."""
            nonlocal drawn
            while drawn <= max(counts[index] for index in indices):  # lock step's draws, in step order
                noise[drawn] = gumbel_noise((n_envs, n_actions), torch.float32, self.device)
                drawn += 1
            logits, values = self._forward(observations, np.stack(masks))
            for index in indices:
                step = counts[index]
                action = int((logits[index] - noise[step][index]).argmax())
                record["obs"][step, index], record["mask"][step, index] = observations[index], masks[index]
                record["start"][step, index], record["action"][step, index] = starts[index], action
                record["value"][step, index], record["log_prob"][step, index] = values[index], float(logits[index, action])
                env.send_step(index, np.int64(action))
                pending.add(index)

        def replay(until: int) -> bool:
            """Callbacks, episode statistics and the buffer for the steps before ``until``, in
            lock-step order, with every env idle."""
            nonlocal replayed
            while replayed < until:
                step = replayed
                self.num_timesteps += n_envs
                dones, step_infos = record["done"][step], infos[step]
                callback.update_locals({"dones": dones, "infos": step_infos, "n_steps": step + 1})
                if not callback.on_step():
                    return False
                self._update_info_buffer(step_infos, dones)
                rollout_buffer.add(
                    record["obs"][step],
                    record["action"][step].reshape(-1, 1),
                    record["reward"][step],
                    record["start"][step],
                    torch.as_tensor(record["value"][step]),
                    torch.as_tensor(record["log_prob"][step]),
                    action_masks=record["mask"][step],
                )
                del noise[step]
                replayed += 1
            return True

        try:
            act(list(range(n_envs)))
            going_on: list[int] = []  # envs back and free to go on, not yet given their next action
            while pending or going_on or held:
                if pending and (not going_on or len(pending) >= self._cores):
                    # With every core busy stepping envs, a forward pass now would take a core
                    # from them: gather the envs that come back meanwhile into one pass instead.
                    for index in stepper.ready(pending):
                        observation, reward, done, info, mask = stepper.receive_step(index)
                        pending.discard(index)  # (after the read: a Ctrl-C before it leaves the answer to discard_steps)
                        step = counts[index]
                        if done and info.get("terminal_observation") is not None and info.get("TimeLimit.truncated", False):
                            # A truncated episode (not a loss or a win): bootstrap with the value of its last position.
                            reward += self.gamma * self._value_one(info["terminal_observation"])
                        record["reward"][step, index], record["done"][step, index] = reward, done
                        infos[step][index] = info
                        counts[index] += 1
                        observations[index], starts[index] = observation, done
                        masks[index] = (
                            mask
                            if mask is not None
                            else np.asarray(env.env_method("action_masks", indices=[index])[0], dtype=bool)
                        )
                        if counts[index] < n_rollout_steps:
                            (going_on if counts[index] <= last_free_step else held).append(index)
                elif going_on:
                    act(sorted(going_on))
                    going_on.clear()
                else:
                    # Every env has made the steps up to the barrier and waits: its callbacks
                    # run now, as in a lock step, then the envs go on.
                    if not replay(last_free_step + 1):
                        return False
                    last_free_step = barrier()
                    act(sorted(held))
                    held.clear()
        finally:
            if pending:  # an interruption (Ctrl-C) mid-rollout: the envs' answers are read, not left for the next call
                stepper.discard_steps(sorted(pending))
        if not replay(n_rollout_steps):
            return False
        self._last_obs, self._last_episode_starts = observations, starts
        with torch.no_grad():
            # One forward pass of the rollout's last observations (always a batch of n_envs).
            last_values = self.policy.predict_values(torch.as_tensor(observations, device=self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=last_values, dones=starts)
        callback.update_locals({"dones": starts, "infos": infos[-1]})
        callback.on_rollout_end()
        return True

    def _forward(self, observations: np.ndarray, masks: np.ndarray) -> tuple[torch.Tensor, np.ndarray]:
        """The masked, normalised log-probabilities (n_envs, actions) and values (n_envs,) of a
        batch: the arithmetic of ``policy.forward`` before it samples."""
        policy = self.policy
        with torch.no_grad():
            features = policy.extract_features(torch.as_tensor(observations, device=self.device))
            if policy.share_features_extractor:
                latent_pi, latent_vf = policy.mlp_extractor(features)
            else:
                latent_pi = policy.mlp_extractor.forward_actor(features[0])
                latent_vf = policy.mlp_extractor.forward_critic(features[1])
            values = policy.value_net(latent_vf)
            distribution = policy._get_action_dist_from_latent(latent_pi)
            distribution.apply_masking(masks)
            # (normalised log-probabilities, masked actions at about -1e8, for either distribution class)
            inner: Any = distribution.distribution
            return inner.logits.cpu(), values.cpu().numpy().reshape(-1)

    def _value_one(self, observation: np.ndarray) -> float:
        with torch.no_grad():
            return float(self.policy.predict_values(torch.as_tensor(np.asarray(observation)[None], device=self.device)).item())
