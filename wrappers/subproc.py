"""An SB3 ``SubprocVecEnv`` that answers action-mask requests from what the envs already sent.

MaskablePPO asks a vectorised env for its masks before every step (``env_method("action_masks")``),
which for ``SubprocVecEnv`` is a second round trip to every worker process: each is woken, looks
up its mask and sends it back, while the learner waits.  Every
:class:`~polarzoo.wrappers.SingleAgentEnv` already returns the mask of its next position in the
step's ``info["action_mask"]`` (in the reset's info after an episode ends, since the worker resets
the env at once), so ``MaskCachingSubprocVecEnv`` keeps those and hands them out instead: the
same masks, one message a step fewer per env.

    from polarzoo.wrappers.subproc import MaskCachingSubprocVecEnv
    venv = MaskCachingSubprocVecEnv([lambda: Monitor(SingleAgentEnv("thin_ice_v0"))] * 8)

Anything else sent to the envs (``env_method``, ``set_attr``: a restored state, a new opponent pool)
drops the kept masks, and the next request goes to the workers as in ``SubprocVecEnv``; so do envs
whose infos carry no ``action_mask``.

It also steps envs one at a time, for a collector that does not wait for the slowest env of a
lock step (``baselines/training/rollouts.py``): :meth:`~MaskCachingSubprocVecEnv.send_step` sends
one env its action, :meth:`~MaskCachingSubprocVecEnv.ready` names the envs whose results are in
(blocking until one is), :meth:`~MaskCachingSubprocVecEnv.receive_step` reads one, the worker
having reset a finished env as in ``step``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from multiprocessing.connection import wait
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import SubprocVecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn


class MaskCachingSubprocVecEnv(SubprocVecEnv):
    """``SubprocVecEnv`` whose ``env_method("action_masks")`` reads the masks from the last
    step's (or reset's) infos (see the module docstring)."""

    _masks: list[np.ndarray] | None = None

    def reset(self) -> VecEnvObs:
        observations = super().reset()
        self._masks = _masks_of(self.reset_infos)
        return observations

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = super().step_wait()
        # A finished env has been reset by its worker: its next mask is in the reset's info.
        self._masks = _masks_of([self.reset_infos[i] if done else info for i, (done, info) in enumerate(zip(dones, infos))])
        return observations, rewards, dones, infos

    def send_step(self, index: int, action: Any) -> None:
        """Send env ``index`` its action; its result is read by :meth:`receive_step`."""
        self.remotes[index].send(("step", action))

    def ready(self, indices: Collection[int]) -> list[int]:
        """Those of ``indices`` (envs sent a step) whose results are in, in index order; waits
        until at least one is."""
        by_remote = {self.remotes[i]: i for i in indices}
        return sorted(by_remote[remote] for remote in wait(list(by_remote)))

    def receive_step(self, index: int) -> tuple[Any, float, bool, dict[str, Any], np.ndarray | None]:
        """Env ``index``'s step result as in ``step_wait`` (a finished env already reset, its last
        observation in ``info["terminal_observation"]``) and the mask of its next position (None
        when the infos carry none)."""
        observation, reward, done, info, reset_info = self.remotes[index].recv()
        if not isinstance(self.reset_infos, list):  # step_wait leaves a tuple
            self.reset_infos = list(self.reset_infos)
        self.reset_infos[index] = reset_info
        masks = _masks_of([reset_info if done else info])
        mask = None if masks is None else masks[0]
        if self._masks is not None:
            if mask is None:
                self._masks = None
            else:
                self._masks[index] = mask
        return observation, reward, done, info, mask

    def discard_steps(self, indices: Collection[int], timeout: float = 10.0) -> None:
        """Read and drop the results of steps sent to ``indices`` and not received (a collector
        interrupted mid-rollout), so that the next request to those envs gets its own answer;
        workers that went away (a Ctrl-C reaches them too) are skipped."""
        self._masks = None
        for index in indices:
            try:
                if self.remotes[index].poll(timeout):
                    self.remotes[index].recv()
            except (EOFError, OSError):
                pass

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks" and self._masks is not None and not method_args and not method_kwargs:
            return [self._masks[i].copy() for i in self._get_indices(indices)]
        self._masks = None  # the call may change an env (a restored state)
        return super().env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._masks = None
        super().set_attr(attr_name, value, indices)


def _masks_of(infos: Sequence[dict[str, Any]]) -> list[np.ndarray] | None:
    if not all(isinstance(info, dict) and "action_mask" in info for info in infos):
        return None
    return [np.asarray(info["action_mask"]).astype(bool) for info in infos]
