"""What other RL libraries rely on: observe() after an agent left, numeric infos with fixed keys,
PettingZoo's registry, SuperSuit wrappers over full games."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs import ENVIRONMENTS, PETTINGZOO_IDS

KWARGS = {"fire_and_ice_v0": {}, "go_with_the_floe_v0": {"match": True}, "thin_ice_v0": {"num_players": 3, "grid": 3}}


def _random_game(env, seed: int, check=None):  # noqa: ANN001, ANN202
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if check is not None:
            check(env)
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return env


@pytest.mark.parametrize("env_id", sorted(ENVIRONMENTS))
def test_observe_and_last_work_for_every_agent_at_any_time(env_id: str) -> None:
    env = ENVIRONMENTS[env_id].env(**KWARGS[env_id])
    space = env.observation_space(env.possible_agents[0])

    def check(env) -> None:  # noqa: ANN001
        for agent in env.possible_agents:
            observation = env.observe(agent)
            assert space.contains(observation)
            if agent != env.agent_selection or agent not in env.agents:
                assert not observation["action_mask"].any()

    _random_game(env, 0, check)
    assert env.agents == []
    check(env)
    observation, reward, termination, truncation, info = env.last()
    assert space.contains(observation) and not observation["action_mask"].any() and (termination or truncation)


@pytest.mark.parametrize("env_id", sorted(ENVIRONMENTS))
def test_infos_are_numeric_with_the_same_keys_on_every_step(env_id: str) -> None:
    env = ENVIRONMENTS[env_id].raw_env(**KWARGS[env_id])
    env.reset(seed=1)
    keys = {agent: set(info) for agent, info in env.infos.items()}
    assert all(keys.values())

    def check(env) -> None:  # noqa: ANN001
        for agent, info in env.infos.items():
            assert set(info) == keys[agent]
            assert all(
                isinstance(v, (int, float, np.integer, np.floating, np.ndarray)) and not isinstance(v, bool)
                for v in info.values()
            ), info

    _random_game(env, 1, check)
    result = env.result()
    assert result and isinstance(result, dict)


@pytest.mark.parametrize("env_id", sorted(ENVIRONMENTS))
def test_pettingzoo_registry(env_id: str) -> None:
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "register"):
        pytest.skip("PettingZoo < 1.27 has no registry")
    aec = pettingzoo.make("aec", PETTINGZOO_IDS[env_id], **KWARGS[env_id])
    assert aec.unwrapped.metadata["name"] == env_id
    _random_game(aec, 2)
    parallel = pettingzoo.make("parallel", PETTINGZOO_IDS[env_id], **KWARGS[env_id])
    observations, infos = parallel.reset(seed=3)
    assert set(observations) == set(parallel.agents)


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0"])
def test_supersuit_wrappers_over_full_games(env_id: str) -> None:
    supersuit = pytest.importorskip("supersuit")
    from pettingzoo.utils import BaseWrapper

    class BoxOnly(BaseWrapper):
        """The observation array alone (frame stacking wants a Box)."""

        def observation_space(self, agent: str):  # noqa: ANN201
            return self.env.observation_space(agent)["observation"]

        def observe(self, agent: str):  # noqa: ANN201
            return self.env.observe(agent)["observation"]

    env = supersuit.sticky_actions_v0(ENVIRONMENTS[env_id].env(), repeat_action_probability=0.25)
    _random_game(env, 4)
    stacked = supersuit.frame_stack_v1(BoxOnly(ENVIRONMENTS[env_id].raw_env()), 3)
    stacked.reset(seed=5)
    rng = np.random.default_rng(5)
    for agent in stacked.agent_iter():
        observation, reward, termination, truncation, info = stacked.last()
        assert observation.shape[-1] == 3 * ENVIRONMENTS[env_id].raw_env().observation_space(agent)["observation"].shape[-1]
        if termination or truncation:
            stacked.step(None)
        else:
            stacked.step(int(rng.choice(np.flatnonzero(stacked.unwrapped.legal_action_mask()))))
