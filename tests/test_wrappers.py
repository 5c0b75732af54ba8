"""polarzoo.wrappers.SingleAgentEnv: Gymnasium/SB3 checks, true outcomes for the learner, vector envs."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from polarzoo.baselines.agents import FireAndIceHeuristic, RandomAgent
from polarzoo.wrappers import SingleAgentEnv


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"])
def test_check_env(env_id: str) -> None:
    # With the defaults, as a user runs it (its determinism check steps an action sampled before reset).
    kwargs = {"env_kwargs": {"num_players": 2, "grid": 3}} if env_id == "thin_ice_v0" else {}
    check_env(SingleAgentEnv(env_id, **kwargs))
    check_env(SingleAgentEnv(env_id, **kwargs).unwrapped)
    sb3_check_env(SingleAgentEnv(env_id, **kwargs))


def test_check_env_thin_ice() -> None:
    sb3_check_env(SingleAgentEnv("thin_ice_v0", env_kwargs={"grid": 3}))


def test_learner_gets_minus_one_when_the_opponent_wins() -> None:
    env = SingleAgentEnv("fire_and_ice_v0", opponents=[FireAndIceHeuristic()], learner_seat="alternate")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    results = []
    for _ in range(6):
        terminated = truncated = False
        total = 0.0
        while not (terminated or truncated):
            _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            total += reward
        results.append((info["learner"], total))
        env.reset()
    assert {learner for learner, _ in results} == {"fire", "ice"}
    assert all(total == -1.0 for _, total in results)  # the heuristic always beats random play


def test_weighted_learner_seat() -> None:
    env = SingleAgentEnv("go_with_the_floe_v0", learner_seat={"white": 3, "black": 1})
    seats = []
    env.reset(seed=0)
    for _ in range(400):
        seats.append(env.learner)
        env.reset()
    assert 0.65 < seats.count("white") / len(seats) < 0.85  # 3:1 odds (binomial sd 0.02)
    again = SingleAgentEnv("go_with_the_floe_v0", learner_seat={"white": 3, "black": 1})
    again.reset(seed=0)
    assert again.learner == seats[0]  # seeded: the same sequence
    only = SingleAgentEnv("go_with_the_floe_v0", learner_seat={"white": 1})
    assert {only.reset(seed=s)[1]["learner"] for s in range(5)} == {"white"}
    with pytest.raises(ValueError, match="learner_seat must be one of"):
        SingleAgentEnv("go_with_the_floe_v0", learner_seat="weighted")  # not a mode: a mapping is
    for bad, words in (
        ({"red": 1}, "unknown seat 'red'"),
        ({"white": -1}, "must be a number >= 0"),
        ({"white": "x"}, "must be a number"),
        ({"white": 0, "black": 0}, "must not all be 0"),
    ):
        with pytest.raises(ValueError, match=words):
            SingleAgentEnv("go_with_the_floe_v0", learner_seat=bad)


def test_learner_seat_options_and_errors() -> None:
    env = SingleAgentEnv("go_with_the_floe_v0", learner_seat="white")
    _, info = env.reset(seed=1)
    assert info["learner"] == "white" and env.aec.agent_selection == "white"
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentEnv("go_with_the_floe_v0", learner_seat="red")
    with pytest.raises(ValueError, match="env_id"):
        SingleAgentEnv("chess_v0")
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv("fire_and_ice_v0", opponents=[])
    with pytest.raises(RuntimeError, match="reset"):
        SingleAgentEnv("fire_and_ice_v0").step(0)
    env.reset(seed=1)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)  # default: the episode ends, lost
    assert reward == -1.0 and terminated and not truncated and info["illegal_action"]
    strict = SingleAgentEnv("go_with_the_floe_v0", illegal_action="raise")
    strict.reset(seed=1)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(illegal)


def test_opponent_pool_weights() -> None:
    env = SingleAgentEnv("fire_and_ice_v0", opponents=[RandomAgent(), FireAndIceHeuristic()], opponent_weights=[0.0, 1.0])
    env.reset(seed=0)
    assert all(type(agent) is FireAndIceHeuristic for agent in env._seat_agents.values())
    assert env.add_opponent(RandomAgent(), weight=1.0) == 3
    with pytest.raises(ValueError, match="weights"):
        env.set_opponent_weights([1.0])


def _make() -> SingleAgentEnv:
    return SingleAgentEnv("fire_and_ice_v0")


@pytest.mark.parametrize("vec_cls", [DummyVecEnv, SubprocVecEnv])
def test_vec_envs_with_maskable_ppo(vec_cls: type) -> None:
    from sb3_contrib import MaskablePPO

    venv = vec_cls([_make, _make])
    try:
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.shape == (2, 2402)
        model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
        model.learn(64)
    finally:
        venv.close()


def test_three_seat_thin_ice_learner_plays_to_the_end() -> None:
    env = SingleAgentEnv("thin_ice_v0", env_kwargs={"num_players": 3, "grid": 3}, learner_seat="random")
    _, info = env.reset(seed=4)
    rng = np.random.default_rng(4)
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = terminated or truncated
    assert terminated and reward in (-1.0, 0.0, 1.0) and "points" in info["final_infos"]


def test_thin_ice_learner_of_several_player_counts_sees_one_padded_shape() -> None:
    """``num_players`` as a list: each episode draws a count; every observation has the largest
    game's layout, the smaller games' with absent seats; the draws follow the env's seed; the
    env passes Gymnasium's check; bad lists are one line."""
    from gymnasium.utils.env_checker import check_env

    from polarzoo.envs.thin_ice import rules as thin_rules

    def episodes(seed: int) -> list[tuple[int, str]]:
        env = SingleAgentEnv("thin_ice_v0", env_kwargs={"num_players": [3, 4, 6], "grid": 3})
        assert env.observation_space.shape == (thin_rules.observation_size(6),)
        rng, seen = np.random.default_rng(seed), []
        for episode in range(6):
            observation, _ = env.reset(seed=seed if episode == 0 else None)
            players = env.aec.num_players
            seen.append((players, env.learner))
            done = False
            while not done:
                assert observation.shape == env.observation_space.shape
                assert thin_rules.present_players(observation)[0] == players
                assert np.array_equal(thin_rules.unpad_observation(observation), env.aec.observe(env.learner)["observation"])
                observation, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
                done = terminated or truncated
        return seen

    seen = episodes(5)
    assert len({players for players, _ in seen}) > 1 and seen == episodes(5)
    check_env(SingleAgentEnv("thin_ice_v0", env_kwargs={"num_players": [2, 3], "grid": 3}), skip_render_check=True)
    for kwargs, message in (
        (("fire_and_ice_v0", {"num_players": [2]}), "is Thin Ice's"),
        (("thin_ice_v0", {"num_players": [3, 7]}), "list of whole numbers 2..6"),
        (("thin_ice_v0", {"num_players": []}), "list of whole numbers 2..6"),
    ):
        with pytest.raises(ValueError, match=message):
            SingleAgentEnv(kwargs[0], env_kwargs=kwargs[1])
    with pytest.raises(ValueError, match="not a seat of every game"):
        SingleAgentEnv("thin_ice_v0", env_kwargs={"num_players": [2, 4], "grid": 3}, learner_seat=3)
    with pytest.raises(ValueError, match="needs one player count"):
        SingleAgentEnv("thin_ice_v0", env_kwargs={"num_players": [2, 4], "grid": 3}, learner_seat={"player_0": 1})


def test_potential_shaping_telescopes_and_keeps_the_games_returns() -> None:
    """With gamma = 1 the shaped rewards of an episode sum to the game's return minus phi at the
    start (phi is 0 at the end); Monitor inside still logs the game's own return."""
    from stable_baselines3.common.monitor import Monitor

    from polarzoo.envs.go_with_the_floe import rules as floe_rules
    from polarzoo.wrappers.shaping import PotentialShaping

    env = PotentialShaping(Monitor(SingleAgentEnv("go_with_the_floe_v0", learner_seat="white")), scale=1.0, gamma=1.0)
    rng = np.random.default_rng(0)
    for episode in range(5):
        env.reset(seed=episode)
        base = env.unwrapped
        start = floe_rules.shaping_potential(base.aec.unwrapped.state, base.aec.unwrapped.colour_of(base.learner))
        shaped, done, info = 0.0, False, {}
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, reward, terminated, truncated, info = env.step(action)
            shaped += reward
            done = terminated or truncated
        assert shaped == pytest.approx(info["episode"]["r"] - start, abs=1e-9)
        assert info["episode"]["r"] == info["episode_return"] in (-1.0, 1.0)
    with pytest.raises(ValueError, match="no shaping potential"):
        PotentialShaping(SingleAgentEnv("fire_and_ice_v0"))
    import gymnasium as gym

    with pytest.raises(TypeError, match="PotentialShaping wraps a SingleAgentEnv"):
        PotentialShaping(gym.make("CartPole-v1"))


def test_single_agent_env_deals_again_when_a_game_ends_before_the_learner_moves() -> None:
    """Thin Ice: the caller's own first pile can nest (two S upright on one point) and end a
    two-player game before the other seat ever acts; reset() must not hand the learner a
    finished episode (SB3's subprocess envs then stepped it and crashed), but deal another."""
    pytest.importorskip("mujoco")
    from polarzoo.envs.thin_ice import rules

    class NestsInItsFirstGame:
        name = "nester"

        def __init__(self) -> None:
            self.games = 0

        def act(self, env, agent, rng):
            layout = env.game.layout
            if env.game.state.phase == rules.CALL:
                self.games += 1
                return rules.CALLS.index("SS") if self.games == 1 else rules.CALLS.index("S")
            mask = env.legal_action_mask()
            if self.games == 1:
                return rules.notation_to_action("place S d4 upright", layout)
            return int(np.flatnonzero(mask)[-1])

    opponent = NestsInItsFirstGame()
    env = SingleAgentEnv("thin_ice_v0", opponents=[opponent], learner_seat="player_1", env_kwargs={"grid": 7})
    observation, info = env.reset(seed=0)
    assert opponent.games == 2  # the first game ended (nested) before player_1 moved; a second was dealt
    assert info["action_mask"].any() and not env._done
    assert env.aec.unwrapped.game.state.out_rule == ["", ""]


def test_batch_vec_env_is_importable_from_the_package_as_the_docs_write_it() -> None:
    from polarzoo.wrappers import BatchVecEnv
    from polarzoo.wrappers.batch_vec_env import BatchVecEnv as direct

    assert BatchVecEnv is direct
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        from polarzoo import wrappers

        wrappers.Nothing  # noqa: B018


def test_random_play_rows_are_legal_and_seeded() -> None:
    from polarzoo.wrappers.single_agent import random_play_rows

    env = SingleAgentEnv("fire_and_ice_v0")
    observations, masks, actions = random_play_rows(env, 80, 3)
    assert observations.shape == (80, *env.observation_space.shape) and masks.shape == (80, env.action_space.n)
    assert masks.dtype == bool and masks[np.arange(80), actions].all()
    again = random_play_rows(SingleAgentEnv("fire_and_ice_v0"), 80, 3)
    assert np.array_equal(again[0], observations) and np.array_equal(again[2], actions)
    assert not np.array_equal(random_play_rows(env, 80, 4)[2], actions)
