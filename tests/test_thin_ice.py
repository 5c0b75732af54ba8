"""Thin Ice: physics scenarios from the rules, the game layer, and the AEC env."""

from __future__ import annotations

import copy
import hashlib
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from polarzoo.envs import thin_ice_v0
from polarzoo.envs.thin_ice import rules
from polarzoo.envs.thin_ice.physics import PhysicsConfig, PhysicsError, PilePhysics
from tests.helpers import fast_render_fn
from tests.thin_ice_helpers import Pile


# ---------------------------------------------------------------------------- physics scenarios
def test_four_separate_upright_pieces_out_by_T() -> None:
    pile = Pile()
    for i in range(3):
        assert pile.place("S", x_mm=30 * i).eliminated is None
    assert pile.place("S", x_mm=90).eliminated == "T"


def test_medium_dropped_upright_on_a_medium_out_by_N() -> None:
    pile = Pile()
    assert pile.place("M").eliminated is None
    outcome = pile.place("M")
    assert outcome.eliminated == "N"
    assert pile.physics.contacts().nested_pairs


def test_large_over_small_both_on_table_not_nested() -> None:
    pile = Pile()
    pile.place("S")
    outcome = pile.place("L")
    assert outcome.eliminated is None and outcome.settled
    assert pile.on_table("S", 0) and pile.on_table("L", 0)
    assert not pile.physics.contacts().nested_pairs and pile.rule() is None


def test_lying_piece_resting_across_others_is_stable() -> None:
    pile = Pile()
    pile.place("L", x_mm=-15)
    pile.place("L", x_mm=15)
    outcome = pile.place("L", orientation="lying+y")
    assert outcome.eliminated is None and outcome.settled
    assert not pile.on_table("L", 2) and pile.touching_piece("L", 2)
    assert pile.height_mm("L", 2) > 20


def test_three_pieces_released_in_mid_air_out_by_A() -> None:
    pile = Pile()
    outcome = pile.release(("S", (0, 0, 100), "upright"), ("M", (50, 0, 100), "upright"), ("L", (-50, 0, 100), "upright"))
    assert outcome.eliminated == "A" and outcome.steps == 1
    two = Pile()
    assert two.release(("S", (0, 0, 100), "upright"), ("M", (50, 0, 100), "upright")).eliminated is None


def test_pick_up_makes_pieces_fall() -> None:
    pile = Pile()
    pile.place("L")
    pile.place("M", orientation="inverted")  # balanced on the large's apex, off the table
    assert not pile.on_table("M", 0)
    height = pile.height_mm("M", 0)
    outcome = pile.pick_up("L", 0)
    assert outcome.eliminated is None
    assert pile.on_table("M", 0) and pile.height_mm("M", 0) < height - 10


def test_unstable_simulation_is_reported() -> None:
    physics = PilePhysics()
    physics.place(2, (0.0, 0.0), 0, None)
    physics.data.qvel[physics.dof_adr[10] : physics.dof_adr[10] + 3] = np.nan
    with pytest.raises(PhysicsError, match="unstable"):
        physics.settle()


def test_snapshot_restore_replays_bit_identically() -> None:
    physics = PilePhysics()
    physics.place(2, (0.0, 0.0), 0, None)
    saved = physics.snapshot()
    physics.place(1, (0.004, 0.0), 1, np.random.default_rng(3))
    first = physics.data.qpos.copy()
    physics.restore(saved)
    physics.place(1, (0.004, 0.0), 1, np.random.default_rng(3))
    assert np.array_equal(first, physics.data.qpos)


def test_physics_config_validation() -> None:
    with pytest.raises(ValueError, match="table_friction"):
        PhysicsConfig(table_friction=-1).validate()


# ---------------------------------------------------------------------------- game layer (stub physics)
class ScriptedPhysics:
    """Reports the scripted rule for (player, n-th physical action of that player)."""

    def __init__(self, script: dict[tuple[int, int], str] | None = None) -> None:
        self.script = script or {}
        self.count: dict[int, int] = {}

    def _next(self, player: int) -> str | None:
        self.count[player] = self.count.get(player, 0) + 1
        return self.script.get((player, self.count[player]))

    def place(self, player, size, target, piece_slot, rng):  # noqa: ANN001, ANN201
        return self._next(player)

    def pick_up(self, player, piece_slot):  # noqa: ANN001, ANN201
        return self._next(player)


def _play_round(game: rules.ThinIceGame, call: int) -> None:
    """The caller calls; every adder places its pending pieces at target 0 and says DONE."""
    game.apply(call, None)
    while game.state.phase == rules.ADD:
        s = game.state
        if s.pending:
            game.apply(game.place_base + s.pending[0] * game.num_targets, None)
        else:
            game.apply(game.done_action, None)


def test_calling_turn_tie_break_and_points_for_three_players() -> None:
    # Round 1: player_0 calls S, nobody falls.  Round 2: player_1 calls S; player_1 and player_2
    # both crash.  player_1 called more recently, so it scores lower.
    game = rules.ThinIceGame(3, ScriptedPhysics({(1, 2): "T", (2, 2): "N"}), num_targets=6)
    _play_round(game, 0)
    assert game.state.caller == 1 and game.state.phase == rules.CALL
    _play_round(game, 0)
    s = game.state
    assert s.phase == rules.OVER and s.out_rule == ["", "T", "N"]
    assert s.points == [3.0, 1.0, 2.0]
    assert game.rewards().tolist() == [1.0, -1.0, 0.0]


def test_points_ties_and_survivors_share() -> None:
    assert rules.final_points([-1, -1, -1], [-1, -1, -1]) == [2.0, 2.0, 2.0]
    assert rules.final_points([0, -1, -1, 0], [0, -1, -1, -1]) == [1.0, 3.5, 3.5, 2.0]


def test_supply_running_out_ends_the_game() -> None:
    game = rules.ThinIceGame(2, ScriptedPhysics(), num_targets=6)
    for call in ("LL", "LL", "L", "MM", "MM", "M", "SS", "SS"):
        assert game.state.phase == rules.CALL
        _play_round(game, rules.CALLS.index(call))
    assert game.state.legal_calls() == [0]  # one S left
    _play_round(game, 0)
    assert game.state.phase == rules.OVER and game.state.supply.tolist() == [0, 0, 0]
    assert game.state.points == [1.5, 1.5] and game.rewards().tolist() == [0.0, 0.0]


def test_masks_by_phase_and_rearrangement_rules() -> None:
    game = rules.ThinIceGame(2, ScriptedPhysics(), num_targets=6, max_rearrangements=1)
    mask = game.legal_action_mask()
    assert mask[:9].all() and not mask[9:].any()
    game.apply(rules.CALLS.index("SM"), None)
    mask = game.legal_action_mask()
    places = mask[game.place_base : game.pick_base].reshape(3, 6)
    assert places[0].all() and places[1].all() and not places[2].any() and not mask[game.done_action]
    game.apply(game.place_base, None)  # S
    game.apply(game.place_base + 6, None)  # M
    mask = game.legal_action_mask()
    assert mask[game.done_action] and mask[game.pick_base] and mask[game.pick_base + 1] and not mask[game.pick_base + 2]
    game.apply(game.pick_base + 1, None)  # pick the M up: it must be placed before anything else
    mask = game.legal_action_mask()
    assert mask[game.place_base + 6 : game.place_base + 12].all() and mask.sum() == 6
    assert "must be placed first" in game.explain_illegal(game.done_action)
    game.apply(game.place_base + 6, None)
    assert not game.legal_action_mask()[game.pick_base]  # max_rearrangements=1 used up
    assert "no rearrangements left" in game.explain_illegal(game.pick_base)


# ---------------------------------------------------------------------------- AEC env
def small_env(**kwargs):  # noqa: ANN003, ANN201
    return thin_ice_v0.env(grid=3, **kwargs)


def test_api_and_seed() -> None:
    api_test(small_env(), num_cycles=12)
    seed_test(lambda: small_env(num_players=3), num_cycles=8)


def _observation_digest(seed: int, steps: int) -> str:
    env = thin_ice_v0.raw_env(num_players=2, grid=3)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    for _ in range(steps):
        if all(env.terminations.values()):
            break
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
        digest.update(env.observe(env.agent_selection)["observation"].tobytes())
    return digest.hexdigest()


def test_determinism_in_two_envs_and_two_processes() -> None:
    here = _observation_digest(5, 12)
    assert here == _observation_digest(5, 12)
    code = "from tests.test_thin_ice import _observation_digest; print(_observation_digest(5, 12))"
    root = Path(__file__).resolve().parents[1]
    other = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == here


@pytest.mark.parametrize("num_players", [2, 4])
def test_seeded_game_plays_to_the_end(num_players: int) -> None:
    env = thin_ice_v0.raw_env(num_players=num_players, grid=3)
    env.reset(seed=num_players)
    assert env.observation_space("player_0")["observation"].shape == (183 * num_players + 22,)  # as documented
    assert env.num_actions == 9 + 3 * 3 * 3 * 6 + 16
    rng = np.random.default_rng(num_players)
    while not all(env.terminations.values()):
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
    points = sorted(env.infos[a]["points"] for a in env.possible_agents)
    assert sum(points) == pytest.approx(num_players * (num_players + 1) / 2)
    assert min(env._cumulative_rewards.values()) >= -1 and max(env._cumulative_rewards.values()) <= 1


def test_bad_input() -> None:
    env = thin_ice_v0.raw_env(grid=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="calling phase"):
        env.step(env.game.done_action)
    with pytest.raises(TypeError):
        env.step("S")
    env.step(0)  # call S
    with pytest.raises(ValueError, match="adding phase"):
        env.step(1)
    with pytest.raises(ValueError, match="still pending"):
        env.step(env.game.done_action)
    for kwargs, match in (({"num_players": 7}, "num_players must be one of 2..6"), ({"grid": 0}, "grid"),
                          ({"pitch_mm": 100}, "pitch_mm"), ({"table_friction": 9.0}, "table_friction"),
                          ({"tremor_mm": 50}, "tremor_mm"), ({"max_rearrangements": -1}, "max_rearrangements")):
        with pytest.raises(ValueError, match=match):
            thin_ice_v0.raw_env(**kwargs)


def test_pickle_deepcopy_and_snapshot() -> None:
    env = thin_ice_v0.raw_env(grid=3)
    env.reset(seed=2)
    for action in (rules.CALLS.index("LL"), env.game.place_base + 2 * env.num_targets):
        env.step(action)
    saved = env.snapshot()
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert np.array_equal(clone.observe("player_1")["observation"], env.observe("player_1")["observation"])
        action = env.game.place_base + 2 * env.num_targets + 6
        clone.step(action)
        env.step(action)
        assert np.array_equal(clone.observe("player_1")["observation"], env.observe("player_1")["observation"])
        env.restore(saved)


def test_render_ansi_and_rgb() -> None:
    env = thin_ice_v0.raw_env(grid=3, render_mode="ansi")
    env.reset(seed=0)
    env.step(0)
    env.step(env.game.place_base)
    text = env.render()
    assert "player_0 [in]" in text
    assert any(word in text for word in ("upright", "lying", "inverted")), text
    pytest.importorskip("mujoco")
    rgb = thin_ice_v0.raw_env(grid=3, num_players=3, render_mode="rgb_array")
    rgb.reset(seed=0)
    rgb.step(0)
    rgb.step(rgb.game.place_base)
    frame = rgb.render()
    assert frame.dtype == np.uint8 and frame.shape == (320, 960, 3) and frame.std() > 5
    rgb.close()


def test_pettingzoo_render_test() -> None:
    render_test(fast_render_fn(thin_ice_v0.env, grid=3))
