"""fire_and_ice_v0 AEC env: PettingZoo conformance, bad input, observations, golden playthrough."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils import turn_based_aec_to_parallel

from polarzoo.envs import fire_and_ice_v0
from polarzoo.envs.fire_and_ice import rules
from tests.helpers import check_playthrough, fast_render_fn, playthrough_text


def test_api() -> None:
    api_test(fire_and_ice_v0.env(), num_cycles=300)
    api_test(fire_and_ice_v0.raw_env(handicap=3), num_cycles=300)


def test_seed() -> None:
    seed_test(fire_and_ice_v0.env, num_cycles=100)
    seed_test(lambda: fire_and_ice_v0.env(handicap=4), num_cycles=100)


def test_render_modes() -> None:
    render_test(fast_render_fn(fire_and_ice_v0.env))
    env = fire_and_ice_v0.env(render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    text = fire_and_ice_v0.env(render_mode="ansi")
    text.reset(seed=0)
    rendered = text.render()
    assert max(len(line) for line in rendered.splitlines()) <= 80 and "Fire to move" in rendered


def test_parallel_view() -> None:
    parallel_api_test(turn_based_aec_to_parallel(fire_and_ice_v0.env()), num_cycles=100)


def test_spaces_are_cached_and_observation_matches_spec() -> None:
    env = fire_and_ice_v0.raw_env()
    env.reset(seed=0)
    assert env.observation_space("fire") is env.observation_space("fire")
    assert env.action_space("ice") is env.action_space("ice")
    env.step(rules.notation_to_action("D4-A4"))
    fire_view = env.observe("fire")["observation"]
    ice_view = env.observe("ice")["observation"]
    assert fire_view.shape == (7, 7, 9) and fire_view.dtype == np.int8
    assert fire_view[0, 3, 0] == 1 and fire_view[3, 3, 1] == 1  # A4 Fire, D4 Ice
    assert np.array_equal(fire_view[:, :, 0], ice_view[:, :, 1])
    assert ice_view[0, 0, 5] == 1 and fire_view[0, 0, 5] == 0  # Ice to move
    assert fire_view[0, 0, 6] == 1 and ice_view[0, 0, 6] == 0
    assert fire_view[0, 0, 7] == 24 and fire_view[0, 0, 8] == 24
    assert env.observation_space("fire")["observation"].contains(fire_view)
    assert env.observe("fire")["action_mask"].sum() == 0


def test_bad_input_raw_env() -> None:
    env = fire_and_ice_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action .*'A1-A2'.*does not hold a fire peg"):
        env.step(rules.notation_to_action("A1-A2"))
    with pytest.raises(ValueError, match="passing is not allowed"):
        env.step(rules.PASS)
    with pytest.raises(ValueError, match="out of range"):
        env.step(5000)
    with pytest.raises(ValueError, match="out of range"):
        env.step(-1)
    for bad in (1.5, "D4-A4", None, [3], True):
        with pytest.raises(TypeError, match="action must be an integer"):
            env.step(bad)
    env.step(np.int32(rules.notation_to_action("D4-A4")))  # numpy integers are fine
    assert env.agent_selection == "ice"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"handicap": 9}, "handicap must be a whole number in 0..6"),
        ({"handicap": -1}, "handicap must be a whole number in 0..6"),
        ({"handicap_player": "water"}, "handicap_player must be one of 'fire', 'ice'"),
        ({"render_mode": "video"}, "render_mode must be one of"),
        ({"handicap": 2, "handicap_holes": ["A1", "A2"]}, "distinct islands"),
        ({"handicap": 1, "handicap_holes": ["Z9"]}, "not a hole"),
    ],
)
def test_bad_constructor_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fire_and_ice_v0.raw_env(**kwargs)


def test_illegal_move_in_wrapped_env_loses() -> None:
    env = fire_and_ice_v0.env()
    env.reset(seed=0)
    env.step(rules.notation_to_action("A1-A2"))  # not a Fire peg
    assert env.terminations["fire"] and env._cumulative_rewards["fire"] == -1
    assert env._cumulative_rewards["ice"] == 0


def test_finished_game_needs_none_actions() -> None:
    env = fire_and_ice_v0.raw_env()
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    while not env.terminations[env.agent_selection]:
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
    rewards = dict(env._cumulative_rewards)
    assert sorted(rewards.values()) == [-1.0, 1.0]
    winner = max(rewards, key=rewards.get)
    assert env.infos[winner]["winner"] == env.possible_agents.index(winner)
    assert env.result() == {"winner": winner, "moves": env.state.moves_made}
    assert all(isinstance(v, int) for info in env.infos.values() for v in info.values())
    with pytest.raises(ValueError):  # PettingZoo: a dead agent must step with None
        env.step(0)
    env.step(None)
    env.step(None)
    assert env.agents == []


def test_handicap_env_places_pegs() -> None:
    env = fire_and_ice_v0.raw_env(handicap=5, handicap_player="fire")
    env.reset(seed=3)
    board = env.state.board
    assert np.count_nonzero(board == rules.FIRE + 1) == 6
    fixed = fire_and_ice_v0.raw_env(handicap=2, handicap_holes=["A1", "G7"])
    fixed.reset(seed=0)
    assert fixed.state.board[0] == rules.ICE + 1 and fixed.state.board[48] == rules.ICE + 1


def test_pickle_and_deepcopy_round_trip() -> None:
    env = fire_and_ice_v0.env(render_mode="ansi")
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(10):
        env.step(int(rng.choice(np.flatnonzero(env.last()[0]["action_mask"]))))
    for clone in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        assert clone.render() == env.render()
        assert np.array_equal(clone.last()[0]["observation"], env.last()[0]["observation"])
        action = int(np.flatnonzero(env.last()[0]["action_mask"])[0])
        clone.step(action)
        assert clone.unwrapped.state.plies == env.unwrapped.state.plies + 1  # independent copy


def test_seeded_resets_repeat() -> None:
    env = fire_and_ice_v0.raw_env(handicap=6)
    env.reset(seed=11)
    first = env.state.board.copy()
    env.reset(seed=11)
    assert np.array_equal(first, env.state.board)


def test_golden_playthrough() -> None:
    check_playthrough("fire_and_ice_v0", playthrough_text(fire_and_ice_v0.env, seed=42))
    check_playthrough("fire_and_ice_v0_handicap", playthrough_text(fire_and_ice_v0.env, seed=7, handicap=3))


def test_picture_labels_keep_clear_of_the_islands_and_a_colour_key_is_drawn() -> None:
    """Each island's letter sits right of its top corner, outside every island (it once drew D
    over B's bottom-right hole); the picture has a Fire / Ice key; hole numbers on demand."""
    from polarzoo.envs.fire_and_ice import render

    def inside(point: np.ndarray, island: int) -> bool:
        a, b, c = (render.ISLAND_CENTRES[island] + render._ISLAND_RADIUS * render._PATTERN[p] for p in (0, 4, 6))
        signs = [(q - p)[0] * (point - p)[1] - (q - p)[1] * (point - p)[0] for p, q in ((a, b), (b, c), (c, a))]
        return all(x >= 0 for x in signs) or all(x <= 0 for x in signs)

    for island, centre in enumerate(render.ISLAND_CENTRES):
        apex = centre + render._ISLAND_RADIUS * render._PATTERN[0]
        corners = [apex + offset for offset in (np.array([9, -2]), np.array([23, -2]), np.array([9, 16]), np.array([23, 16]))]
        for other in range(rules.NUM_ISLANDS):
            if other != island:
                assert not any(inside(corner, other) for corner in corners), (
                    rules.ISLAND_LETTERS[island],
                    rules.ISLAND_LETTERS[other],
                )
        low, high = apex + np.array([9 - 9, -2 - 9]), apex + np.array([23 + 9, 16 + 9])  # the box and a peg's radius
        assert not any((low <= hole).all() and (hole <= high).all() for hole in render.HOLE_CENTRES), rules.ISLAND_LETTERS[island]
    env = fire_and_ice_v0.raw_env(render_mode="rgb_array")
    env.reset(seed=0)
    plain = env.render()
    key = plain[5:28, 5:110].reshape(-1, 3)
    for colour in render.COLOURS.values():
        assert (key == colour).all(axis=1).any(), colour
    env.render_hole_labels = True
    numbered = env.render()
    assert not np.array_equal(plain, numbered)
    with pytest.raises(ValueError, match="render_hole_labels must be True or False"):
        fire_and_ice_v0.raw_env(render_hole_labels="yes")
    assert "holes: island letter + position 1 / 2 3 / 4 (centre) / 5 6 7 (bottom), e.g. D4" in env._render_ansi()
