"""wrappers/checkpointing.py: an env stack saved mid-game and put back in place continues exactly."""

from __future__ import annotations

import numpy as np
import pytest
from stable_baselines3.common.monitor import Monitor

from polarzoo.baselines.agents import FireAndIceHeuristic, RandomAgent
from polarzoo.wrappers import SingleAgentEnv
from polarzoo.wrappers.checkpointing import Checkpointable


def _play(env: Checkpointable, steps: int, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        mask = env.unwrapped.action_masks()
        observation, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        trace.append((observation.tobytes(), reward, terminated, truncated))
        if terminated or truncated:
            env.reset()
    return trace


def test_a_saved_stack_continues_exactly_in_the_same_objects() -> None:
    env = Checkpointable(Monitor(SingleAgentEnv("fire_and_ice_v0", opponents=[RandomAgent(), FireAndIceHeuristic()])))
    env.reset(seed=4)
    _play(env, 7, seed=1)
    inner, base = env.env, env.unwrapped
    saved = env.get_state()
    expected = _play(env, 40, seed=2)  # through episode ends: the opponent draws and seats come from the saved generators
    env.set_state(saved)
    assert env.env is inner and env.unwrapped is base  # the same objects (a vector env keeps references to them)
    assert _play(env, 40, seed=2) == expected
    other = Checkpointable(SingleAgentEnv("fire_and_ice_v0"))
    with pytest.raises(ValueError, match="where this run has"):
        other.set_state(saved)


def test_a_thin_ice_stack_of_several_player_counts_continues_exactly() -> None:
    """``num_players`` as a list: the game in progress, which count it is, and the counts drawn
    at the next resets all come back with the saved stack."""
    pytest.importorskip("mujoco")
    env = Checkpointable(Monitor(SingleAgentEnv("thin_ice_v0", env_kwargs={"num_players": [2, 3], "grid": 3})))
    env.reset(seed=3)
    _play(env, 5, seed=1)
    saved, players = env.get_state(), env.unwrapped.aec.num_players
    expected = _play(env, 60, seed=2)  # through several episode ends (new counts drawn)
    env.set_state(saved)
    assert env.unwrapped.aec.num_players == players
    assert _play(env, 60, seed=2) == expected
