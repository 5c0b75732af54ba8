"""MaskCachingSubprocVecEnv: the masks it keeps are the workers' own, and training with it is
bit-identical to training with SB3's SubprocVecEnv."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

from polarzoo.wrappers import SingleAgentEnv  # noqa: E402
from polarzoo.wrappers.subproc import MaskCachingSubprocVecEnv  # noqa: E402

ENV = "fire_and_ice_v0"


def _make() -> Monitor:
    return Monitor(SingleAgentEnv(ENV))


def _workers_masks(venv: MaskCachingSubprocVecEnv) -> np.ndarray:
    return np.stack(SubprocVecEnv.env_method(venv, "action_masks"))


@pytest.mark.slow
def test_kept_masks_are_the_workers_masks_through_episode_ends() -> None:
    venv = MaskCachingSubprocVecEnv([_make] * 3)
    try:
        venv.seed(3)
        venv.reset()
        rng = np.random.default_rng(0)
        episodes_ended = 0
        for _ in range(120):
            kept = np.stack(venv.env_method("action_masks"))
            assert venv._masks is not None
            assert kept.dtype == bool
            np.testing.assert_array_equal(kept, _workers_masks(venv))
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in kept])
            _, _, dones, _ = venv.step(actions)
            episodes_ended += int(dones.sum())
        assert episodes_ended > 0  # the masks after the workers' resets were checked too
        # one index at a time, as a caller may ask
        np.testing.assert_array_equal(venv.env_method("action_masks", indices=[1])[0], _workers_masks(venv)[1])
        # any other call may change an env: the next masks come from the workers
        venv.set_attr("polarzoo_test_marker", 1)
        assert venv._masks is None
        venv.step(np.array([np.flatnonzero(mask)[0] for mask in _workers_masks(venv)]))
        venv.env_method("render")
        assert venv._masks is None
        np.testing.assert_array_equal(np.stack(venv.env_method("action_masks")), _workers_masks(venv))
    finally:
        venv.close()


@pytest.mark.slow
def test_training_is_identical_to_subproc_vec_env() -> None:
    from sb3_contrib import MaskablePPO

    parameters = []
    for cls in (SubprocVecEnv, MaskCachingSubprocVecEnv):
        venv = cls([_make] * 2)
        try:
            venv.seed(0)
            model = MaskablePPO(
                "MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [16]}
            )
            model.learn(256)
            parameters.append(np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()]))
        finally:
            venv.close()
    np.testing.assert_array_equal(parameters[0], parameters[1])


@pytest.mark.slow
def test_envs_stepped_one_at_a_time_give_what_a_lock_step_gives() -> None:
    """send_step / ready / receive_step, envs read back in any order: the same observations,
    rewards, dones, reset games and masks as step() with the same actions."""
    lock, single = MaskCachingSubprocVecEnv([_make] * 3), MaskCachingSubprocVecEnv([_make] * 3)
    try:
        for venv in (lock, single):
            venv.seed(8)
        np.testing.assert_array_equal(lock.reset(), single.reset())
        rng = np.random.default_rng(1)
        ended = 0
        for _ in range(60):
            masks = np.stack(lock.env_method("action_masks"))
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
            observations, rewards, dones, _ = lock.step(actions)
            for index in (2, 0, 1):
                single.send_step(index, actions[index])
            got: dict[int, tuple] = {}
            while len(got) < 3:
                for index in single.ready([i for i in range(3) if i not in got]):
                    got[index] = single.receive_step(index)
            for index, (observation, reward, done, _info, mask) in got.items():
                np.testing.assert_array_equal(observation, observations[index])
                assert (reward, done) == (rewards[index], dones[index])
                np.testing.assert_array_equal(mask, np.stack(lock.env_method("action_masks"))[index])
            np.testing.assert_array_equal(np.stack(single.env_method("action_masks")), np.stack(lock.env_method("action_masks")))
            ended += int(dones.sum())
        assert ended > 0
        # Steps sent and never read (an interrupted collector) are read off: the next call gets its own answer.
        single.send_step(0, np.flatnonzero(single.env_method("action_masks", indices=[0])[0])[0])
        single.discard_steps([0])
        assert single.env_method("action_masks", indices=[0])[0].shape == masks[0].shape
    finally:
        lock.close()
        single.close()
