"""``env()``'s one-layer StandardWrapper behaves like PettingZoo's stack of three wrappers."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs import ENVIRONMENTS
from polarzoo.envs._common.aec import StandardWrapper, pettingzoo_wrappers

BOARD_GAMES = ["fire_and_ice_v0", "go_with_the_floe_v0"]


def _trace(env, seed: int, illegal_at: int | None) -> list:  # noqa: ANN001
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for step, agent in enumerate(env.agent_iter()):
        observation, reward, termination, truncation, info = env.last()
        trace.append(
            (
                agent,
                observation["observation"].tobytes(),
                observation["action_mask"].tobytes(),
                reward,
                termination,
                truncation,
                sorted(info),
            )
        )
        if termination or truncation:
            action = None
        elif step == illegal_at:
            action = int(np.flatnonzero(observation["action_mask"] == 0)[0])
        else:
            action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(action)
    trace.append(dict(env._cumulative_rewards))
    return trace


@pytest.mark.parametrize("env_id", BOARD_GAMES)
def test_same_games_as_pettingzoo_stack(env_id: str) -> None:
    module = ENVIRONMENTS[env_id]
    for seed, illegal_at in ((0, None), (1, 6), (2, 0)):
        ours = _trace(module.env(), seed, illegal_at)
        theirs = _trace(pettingzoo_wrappers(module.raw_env()), seed, illegal_at)
        assert ours == theirs


def test_order_and_bounds_errors() -> None:
    env = ENVIRONMENTS["fire_and_ice_v0"].env()
    assert isinstance(env, StandardWrapper)
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_selection  # noqa: B018
    with pytest.raises(Exception, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="not in action space"):
        env.step(99999)
