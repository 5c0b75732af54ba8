"""baselines.search (az:N): PUCT guided by a policy sees wins in one and refuses to allow them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from polarzoo.baselines.policies import BoardPolicy, board_for_env  # noqa: E402
from polarzoo.baselines.agents.alphazero import AlphaZeroAgent  # noqa: E402
from polarzoo.envs.fire_and_ice import rules as fire_rules  # noqa: E402
from polarzoo.envs.go_with_the_floe import rules as floe_rules  # noqa: E402
from polarzoo.wrappers import SingleAgentEnv  # noqa: E402

GAMES = {"fire_and_ice_v0": fire_rules, "go_with_the_floe_v0": floe_rules}


def _untrained(env_id: str) -> MaskablePPO:
    env = SingleAgentEnv(env_id)
    return MaskablePPO(BoardPolicy, env, seed=0, device="cpu",
                       policy_kwargs={"board": board_for_env(env_id), "dim": 8, "blocks": 1})


def _wins_now(rules, state, action: int) -> bool:  # noqa: ANN001
    return rules.apply(state, int(action)).winner == state.to_move


def _allows_reply_win(rules, state, action: int) -> bool:  # noqa: ANN001
    after = rules.apply(state, int(action))
    return after.winner < 0 and any(_wins_now(rules, after, r) for r in rules.legal_actions(after))


def _positions(rules, kind: str, count: int, seed: int) -> list:  # noqa: ANN001
    """Positions met in seeded random games: ``win`` (a win in one exists) or ``block`` (no win in
    one, some moves allow the opponent a win in one and at least one move does not)."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        state = rules.initial_state()
        while state.winner < 0 and len(found) < count:
            actions = rules.legal_actions(state)
            wins = [a for a in actions if _wins_now(rules, state, a)]
            if kind == "win" and wins and len(wins) < len(actions):
                found.append(state.copy())
            if kind == "block" and not wins:
                bad = [_allows_reply_win(rules, state, a) for a in actions]
                if any(bad) and not all(bad):
                    found.append(state.copy())
            state = rules.apply(state, int(rng.choice(actions)))
    return found


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_az_takes_a_win_in_one(env_id: str) -> None:
    rules = GAMES[env_id]
    agent = AlphaZeroAgent(_untrained(env_id), env_id, simulations=10)
    for state in _positions(rules, "win", 5, seed=0):
        action = agent.act(SimpleNamespace(state=state, rules=rules), "x", np.random.default_rng(0))
        assert _wins_now(rules, state, action)


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_az_blocks_a_win_in_one(env_id: str) -> None:
    rules = GAMES[env_id]
    agent = AlphaZeroAgent(_untrained(env_id), env_id, simulations=60)
    for state in _positions(rules, "block", 5, seed=1):
        before = state.copy()
        action = agent.act(SimpleNamespace(state=state, rules=rules), "x", np.random.default_rng(0))
        assert state == before  # the search works on copies
        assert rules.legal_action_mask(state)[action]
        assert not _allows_reply_win(rules, state, action), rules.action_to_notation(action)


def test_az_is_deterministic_for_a_seed_and_checks_arguments() -> None:
    rules = fire_rules
    agent = AlphaZeroAgent(_untrained("fire_and_ice_v0"), "fire_and_ice_v0", simulations=20)
    state = _positions(rules, "block", 1, seed=2)[0]
    env = SimpleNamespace(state=state, rules=rules)
    assert agent.act(env, "x", np.random.default_rng(5)) == agent.act(env, "x", np.random.default_rng(5))
    with pytest.raises(ValueError, match="simulations"):
        AlphaZeroAgent(agent.model, "fire_and_ice_v0", simulations=0)
    with pytest.raises(ValueError, match="rules core"):
        AlphaZeroAgent(agent.model, "thin_ice_v0")


def test_az_captures_the_last_seal_on_a_hand_built_position() -> None:
    """One seal left on D4, a bear next to it on E5: White takes it and wins at once."""
    rules = floe_rules
    state = rules.initial_state()
    state.board[:] = rules.EMPTY
    for name, token in (("D4", rules.SEAL), ("E5", rules.BEAR), ("G7", rules.BEAR)):
        state.board[rules.square_from_name(name)] = token
    for name in ("C3", "C4", "C5"):
        state.rings[rules.square_from_name(name)] = True
    state.to_move = rules.WHITE
    agent = AlphaZeroAgent(_untrained("go_with_the_floe_v0"), "go_with_the_floe_v0", simulations=5)
    action = agent.act(SimpleNamespace(state=state, rules=rules), "white", np.random.default_rng(0))
    assert rules.action_to_notation(action, state) == "E5xD4"


def test_a_pickled_az_agent_carries_its_file_not_its_tensors() -> None:
    """Worker processes get each game's agents pickled: an ``az:N`` agent travels as its model
    file's path (its tensors would travel as file descriptors, one set a game, until a long
    league build ran out of them) and plays the same moves after the trip."""
    import pickle

    from polarzoo.baselines.agents import make_agent
    from polarzoo.envs import fire_and_ice_v0

    agent = make_agent("az:4", "fire_and_ice_v0")
    data = pickle.dumps(agent)
    assert len(data) < 2000 and b"torch" not in data
    copy = pickle.loads(data)
    assert (copy.name, copy.simulations, copy.path) == (agent.name, agent.simulations, agent.path)
    assert pickle.loads(data).model is copy.model  # loaded once per process, not once per game
    env = fire_and_ice_v0.raw_env()
    env.reset(seed=3)
    for _ in range(6):
        move = agent.act(env, env.agent_selection, np.random.default_rng(0))
        assert copy.act(env, env.agent_selection, np.random.default_rng(0)) == move
        env.step(move)
