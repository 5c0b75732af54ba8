"""go_with_the_floe_v0 AEC env: conformance, encoding, match play, bad input, golden playthrough."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils import turn_based_aec_to_parallel

from polarzoo.envs import go_with_the_floe_v0
from polarzoo.envs.go_with_the_floe import rules
from tests.helpers import check_playthrough, fast_render_fn, playthrough_text


@pytest.mark.parametrize("match", [False, True])
def test_api_and_seed(match: bool) -> None:
    api_test(go_with_the_floe_v0.env(match=match), num_cycles=300)
    seed_test(lambda: go_with_the_floe_v0.env(match=match), num_cycles=100)


def test_render_and_parallel_view() -> None:
    render_test(fast_render_fn(go_with_the_floe_v0.env))
    render_test(fast_render_fn(go_with_the_floe_v0.env, match=True))
    parallel_api_test(turn_based_aec_to_parallel(go_with_the_floe_v0.env()), num_cycles=100)
    env = go_with_the_floe_v0.env(render_mode="ansi")
    env.reset()
    text = env.render()
    assert "7  X s . . . . b X" in text and "2  X s . . . . b X" in text


def test_observation_encoding() -> None:
    env = go_with_the_floe_v0.raw_env()
    env.reset()
    env.step(rules.notation_to_action("B2-D4"))  # a slide: rings on B2 and C3
    black = env.observe("black")["observation"]
    white = env.observe("white")["observation"]
    assert black.shape == (8, 8, 11) and black.dtype == np.int8
    assert black[3, 3, 0] == 1 and black[6, 1, 0] == 1 and black[1, 6, 1] == 1  # D4, B7 seals; G2 bear
    assert black[1, 1, 2] == 1 and black[2, 2, 2] == 1 and black[2, 2, 6] == 0  # rings on B2, C3
    assert black[0, 0, 3] == 0 and black[0, 2, 3] == 1  # A1 off, C1 on
    assert black[0, 0, 4] == 0 and white[0, 0, 4] == 1
    assert white[0, 0, 5] == 1 and black[0, 0, 5] == 0
    assert np.array_equal(black[:, :, 0], white[:, :, 1])
    assert env.observation_space("black")["observation"].contains(black)


def test_bad_input() -> None:
    env = go_with_the_floe_v0.raw_env()
    env.reset()
    with pytest.raises(ValueError, match=r"'G2-F2'.*holds no seal"):
        env.step(rules.notation_to_action("G2-F2"))
    with pytest.raises(ValueError, match="passing is only allowed"):
        env.step(rules.PASS)
    with pytest.raises(ValueError, match="out of range"):
        env.step(1025)
    with pytest.raises(TypeError, match="action must be an integer"):
        env.step(2.0)
    with pytest.raises(ValueError, match="match must be True or False"):
        go_with_the_floe_v0.raw_env(match="yes")
    with pytest.raises(ValueError, match="render_mode must be one of"):
        go_with_the_floe_v0.raw_env(render_mode="rgb")


def _play_random(env, rng: np.random.Generator) -> dict[str, float]:
    totals = {agent: 0.0 for agent in env.possible_agents}
    first_movers = []
    previous_game = 0
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        game = env.unwrapped.game_index
        if not first_movers or game != previous_game:
            first_movers.append(agent)
            previous_game = game
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    totals["first_movers"] = first_movers  # type: ignore[assignment]
    return totals


def test_match_play_swaps_roles_and_scores_by_empty_squares() -> None:
    for seed in range(20):
        env = go_with_the_floe_v0.env(match=True)
        env.reset(seed=seed)
        totals = _play_random(env, np.random.default_rng(seed))
        raw = env.unwrapped
        assert totals["first_movers"] == ["player_0", "player_1"]  # player_1 plays Black in game 2
        results = raw.game_results
        assert [r["game"] for r in results] == [0, 1]
        scores = {"player_0": 0, "player_1": 0}
        for result in results:
            assert result["winner_colour"] == ("black" if (result["winner"] == "player_0") == (result["game"] == 0) else "white")
            scores[result["winner"]] += result["score"]
        assert raw.match_scores == [scores["player_0"], scores["player_1"]]
        expected = float(np.sign(scores["player_0"] - scores["player_1"]))
        assert totals["player_0"] == expected and totals["player_1"] == -expected


def test_match_game_one_result_in_infos_before_the_end() -> None:
    env = go_with_the_floe_v0.raw_env(match=True)
    env.reset()
    rng = np.random.default_rng(3)
    while env.game_index == 0:
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
    info = env.infos["player_0"]
    winner = env.result()["game_results"][0]["winner"]
    assert info["games_finished"] == 1 and info["winner"] == env.possible_agents.index(winner)
    assert info["score"] + env.infos["player_1"]["score"] == env.result()["game_results"][0]["score"]
    assert len(env.result()["game_results"]) == 1 and not any(env.terminations.values())
    assert env.agent_selection == "player_1" and env.observe("player_1")["observation"][0, 0, 8] == 1
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}  # match reward only at the very end


def test_single_game_reward_and_infos() -> None:
    env = go_with_the_floe_v0.env()
    env.reset()
    totals = _play_random(env, np.random.default_rng(0))
    assert sorted([totals["black"], totals["white"]]) == [-1.0, 1.0]


def test_pickle_and_deepcopy() -> None:
    env = go_with_the_floe_v0.env(match=True, render_mode="ansi")
    env.reset()
    for action in ("B2-D4", "G2-F3", "B7-C6"):
        env.step(rules.notation_to_action(action))
    for clone in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        assert clone.render() == env.render()
        clone.step(rules.notation_to_action("G7-F6"))
        assert clone.unwrapped.state.plies == env.unwrapped.state.plies + 1


def test_golden_playthrough() -> None:
    check_playthrough("go_with_the_floe_v0", playthrough_text(go_with_the_floe_v0.env, seed=42))
    check_playthrough("go_with_the_floe_v0_match", playthrough_text(go_with_the_floe_v0.env, seed=3, match=True))
