"""Thin Ice AEC env: PettingZoo conformance, determinism, bad input, pickling, rendering, golden
playthrough; snapshots never change the live game; physics failures roll back and truncate."""

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

from polarzoo.baselines.agents import ThinIceHeuristic
from polarzoo.envs import thin_ice_v0
from polarzoo.envs.thin_ice import rules
from polarzoo.envs.thin_ice.physics import PhysicsError, PilePhysics
from tests.helpers import check_playthrough, fast_render_fn, scaled


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
    code = "from tests.test_thin_ice_env import _observation_digest; print(_observation_digest(5, 12))"
    root = Path(__file__).resolve().parents[1]
    other = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=scaled(300))
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
    for kwargs, match in (
        ({"num_players": 7}, "num_players must be a whole number in 2..6"),
        ({"grid": 0}, "grid"),
        ({"pitch_mm": 100}, "pitch_mm"),
        ({"table_friction": 9.0}, "table_friction"),
        ({"tremor_mm": 50}, "tremor_mm"),
        ({"max_rearrangements": -1}, "max_rearrangements"),
    ):
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


def _play(seed: int, players: int, snapshot_rate: float, plies: int = 30) -> str:
    """Digest of every observation and reward of a seeded random game; with ``snapshot_rate``,
    snapshots, pickles and deep copies are taken (and thrown away) at random moments."""
    env = thin_ice_v0.raw_env(num_players=players, grid=5)
    env.reset(seed=seed)
    rng, interrupts = np.random.default_rng(seed), np.random.default_rng(seed + 1000)
    digest = hashlib.sha256()
    for _ in range(plies):
        if not env.agents:
            break
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        if snapshot_rate and interrupts.random() < snapshot_rate:
            (env.snapshot, lambda: pickle.dumps(env), lambda: copy.deepcopy(env))[int(interrupts.integers(3))]()
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        for name in env.possible_agents:
            digest.update(env.observe(name)["observation"].tobytes())
        digest.update(repr(sorted(env.rewards.items())).encode())
    return digest.hexdigest()


@pytest.mark.parametrize("seed", range(20))
def test_snapshots_pickles_and_copies_never_change_the_game(seed: int) -> None:
    players = 2 + seed % 4  # 2..5
    assert _play(seed, players, 0.0) == _play(seed, players, 0.6)


def test_a_copy_continues_exactly_like_the_original() -> None:
    env = thin_ice_v0.raw_env(num_players=3, grid=5)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(8):
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
    clones = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(12):
        if not env.agents or any(env.terminations.values()):
            break
        action = int(rng.choice(np.flatnonzero(env.legal_action_mask())))
        for game in (env, *clones):
            game.step(action)
        for clone in clones:
            assert np.array_equal(clone.observe("player_0")["observation"], env.observe("player_0")["observation"])


def _fail_on_settle(monkeypatch: pytest.MonkeyPatch, after_calls: int) -> list[int]:
    """Make PilePhysics.settle raise PhysicsError from its ``after_calls``-th call on (the piece
    is already activated and posed then: a half-applied move)."""
    calls = [0]
    original = PilePhysics.settle

    def settle(self: PilePhysics):  # noqa: ANN202
        calls[0] += 1
        if calls[0] >= after_calls:
            raise PhysicsError("the simulation went unstable (injected)")
        return original(self)

    monkeypatch.setattr(PilePhysics, "settle", settle)
    return calls


def test_physics_error_rolls_back_and_truncates(monkeypatch: pytest.MonkeyPatch) -> None:
    env = thin_ice_v0.env(grid=3)
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.unwrapped.legal_action_mask())[0]))  # a call
    base = env.unwrapped
    before = {agent: env.observe(agent)["observation"].copy() for agent in env.possible_agents}
    before_state = copy.deepcopy(base.game.state)
    _fail_on_settle(monkeypatch, 1)
    place = int(np.flatnonzero(base.legal_action_mask())[0])
    env.step(place)
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert all(env.infos[agent]["physics_error"] == 1 for agent in env.possible_agents)
    assert "injected" in base.physics_error and "rolled back" in base.physics_error
    for agent in env.possible_agents:  # the position before the failed action, not half of it
        assert np.array_equal(env.observe(agent)["observation"], before[agent])
    assert base.game.state.pending == before_state.pending and base.game.state.in_hand == before_state.in_hand
    assert not any(pile.in_play.any() for pile in base.piles.piles)
    for _agent in env.agent_iter():  # PettingZoo's dead steps end the episode cleanly
        env.step(None)
    monkeypatch.undo()
    env.reset(seed=2)
    assert base.physics_error is None and env.infos[env.agent_selection]["physics_error"] == 0
    env.step(int(np.flatnonzero(base.legal_action_mask())[0]))
    env.step(int(np.flatnonzero(base.legal_action_mask())[0]))
    assert not any(env.truncations.values())


def test_heuristic_look_ahead_restores_the_game_when_physics_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    env = thin_ice_v0.raw_env(grid=3)
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.legal_action_mask())[0]))  # a call: the next move is a placement
    observation = env.observe(env.agent_selection)["observation"].copy()
    _fail_on_settle(monkeypatch, 2)  # the first look-ahead works, the others fail
    action = ThinIceHeuristic(candidates=3).act(env, env.agent_selection, np.random.default_rng(0))
    assert env.legal_action_mask()[action]
    assert env.physics_error is None and not any(env.truncations.values())
    assert np.array_equal(env.observe(env.agent_selection)["observation"], observation)


def test_picture_top_rows_are_plain_background() -> None:
    """Only the table and the pieces in play are drawn: no parked pieces, no shadow-map slivers
    on the far table along the top edge of any panel."""
    env = thin_ice_v0.raw_env(num_players=3, render_mode="rgb_array")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(14):
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
    frame = env.render()
    width = frame.shape[1] // 3
    for panel in range(3):
        top = frame[8:40, panel * width + 8 : (panel + 1) * width - 8]  # inside a possible red frame
        assert len(np.unique(top.reshape(-1, 3), axis=0)) == 1, f"panel {panel} has stray pixels along its top"
    env.close()


def test_golden_playthrough() -> None:
    """A seeded 3-player game of random legal actions, written as the rules see it (actions in
    notation, phase, who is out by which rule, points): a change in the rules, the notation or
    the physics' verdicts shows up as a diff."""
    env = thin_ice_v0.env(num_players=3, grid=3)
    env.reset(seed=42)
    rng = np.random.default_rng(42)
    base = env.unwrapped
    lines = ["# thin_ice_v0 num_players=3 grid=3 seed=42"]
    for step, agent in enumerate(env.agent_iter(max_iter=400)):
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            lines.append(f"{agent}: final reward {reward:+.3f} points {info['points']:.2f} out_rule {info['out_rule']}")
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        text = base.action_to_notation(action)
        env.step(action)
        state = base.game.state
        outs = " ".join(f"{rule or '-'}{r if r >= 0 else ''}" for rule, r in zip(state.out_rule, state.out_round))
        lines.append(f"step {step}: {agent} {text} | {rules.PHASE_NAMES[state.phase]} | out {outs}")
    lines.append(f"result {base.result()}")
    check_playthrough("thin_ice_v0", "\n".join(lines) + "\n")


def test_picture_shows_the_table_the_lattice_and_who_is_who() -> None:
    """Each panel: a table top under the pile (not the same colour as the floor), a dot at every
    lattice point, and the player's name at the bottom left."""
    from polarzoo.envs.thin_ice.render import _GLYPHS, display_mjcf, draw_text

    env = thin_ice_v0.raw_env(num_players=2, grid=3, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    width = frame.shape[1] // 2
    for panel in range(2):
        image = frame[:, panel * width : (panel + 1) * width]
        centre = image[image.shape[0] // 2 - 5 : image.shape[0] // 2 + 5, width // 2 - 5 : width // 2 + 5].reshape(-1, 3)
        corner = image[50:60, 8:18].reshape(-1, 3)
        assert np.abs(centre.mean(axis=0) - corner.mean(axis=0)).max() > 20, "the table top looks like the floor"
        label = image[image.shape[0] - 34 : image.shape[0] - 12, 8:140]
        assert (label == 255).all(axis=2).sum() > 50, "no player label"
    xml = display_mjcf(env.physics_config, 3, 0.007)
    assert xml.count('type="cylinder"') == 9 and "table_top" in xml
    blank = np.zeros((30, 200, 3), dtype=np.uint8)
    draw_text(blank, "PLAYER_0 OUT (T)", left=2, bottom=20)
    assert set("PLAYER_0 OUT(T)") <= set(_GLYPHS) and (blank == 255).any()
    env.close()


def test_a_snapshot_restores_only_into_an_env_of_its_configuration() -> None:
    env = thin_ice_v0.raw_env(settle_steps=np.int64(10))  # a NumPy integer is a whole number too
    env.reset(seed=0)
    snapshot = env.snapshot()
    for kwargs, named in (
        ({"num_players": 3}, "num_players=2"),
        ({"grid": 5}, "grid=7"),
        ({"idle_pieces": "parked"}, "physics="),
    ):
        other = thin_ice_v0.raw_env(**kwargs)
        other.reset(seed=0)
        before = other.observe(other.agent_selection)["observation"].copy()
        with pytest.raises(ValueError, match=named):
            other.restore(snapshot)
        assert (other.observe(other.agent_selection)["observation"] == before).all()
    with pytest.raises(ValueError, match="snapshot"):
        env.restore({"piles": []})
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    env.restore(snapshot)
    assert env.game.state.phase == snapshot["game"].phase


def test_cached_pile_features_are_the_piles_own() -> None:
    """Observations reuse a pile's features until it changes (``PilePhysics.version``): after
    moves, a failed look-ahead's restore and a restore of an older snapshot, every observation
    equals one computed with nothing cached."""
    env = thin_ice_v0.raw_env(num_players=3, grid=5)
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    saved = None
    for ply in range(40):
        if not env.agents or any(env.terminations.values()) or any(env.truncations.values()):
            break
        if ply == 10:
            saved = env.snapshot()
        if ply in (20, 30) and saved is not None:
            env.restore(saved)
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
        for seat in range(env.num_players):
            cached = env._observation(seat)
            env._feature_cache.clear()
            assert np.array_equal(cached, env._observation(seat)), (ply, seat)
