"""Thin Ice env: snapshots never change the live game; physics failures roll back and truncate."""

from __future__ import annotations

import copy
import hashlib
import pickle

import numpy as np
import pytest

from polarzoo.baselines.agents import ThinIceHeuristic
from polarzoo.envs import thin_ice_v0
from polarzoo.envs.thin_ice.physics import PhysicsError, PilePhysics


def _play(seed: int, players: int, snapshot_rate: float, plies: int = 40) -> str:
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
    for agent in env.agent_iter():  # PettingZoo's dead steps end the episode cleanly
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
        top = frame[8:40, panel * width + 8:(panel + 1) * width - 8]  # inside a possible red frame
        assert len(np.unique(top.reshape(-1, 3), axis=0)) == 1, f"panel {panel} has stray pixels along its top"
    env.close()
