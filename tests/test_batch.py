"""Batch cores against the single-game rules, in lockstep over thousands of random games."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs.batch import FireAndIceBatch, GoWithTheFloeBatch, sample_legal_actions
from polarzoo.envs.fire_and_ice import rules as fire_rules
from polarzoo.envs.fire_and_ice.encoding import reference_observation_tensor as fire_observation
from polarzoo.envs.go_with_the_floe import rules as floe_rules
from polarzoo.envs.go_with_the_floe.encoding import reference_observation_tensor as floe_observation

CASES = [
    pytest.param(FireAndIceBatch, fire_rules, fire_observation, 1000, id="fire_and_ice"),
    pytest.param(GoWithTheFloeBatch, floe_rules, floe_observation, 600, id="go_with_the_floe"),
]


@pytest.mark.parametrize("core_cls, rules, observation_tensor, steps", CASES)
def test_kernels_in_lockstep_with_the_readable_rules(core_cls, rules, observation_tensor, steps) -> None:  # noqa: ANN001
    """Every mask, observation, final observation, outcome and reward of the compiled batch
    kernels against the pure-Python rules and the numpy encoding, with random ``active`` games
    and ``observer`` colours, over more than 1,000 finished (auto-reset) games."""
    batch = 64
    core = core_cls(batch, seed=0)
    observations, masks = core.reset()
    singles = [rules.initial_state() for _ in range(batch)]
    rng = np.random.default_rng(1)
    finished = {0: 0, 1: 0}
    for _ in range(steps):
        for i, state in enumerate(singles):
            assert np.array_equal(masks[i], rules.legal_action_mask(state))
            assert np.array_equal(observations[i], observation_tensor(state, state.to_move))
        actions = core.sample_actions(rng)
        active = rng.random(batch) < 0.75
        observer = rng.integers(0, 2, batch).astype(np.int8)
        result = core.step(actions, active=active, observer=observer)
        for i in range(batch):
            if not active[i]:
                assert result.mover[i] == -1 and not result.terminated[i] and not result.final_observation[i].any()
                continue
            mover = singles[i].to_move
            rules.apply_inplace(singles[i], int(actions[i]))
            assert result.mover[i] == mover
            if singles[i].winner >= 0:
                assert result.terminated[i] and result.winner[i] == singles[i].winner
                assert result.rewards[i].tolist() == rules.returns(singles[i]).tolist()
                assert np.array_equal(result.final_observation[i], observation_tensor(singles[i], int(observer[i])))
                finished[singles[i].winner] += 1
                singles[i] = rules.initial_state()
            else:
                assert not result.terminated[i] and not result.rewards[i].any() and result.winner[i] == -1
        observations, masks = result.observation, result.action_mask
    assert sum(finished.values()) >= 1000 and min(finished.values()) > 0


@pytest.mark.parametrize(
    "env_module, rules, observation_tensor",
    [
        pytest.param("fire_and_ice", fire_rules, fire_observation, id="fire_and_ice"),
        pytest.param("go_with_the_floe", floe_rules, floe_observation, id="go_with_the_floe"),
    ],
)
def test_single_env_kernels_match_the_readable_rules(env_module, rules, observation_tensor) -> None:  # noqa: ANN001
    """The single env's compiled mask, observation and (Floe) end test against the reference,
    both seats' views, over 150 random games."""
    import importlib

    env_mod = importlib.import_module(f"polarzoo.envs.{env_module}.env")
    env = env_mod.raw_env()
    rng = np.random.default_rng(3)
    for game in range(150):
        env.reset(seed=game)
        while env.agents and not any(env.terminations.values()):
            state = env.state
            assert np.array_equal(env.legal_action_mask(), rules.legal_action_mask(state))
            for colour in (0, 1):
                assert np.array_equal(env_mod.observation_tensor(state, colour), observation_tensor(state, colour))
            before = state.copy()
            action = int(rng.choice(np.flatnonzero(env.legal_action_mask())))
            env.step(action)
            rules.apply_inplace(before, action)  # the reference end test
            assert before == env.state


def test_partial_steps_and_bad_input() -> None:
    core = FireAndIceBatch(4, seed=0)
    _, masks = core.reset()
    opening = fire_rules.notation_to_action("D4-A4")
    actions = np.full(4, opening)
    active = np.array([True, False, True, False])
    result = core.step(actions, active=active)
    assert result.mover.tolist() == [0, -1, 0, -1] and core.to_move.tolist() == [1, 0, 1, 0]
    with pytest.raises(ValueError, match="illegal actions in games"):
        core.step(np.full(4, opening))  # games 0 and 2 have Ice to move: D4 now holds Ice
    with pytest.raises(TypeError, match="integer array of shape"):
        core.step(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="batch_size"):
        FireAndIceBatch(0)


def test_bytes_per_game_under_1kb() -> None:
    assert FireAndIceBatch(8).nbytes_per_game() < 1024
    assert GoWithTheFloeBatch(8).nbytes_per_game() < 1024


# ---------------------------------------------------------------------------- SB3 VecEnv adapter
def test_batch_vec_env_learner_gets_its_losses_and_masks() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from polarzoo.wrappers.batch_vec_env import BatchVecEnv

    venv = BatchVecEnv("go_with_the_floe_v0", num_envs=16, seed=3)
    observations = venv.reset()
    assert observations.shape == (16, 8 * 8 * 11) and observations.dtype == np.float32
    assert is_masking_supported(venv) and get_action_masks(venv).shape == (16, floe_rules.NUM_ACTIONS)
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(400):
        masks = get_action_masks(venv)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        learner_colour = venv.learner_colour.copy()
        observations, rewards, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            outcomes.append(rewards[i])
            final = infos[i]["terminal_observation"].reshape(8, 8, 11)
            assert final[0, 0, 4] == learner_colour[i]  # seen by the learner (channel 4: plays White)
        assert not rewards[~dones].any()
    assert -1.0 in outcomes and 1.0 in outcomes  # losses reach the learner too
    # Random Black (seals) wins most games against random bears, so as Black the learner
    # mostly wins and as White it mostly loses: both seats are played.
    assert 0.3 < np.mean(np.array(outcomes) > 0) < 0.7


def test_batch_vec_env_trains_with_maskable_ppo() -> None:
    from sb3_contrib import MaskablePPO

    from polarzoo.wrappers.batch_vec_env import BatchVecEnv

    venv = BatchVecEnv("fire_and_ice_v0", num_envs=8, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    assert model.num_timesteps >= 256


def test_final_observation_from_a_chosen_observer() -> None:
    core = FireAndIceBatch(2, seed=0)
    core.reset()
    rng = np.random.default_rng(0)
    while True:
        mask = core.mask
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in mask])
        before = core.to_move.copy()
        result = core.step(actions, observer=np.array([0, 1], dtype=np.int8))
        if result.terminated.any():
            i = int(np.flatnonzero(result.terminated)[0])
            assert result.final_observation[i][0, 0, 6] == (1 if i == 0 else 0)  # channel 6: observer is Fire
            assert result.mover[i] == before[i]
            break


def test_step_arguments_are_checked() -> None:
    core = FireAndIceBatch(4, seed=0)
    actions = sample_legal_actions(core.mask, np.random.default_rng(0))
    with pytest.raises(ValueError, match="active must be a boolean array"):
        core.step(actions, active=[0, 2])
    with pytest.raises(ValueError, match="active must be a boolean array"):
        core.step(actions, active=np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="observer must be"):
        core.step(actions, observer=np.full(4, 5))
    with pytest.raises(ValueError, match="observer must be"):
        core.step(actions, observer=np.zeros(2, dtype=np.int8))
    core.step(actions, active=np.array([True, False, True, False]), observer=np.zeros(4, dtype=np.int8))


def test_batch_vec_env_rejects_float_and_string_actions_without_counting_them() -> None:
    pytest.importorskip("stable_baselines3")
    from polarzoo.wrappers.batch_vec_env import BatchVecEnv

    venv = BatchVecEnv("fire_and_ice_v0", num_envs=2, seed=0)
    venv.reset()
    legal = sample_legal_actions(venv.core.mask, np.random.default_rng(1))
    for bad in (legal + 0.7, np.array(["a", "b"])):
        with pytest.raises(TypeError, match="actions must be integers"):
            venv.step(bad)
    with pytest.raises(ValueError, match="illegal actions"):
        venv.step(np.array([2401, 2401]))
    assert (venv._lengths == 0).all()
    venv.step(legal)
    assert (venv._lengths == 1).all()


def test_observe_and_sampler_inputs_are_checked() -> None:
    core = GoWithTheFloeBatch(4, seed=0)
    assert np.array_equal(core.observe(np.full(4, -1)), core.observe())  # -1: the player to move
    for colours in (np.array([0, 1, 2, 0]), np.array([0, 1]), np.array([0.0, 1.0, 0.0, 1.0])):
        with pytest.raises(ValueError, match="colours must be an integer array of colours -1"):
            core.observe(colours)
    with pytest.raises(ValueError, match="mask must be 2-D"):
        sample_legal_actions(core.mask[0], np.random.default_rng(0))
    assert sample_legal_actions(core.mask.astype(bool), np.random.default_rng(0)).shape == (4,)


def test_floe_batch_potential_is_the_rules_shaping_potential() -> None:
    core = GoWithTheFloeBatch(32, seed=0)
    rng = np.random.default_rng(2)
    for _ in range(30):
        colours = rng.integers(0, 2, 32).astype(np.int8)
        expected = [floe_rules.shaping_potential(_floe_state(core.board[g]), int(colours[g])) for g in range(32)]
        assert np.allclose(core.potential(colours), expected)
        core.step(core.sample_actions(rng))


def _floe_state(board: np.ndarray) -> floe_rules.State:
    state = floe_rules.initial_state()
    state.board[:] = board
    return state


def test_set_state_starts_games_from_given_positions() -> None:
    """Positions loaded with set_state give the rules' masks and play on from there."""
    rng = np.random.default_rng(3)
    positions = []
    for _ in range(4):
        state = floe_rules.initial_state()
        for _ in range(int(rng.integers(1, 9))):
            floe_rules.apply_inplace(state, int(rng.choice(floe_rules.legal_actions(state))))
            if state.winner >= 0:
                break
        if state.winner < 0:
            positions.append(state)
    core = GoWithTheFloeBatch(len(positions))
    core.set_state(
        board=np.stack([s.board for s in positions]),
        rings=np.stack([s.rings for s in positions]),
        to_move=np.array([s.to_move for s in positions]),
        passes=[s.passes for s in positions],
        winner=-1,
    )
    for index, state in enumerate(positions):
        assert np.array_equal(core.mask[index], floe_rules.legal_action_mask(state))
        assert np.array_equal(core.observe()[index], floe_observation(state, state.to_move))
    actions = core.sample_actions(rng)
    core.step(actions, auto_reset=False)
    for index, state in enumerate(positions):
        floe_rules.apply_inplace(state, int(actions[index]))
        assert np.array_equal(core.board[index], state.board) and np.array_equal(core.rings[index].astype(bool), state.rings)
    with pytest.raises(ValueError, match="unknown state arrays"):
        core.set_state(seals=0)
    with pytest.raises(ValueError, match="board: expected shape"):
        core.set_state(board=np.zeros((len(positions) + 1, 64)))
