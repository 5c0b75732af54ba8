"""polarzoo.wrappers.opponent_batching: the same games as DummyVecEnv, opponents' moves batched."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

from polarzoo.baselines.agents import PolicyAgent, pretrained_path
from polarzoo.wrappers import SingleAgentEnv
from polarzoo.wrappers.opponent_batching import OpponentBatchingVecEnv
from polarzoo.wrappers.shaping import PotentialShaping


class LowestLegal:
    """Plays its lowest legal action, one game (``act``) or many (``act_batch``)."""

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(env.observe(agent)["action_mask"])[0])

    def act_batch(self, envs: list[Any], agents: list[str], rngs: list[np.random.Generator]) -> list[int]:
        self.batch_sizes.append(len(envs))
        return [self.act(env, agent, rng) for env, agent, rng in zip(envs, agents, rngs)]


def _play(venv: Any, steps: int, seed: int = 0) -> list[tuple[Any, ...]]:
    venv.seed(5)
    observations = venv.reset()
    rng = np.random.default_rng(seed)
    trace = [observations.copy()]
    for _ in range(steps):
        masks = np.stack(venv.env_method("action_masks"))
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        observations, rewards, dones, infos = venv.step(actions)
        trace.append(
            (observations.copy(), rewards.copy(), dones.copy(), [info.get("episode") and info["episode"]["r"] for info in infos])
        )
    return trace


def _same(a: list[Any], b: list[Any]) -> bool:
    for x, y in zip(a, b):
        if isinstance(x, tuple):
            if not (np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) and np.array_equal(x[2], y[2]) and x[3] == y[3]):
                return False
        elif not np.array_equal(x, y):
            return False
    return len(a) == len(b)


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0"])
def test_same_games_as_dummy_vec_env_and_moves_batched(env_id: str) -> None:
    batched_opponent = LowestLegal()
    plain = DummyVecEnv([lambda: Monitor(SingleAgentEnv(env_id, opponents=[LowestLegal()]))] * 6)
    batched = OpponentBatchingVecEnv([lambda: Monitor(SingleAgentEnv(env_id, opponents=[batched_opponent]))] * 6)
    assert _same(_play(plain, 150), _play(batched, 150))
    assert max(batched_opponent.batch_sizes) == 6  # every env asked at once
    assert sum(batched_opponent.batch_sizes) > 150


def test_shaping_and_mixed_pools_see_the_same_steps() -> None:
    def make(opponent: Any) -> Any:
        def build() -> gym.Env:
            # A pool of a batched opponent and one that is asked directly (no act_batch).
            env = SingleAgentEnv(
                "go_with_the_floe_v0", opponents=[opponent, lambda env, agent, rng: opponent.act(env, agent, rng)]
            )
            return PotentialShaping(Monitor(env), scale=1.0, gamma=0.99)

        return build

    assert _same(
        _play(DummyVecEnv([make(LowestLegal())] * 4), 120), _play(OpponentBatchingVecEnv([make(LowestLegal())] * 4), 120)
    )


def test_network_opponent_batched_gives_the_same_games() -> None:
    # The pretrained Go with the Floe policy, greedy: the batched forward pass picks the same moves.
    make = [
        lambda: Monitor(SingleAgentEnv("go_with_the_floe_v0", opponents=[PolicyAgent(pretrained_path("go_with_the_floe_v0"))]))
    ] * 4
    assert _same(_play(DummyVecEnv(make), 60), _play(OpponentBatchingVecEnv(make), 60))


def test_rejects_other_envs_and_wrappers_that_change_the_action() -> None:
    with pytest.raises(TypeError, match="SingleAgentEnv underneath"):
        OpponentBatchingVecEnv([lambda: gym.make("CartPole-v1")])

    class Shift(gym.ActionWrapper):
        def action(self, action: Any) -> Any:
            return int(np.flatnonzero(self.env.unwrapped.action_masks())[-1])

    venv = OpponentBatchingVecEnv([lambda: Shift(SingleAgentEnv("fire_and_ice_v0", opponents=[LowestLegal()]))])
    venv.reset()
    mask = venv.env_method("action_masks")[0]
    with pytest.raises(RuntimeError, match="changed the action"):
        venv.step(np.array([np.flatnonzero(mask)[0]]))


def test_copies_of_one_model_share_a_pass() -> None:
    """Each env holding its own copy of a saved model (as a resumed run's unpickled envs do) is
    batched as one object shared by every env is: the same batches, so the same float rounding."""
    path = pretrained_path("go_with_the_floe_v0")
    counts: list[int] = []

    class Counting(PolicyAgent):
        def act_batch(self, envs: Any, agents: Any, rngs: Any) -> list[int]:
            counts.append(len(envs))
            return super().act_batch(envs, agents, rngs)

    make = [lambda: Monitor(SingleAgentEnv("go_with_the_floe_v0", opponents=[Counting(path)]))] * 4
    assert Counting(path).batch_key == Counting(path).batch_key
    _play(OpponentBatchingVecEnv(make), 20)
    assert max(counts) == 4
