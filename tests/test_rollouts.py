"""baselines/training/rollouts.py: asynchronous rollouts that depend on the seed, not on which env
finished first; the policy's own numbers in the buffer; callbacks in lock-step order; exact resume."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from polarzoo.baselines.training import ppo as train_module  # noqa: E402
from polarzoo.baselines.training.rollouts import AsyncRolloutPPO  # noqa: E402
from polarzoo.wrappers import SingleAgentEnv  # noqa: E402
from polarzoo.wrappers.subproc import MaskCachingSubprocVecEnv  # noqa: E402

ENV = "fire_and_ice_v0"
N_ENVS, N_STEPS = 3, 24


class _Slow(gym.Wrapper):
    """Steps that take ``delay`` seconds longer: the env finishes last."""

    def __init__(self, env: gym.Env, delay: float) -> None:
        super().__init__(env)
        self.delay = delay

    def step(self, action: Any) -> Any:
        time.sleep(self.delay)
        return self.env.step(action)


def _factory(delay: float):  # noqa: ANN202
    def make() -> gym.Env:
        return Monitor(_Slow(SingleAgentEnv(ENV), delay))

    return make


class _ArrivalOrder(MaskCachingSubprocVecEnv):
    """Records the order in which the envs' results were read."""

    order: list[int]

    def receive_step(self, index: int) -> Any:
        self.order = [*getattr(self, "order", []), index]
        return super().receive_step(index)


class _Recorder(BaseCallback):
    def __init__(self) -> None:
        super().__init__()
        self.steps: list[tuple[int, int, int]] = []  # (timesteps, dones given, episodes ended)
        self.rollouts = [0, 0]

    def _on_rollout_start(self) -> None:
        self.rollouts[0] += 1

    def _on_step(self) -> bool:
        self.steps.append((self.num_timesteps, len(self.locals["dones"]), int(np.sum(self.locals["dones"]))))
        return True

    def _on_rollout_end(self) -> None:
        self.rollouts[1] += 1
        # The policy that collected the rollout (before its update): its numbers for what is stored.
        buffer = self.model.rollout_buffer
        observations = torch.as_tensor(buffer.observations.reshape(N_STEPS * N_ENVS, -1))
        masks = buffer.action_masks.reshape(N_STEPS * N_ENVS, -1).astype(bool)
        assert masks[np.arange(len(masks)), buffer.actions.reshape(-1).astype(int)].all()  # legal moves only
        with torch.no_grad():
            values, log_probs, _ = self.model.policy.evaluate_actions(
                observations, torch.as_tensor(buffer.actions.reshape(-1)), action_masks=masks
            )
        np.testing.assert_allclose(buffer.log_probs.reshape(-1), log_probs.numpy(), atol=1e-5)
        np.testing.assert_allclose(buffer.values.reshape(-1), values.numpy().ravel(), atol=1e-5)


def _collect(slow_env: int, rollouts: int = 2) -> tuple[AsyncRolloutPPO, _ArrivalOrder, _Recorder]:
    venv = _ArrivalOrder([_factory(0.004 if i == slow_env else 0.0) for i in range(N_ENVS)])
    venv.seed(5)
    model = AsyncRolloutPPO(
        "MlpPolicy",
        venv,
        n_steps=N_STEPS,
        batch_size=N_STEPS * N_ENVS,
        n_epochs=1,
        seed=5,
        device="cpu",
        policy_kwargs={"net_arch": [16]},
    )
    recorder = _Recorder()
    model.learn(rollouts * N_STEPS * N_ENVS, callback=recorder)
    return model, venv, recorder


def _parameters(model: Any) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in model.policy.parameters()])


@pytest.mark.slow
def test_rollouts_do_not_depend_on_which_env_finishes_first() -> None:
    runs = []
    for slow_env in (0, 2):
        model, venv, _ = _collect(slow_env)
        try:
            buffer = model.rollout_buffer
            runs.append(
                (
                    venv.order,
                    _parameters(model),
                    buffer.observations.copy(),
                    buffer.actions.copy(),
                    buffer.rewards.copy(),
                    buffer.log_probs.copy(),
                    buffer.returns.copy(),
                    model._last_obs.copy(),
                )
            )
        finally:
            venv.close()
    (order_a, *arrays_a), (order_b, *arrays_b) = runs
    assert order_a != order_b  # the envs came back in another order ...
    for a, b in zip(arrays_a, arrays_b):  # ... and nothing else changed
        np.testing.assert_array_equal(a, b)


def test_the_buffer_holds_the_policys_own_numbers_legal_actions_and_every_step_once() -> None:
    model, venv, recorder = _collect(slow_env=1)
    try:
        # (the stored log-probabilities and values were checked at each rollout's end)
        # The callbacks ran once per lock step, in order, with every env's done flag.
        assert recorder.rollouts == [2, 2]
        assert [timesteps for timesteps, _, _ in recorder.steps] == [N_ENVS * (k + 1) for k in range(2 * N_STEPS)]
        assert {given for _, given, _ in recorder.steps} == {N_ENVS}
        ended = sum(done for _, _, done in recorder.steps)
        assert ended > 0 and len(model.ep_info_buffer) == ended  # every finished episode's statistics, once
    finally:
        venv.close()


def test_without_send_step_it_is_maskable_ppo() -> None:
    parameters = []
    for algorithm in (MaskablePPO, AsyncRolloutPPO):
        venv = DummyVecEnv([_factory(0.0)] * 2)
        venv.seed(1)
        model = algorithm(
            "MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=1, device="cpu", policy_kwargs={"net_arch": [8]}
        )
        model.learn(64)
        parameters.append(_parameters(model))
    np.testing.assert_array_equal(*parameters)


@pytest.mark.slow
def test_an_interrupted_async_rollout_resumes_to_the_same_weights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the envs' steps are in flight: the checkpoint is the rollout's start, the
    pending answers are read off, and --resume ends with the weights of one straight run
    (snapshots into the pool and an evaluation on the way)."""
    config = train_module.load_config(
        ENV,
        {
            "n_envs": 2,
            "n_steps": 32,
            "batch_size": 64,
            "n_epochs": 1,
            "total_timesteps": 192,
            "vec_env": "subproc",
            "rollouts": "async",
            "opponents": {"random": 0.5, "self": 0.5},
            "snapshot_every": 64,
            "max_snapshots": 2,
            "eval_every": 96,
            "eval_games": 1,
            "checkpoint_every": 64,
            "torch_threads": 1,
            "update_threads": 2,
            "board_policy": {"dim": 8, "blocks": 1},
            "bc_games": 0,
        },
    )
    train_module.check_config(config)

    def run(folder: Path, resume: bool = False) -> None:
        folder.mkdir(exist_ok=True)
        train_module.train(config, folder, resume=resume, seed=4, progress_bar=False, final_eval=False)

    run(tmp_path / "whole")
    calls = {"n": 0}
    receive_step = MaskCachingSubprocVecEnv.receive_step
    discarded: list[list[int]] = []
    discard_steps = MaskCachingSubprocVecEnv.discard_steps

    def interrupted(self: MaskCachingSubprocVecEnv, index: int) -> Any:
        calls["n"] += 1
        if calls["n"] == 100:  # the second rollout, the other env's step in flight
            raise KeyboardInterrupt
        return receive_step(self, index)

    def recorded(self: MaskCachingSubprocVecEnv, indices: Any, timeout: float = 10.0) -> None:
        discarded.append(list(indices))
        discard_steps(self, indices, timeout)

    monkeypatch.setattr(MaskCachingSubprocVecEnv, "receive_step", interrupted)
    monkeypatch.setattr(MaskCachingSubprocVecEnv, "discard_steps", recorded)
    with pytest.raises(SystemExit):
        run(tmp_path / "cut")
    monkeypatch.undo()
    assert discarded and discarded[0]  # answers were in flight and were read off
    assert train_module.read_checkpoint_state(tmp_path / "cut")[0]["timesteps"] == 64
    run(tmp_path / "cut", resume=True)
    first = MaskablePPO.load(tmp_path / "whole" / "model.zip", device="cpu")
    second = MaskablePPO.load(tmp_path / "cut" / "model.zip", device="cpu")
    for (name, a), b in zip(first.policy.state_dict().items(), second.policy.state_dict().values()):
        assert torch.equal(a, b), name
    assert (tmp_path / "whole" / "evaluations.csv").read_text() == (tmp_path / "cut" / "evaluations.csv").read_text()


@pytest.mark.slow
def test_async_rollouts_learn_what_lock_steps_learn_to_the_bit(tmp_path: Path) -> None:
    """The same run with MaskablePPO's lock-step collector and with the async one: the same random
    numbers, forward passes of the lock step's shape (row i is env i's), the snapshots reaching the
    envs' pools at the same step and the evaluation mid-rollout playing the same games, so the
    weights after two updates are the same to the bit.  Thin Ice: short games, so episodes start
    after each snapshot within the rollout (without the callbacks' barrier the weights differ by
    about 5e-3)."""
    weights, evaluations = {}, {}
    for mode in ("lockstep", "async"):
        config = train_module.load_config(
            "thin_ice_v0",
            {
                "n_envs": 2,
                "n_steps": 32,
                "batch_size": 64,
                "n_epochs": 1,
                "total_timesteps": 128,
                "vec_env": "subproc",
                "rollouts": mode,
                "opponents": {"random": 0.5, "self": 0.5},
                "snapshot_every": 10,
                "max_snapshots": 2,
                "eval_every": 96,
                "eval_games": 1,
                "checkpoint_every": 64,
                "torch_threads": 1,
                "update_threads": 2,
                "bc_games": 0,
                "board_policy": {"dim": 8, "blocks": 1, "symmetrize": "canonical"},
            },
        )
        train_module.check_config(config)
        folder = tmp_path / mode
        folder.mkdir()
        train_module.train(config, folder, seed=4, progress_bar=False, final_eval=False)
        weights[mode] = MaskablePPO.load(folder / "model.zip", device="cpu").policy.state_dict()
        evaluations[mode] = (folder / "evaluations.csv").read_text()
    for name, lockstep in weights["lockstep"].items():
        assert torch.equal(weights["async"][name], lockstep), name
    assert evaluations["async"] == evaluations["lockstep"]


def test_the_next_env_event_is_the_earliest_any_callback_names() -> None:
    from stable_baselines3.common.callbacks import CallbackList, EveryNTimesteps

    from polarzoo.baselines.training.rollouts import next_env_event

    class _Event(BaseCallback):
        def __init__(self, event: int | None) -> None:
            super().__init__()
            self.event = event

        def _on_step(self) -> bool:
            return True

        def next_env_event(self) -> int | None:
            return self.event

    assert next_env_event(_Recorder()) is None
    assert next_env_event(CallbackList([_Event(None), _Recorder()])) is None
    assert next_env_event(CallbackList([_Event(300), _Recorder(), EveryNTimesteps(10, _Event(120))])) == 120


def test_a_bad_rollouts_setting_is_named() -> None:
    config = train_module.load_config(ENV, {"rollouts": "parallel"})
    with pytest.raises(ValueError, match="rollouts must be lockstep or async, got 'parallel'"):
        train_module.check_config(config)


def test_a_run_saved_before_the_key_resumes_with_lockstep_rollouts() -> None:
    saved = {key: value for key, value in train_module.load_config("thin_ice_v0").items() if key != "rollouts"}
    assert train_module.saved_run_config(saved)["rollouts"] == "lockstep"
