"""Fire & Ice Solitaire: rules, Gymnasium env (check_env), the exact solver and its CLI."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import polarzoo.envs
from polarzoo.envs import fire_and_ice_solitaire_v0
from polarzoo.envs.fire_and_ice import solitaire_rules as srules
from polarzoo.envs.fire_and_ice.rules import FIRE, ICE, hole_from_name, notation_to_action
from polarzoo.envs.fire_and_ice.solitaire_solver import solve


def board_of(fire: str, ice: str, to_move: int = FIRE) -> srules.SolitaireState:
    board = np.zeros(49, dtype=np.int8)
    for name in fire.split():
        board[hole_from_name(name)] = FIRE + 1
    for name in ice.split():
        board[hole_from_name(name)] = ICE + 1
    return srules.SolitaireState(board, to_move)


def brute_force(state: srules.SolitaireState) -> bool:
    """Plain exhaustive search, no table, no pruning."""
    if srules.is_won(state):
        return True
    return any(brute_force(srules.apply(state, int(a))) for a in np.flatnonzero(srules.legal_action_mask(state)))


# ---------------------------------------------------------------------------- rules
def test_moves_must_capture_the_other_colour() -> None:
    state = board_of(fire="A1 C3", ice="A5 G1 C4")
    legal = {int(a) for a in np.flatnonzero(srules.legal_action_mask(state))}
    assert legal == {notation_to_action(m) for m in ("A1-A5", "A1-G1", "C3-C4")}
    after = srules.apply(state, notation_to_action("A1-A5"))
    assert after.board[hole_from_name("A1")] == 0 and after.board[hole_from_name("A5")] == FIRE + 1
    assert after.to_move == ICE and after.pegs_left == 4
    with pytest.raises(ValueError, match="holds no peg of the other colour"):
        srules.apply(state, notation_to_action("A1-A2"))


def test_win_and_loss_conditions() -> None:
    last = board_of(fire="B2", ice="B6")
    assert srules.is_won(srules.apply(last, notation_to_action("B2-B6")))
    stuck = board_of(fire="A1", ice="B2")  # no Fire peg sees an Ice peg
    assert srules.is_over(stuck) and not srules.is_won(stuck)


# ---------------------------------------------------------------------------- env
def test_gymnasium_make_and_check_env() -> None:
    env = gym.make("polarzoo/FireAndIceSolitaire-v0")
    assert isinstance(env.unwrapped, fire_and_ice_solitaire_v0.FireAndIceSolitaireEnv)
    # Defaults, as a user runs them (Gymnasium's checker steps an action sampled before reset).
    check_env(fire_and_ice_solitaire_v0.env())
    check_env(env.unwrapped)
    sb3_check_env(fire_and_ice_solitaire_v0.env())
    assert "polarzoo/FireAndIceSolitaire-v0" in polarzoo.envs.GYMNASIUM_ENVIRONMENTS


def test_reset_deals_14_and_14_deterministically() -> None:
    env = fire_and_ice_solitaire_v0.env()
    obs, info = env.reset(seed=5)
    assert obs.shape == (7, 7, 2) and obs.dtype == np.int8
    assert obs[:, :, 0].sum() == 14 and obs[:, :, 1].sum() == 14 and not (obs[:, :, 0] & obs[:, :, 1]).any()
    assert info["pegs_left"] == 28 and not info["is_success"] and info["action_mask"].dtype == np.int8
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
    again, _ = fire_and_ice_solitaire_v0.env().reset(seed=5)
    assert np.array_equal(obs, again)
    other, _ = env.reset(seed=6)
    assert not np.array_equal(obs, other)


def test_bad_input() -> None:
    env = fire_and_ice_solitaire_v0.env(illegal_action="raise")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.action_masks() == 0)[0])
    with pytest.raises(ValueError, match=f"illegal action {illegal}"):
        env.step(illegal)
    with pytest.raises(TypeError, match="action must be an integer"):
        env.step("A1-A2")
    with pytest.raises(ValueError, match="out of range"):
        env.step(2401)
    for kwargs, match in (
        ({"reward": "dense"}, "reward must be one of"),
        ({"solvable_only": "yes"}, "solvable_only"),
        ({"illegal_action": "ignore"}, "illegal_action must be one of"),
    ):
        with pytest.raises(ValueError, match=match):
            fire_and_ice_solitaire_v0.env(**kwargs)


def test_step_after_the_end_raises() -> None:
    env = fire_and_ice_solitaire_v0.env()
    env.reset(seed=1)
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_illegal_action_lose_mode_is_the_default() -> None:
    env = fire_and_ice_solitaire_v0.env()
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))
    assert reward == -1.0 and terminated and not truncated and info["illegal_action"]


def test_shaped_reward_and_render() -> None:
    env = fire_and_ice_solitaire_v0.env(reward="shaped", render_mode="ansi")
    env.reset(seed=2)
    solution = solve(env.state).solution
    total = 0.0
    for action in solution:
        _, reward, terminated, _, info = env.step(action)
        total += reward
    assert terminated and info["is_success"] and total == pytest.approx(2.0)
    assert "Solved" in env.render()
    frame = fire_and_ice_solitaire_v0.env(render_mode="rgb_array")
    frame.reset(seed=0)
    assert frame.render().dtype == np.uint8
    assert pickle.loads(pickle.dumps(env)).state.pegs_left == 1


# ---------------------------------------------------------------------------- solver
def test_every_solver_solution_replays_to_a_win() -> None:
    for seed in range(60):
        env = fire_and_ice_solitaire_v0.env()
        env.reset(seed=seed)
        result = solve(env.state)
        if not result.solvable:
            continue
        assert len(result.solution) == srules.TOTAL_CAPTURES
        for action in result.solution:
            _, reward, terminated, _, info = env.step(action)
        assert terminated and reward == 1.0 and info["is_success"] and info["pegs_left"] == 1


def test_solver_agrees_with_brute_force_on_small_positions() -> None:
    rng = np.random.default_rng(0)
    verdicts = []
    for trial in range(300):
        per_colour = int(rng.integers(2, 5))
        # Restrict to a few islands and positions so that positions are neither trivially
        # disconnected nor trivially solvable.
        islands = rng.choice(7, size=int(rng.integers(2, 5)), replace=False)
        positions = rng.choice(7, size=int(rng.integers(2, 5)), replace=False)
        holes = np.array([7 * i + p for i in islands for p in positions])
        if len(holes) < 2 * per_colour:
            continue
        chosen = rng.choice(holes, size=2 * per_colour, replace=False)
        board = np.zeros(49, dtype=np.int8)
        board[chosen[:per_colour]] = FIRE + 1
        board[chosen[per_colour:]] = ICE + 1
        state = srules.SolitaireState(board, FIRE)
        expected = brute_force(state)
        result = solve(state)
        assert result.solvable == expected, f"trial {trial}"
        if expected:
            replay = state
            for action in result.solution:
                replay = srules.apply(replay, action)
            assert srules.is_won(replay)
        verdicts.append(expected)
    assert 20 < sum(verdicts) < len(verdicts) - 20  # both kinds were exercised


def test_solvable_only_deals_are_solvable() -> None:
    env = fire_and_ice_solitaire_v0.env(solvable_only=True)
    env.reset(seed=3)
    assert solve(env.state).solvable
