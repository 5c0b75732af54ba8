"""Search agents: ``az:N`` (PUCT guided by a policy) sees wins in one and refuses to allow them;
Thin Ice's ``search:K`` avoids a placement its policy prefers that the physics says puts it out,
and ``vsearch:K`` plays the placement its critic values most on the pile each one leaves."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from polarzoo.baselines.agents.alphazero import AlphaZeroAgent  # noqa: E402
from polarzoo.baselines.policies import BoardPolicy, board_for_env  # noqa: E402
from polarzoo.envs.fire_and_ice import rules as fire_rules  # noqa: E402
from polarzoo.envs.go_with_the_floe import rules as floe_rules  # noqa: E402
from polarzoo.wrappers import SingleAgentEnv  # noqa: E402

GAMES = {"fire_and_ice_v0": fire_rules, "go_with_the_floe_v0": floe_rules}


def _untrained(env_id: str) -> MaskablePPO:
    env = SingleAgentEnv(env_id)
    return MaskablePPO(
        BoardPolicy, env, seed=0, device="cpu", policy_kwargs={"board": board_for_env(env_id), "dim": 8, "blocks": 1}
    )


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


class _RowByRow:
    """A stand-in for the network that scores each position by itself (no float rounding shared
    between rows): a prior and a value from the board alone, and a count of the passes."""

    def __init__(self) -> None:
        self.passes: list[int] = []

    def batch(self, states, masks):  # noqa: ANN001, ANN201
        self.passes.append(len(states))
        priors, values = [], []
        for state, mask in zip(states, masks):
            weights = (1.0 + (np.arange(len(mask)) * 7 + int(np.sum(state.board))) % 5) * mask
            priors.append(weights / weights.sum())
            values.append(float(np.tanh(int(np.sum(state.board * np.arange(len(state.board)))) % 9 - 4)))
        return priors, values


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_az_searches_several_games_in_lock_step(env_id: str) -> None:
    """``act_batch`` (what ``OpponentBatchingVecEnv`` calls) runs the games' searches side by side,
    one pass of the network a simulation for all of them, and each game gets the move its own
    search chooses."""
    rules = GAMES[env_id]
    agent = AlphaZeroAgent(_untrained(env_id), env_id, simulations=12)
    agent.evaluate = _RowByRow()
    envs = [SimpleNamespace(state=state, rules=rules) for state in _positions(rules, "block", 6, seed=3)]
    alone = [agent.act(env, "x", np.random.default_rng(index)) for index, env in enumerate(envs)]
    passes_alone = len(agent.evaluate.passes)
    agent.evaluate.passes.clear()
    together = agent.act_batch(envs, ["x"] * len(envs), [np.random.default_rng(index) for index in range(len(envs))])
    assert together == alone
    assert len(agent.evaluate.passes) <= 1 + agent.simulations < passes_alone
    assert agent.evaluate.passes[0] == len(envs)  # the roots, in one pass


def test_az_agents_of_one_file_and_budget_share_a_batch() -> None:
    from polarzoo.baselines.agents import make_agent

    first, second = make_agent("az:4", "fire_and_ice_v0"), make_agent("az:4", "fire_and_ice_v0")
    assert first.batch_key == second.batch_key is not None
    assert make_agent("az:8", "fire_and_ice_v0").batch_key != first.batch_key
    assert AlphaZeroAgent(first.model, "fire_and_ice_v0", simulations=4).batch_key is None


# ------------------------------------------------------------------------------ Thin Ice search:K
def _thin_ice_nest_position():  # noqa: ANN202
    """A 2-player Thin Ice game where player_0 must add an S and has an M upright in the middle of
    its pile: an S placed upright on that spot nests (rule N, out), one elsewhere stands."""
    pytest.importorskip("mujoco")
    from polarzoo.envs import thin_ice_v0
    from polarzoo.envs.thin_ice import rules as thin_rules

    env = thin_ice_v0.raw_env()
    env.reset(seed=0)
    game, centre = env.game, (env.grid * env.grid) // 2

    def place(size: int, cell: int, orientation: int) -> int:
        return game.place_base + size * env.num_targets + 6 * cell + orientation

    for action in (
        thin_rules.CALLS.index("M"),
        place(1, centre, 0),
        game.done_action,
        place(1, 0, 0),
        game.done_action,
        thin_rules.CALLS.index("S"),
        place(0, 0, 2),
        game.done_action,
    ):
        env.step(action)
    assert env.agent_selection == "player_0" and game.state.pending == [0]
    return env, place(0, centre, 0), place(0, 3, 0)


class _PreferringPolicy:
    """A stand-in policy whose probabilities put ``first`` before ``second`` before the rest."""

    def __init__(self, first: int, second: int) -> None:
        self.first, self.second = first, second

    def action_probabilities(self, env, agent: str) -> np.ndarray:  # noqa: ANN001
        probs = env.observe(agent)["action_mask"].astype(float) * 1e-3
        probs[self.first], probs[self.second] = 0.6, 0.3
        return probs / probs.sum()

    def act(self, env, agent: str, rng: np.random.Generator) -> int:  # noqa: ANN001
        return int(np.argmax(self.action_probabilities(env, agent)))


def test_thin_ice_search_avoids_a_nest_the_policy_prefers() -> None:
    from polarzoo.baselines.agents.thin_ice import ThinIceSearch, placement_score

    env, nest, elsewhere = _thin_ice_nest_position()
    assert placement_score(env, 0, nest) == -1000.0  # the physics does nest it: the test can fail
    placements = env.piles.placements
    chosen = ThinIceSearch(_PreferringPolicy(nest, elsewhere), k=3).act(env, "player_0", np.random.default_rng(0))
    assert chosen == elsewhere
    # the work of one move is bounded: the trial placements (here two: the nest, then the one
    # that stands), never more than k, and the live game is where it was
    assert env.piles.placements - placements == 2
    assert env.agent_selection == "player_0" and env.game.state.pending == [0]
    env.step(chosen)
    assert env.game.state.out_round[0] < 0
    # with k = 1 the search plays the policy's first choice whatever it does
    fresh, _, _ = _thin_ice_nest_position()
    assert ThinIceSearch(_PreferringPolicy(nest, elsewhere), k=1).act(fresh, "player_0", np.random.default_rng(0)) == nest


# ------------------------------------------------------------------------------ Thin Ice vsearch:K
class _ScriptedCritic(_PreferringPolicy):
    """A stand-in policy whose critic gives the values of ``values`` in turn, and records what it
    was asked to value (the pieces still to place, the live pile's placements)."""

    def __init__(self, first: int, second: int, values: list[float]) -> None:
        super().__init__(first, second)
        self.values, self.asked = list(values), []

    def value(self, env, agent: str) -> float:  # noqa: ANN001
        self.asked.append((agent, list(env.game.state.pending), env.game.state.out_round[0]))
        return self.values.pop(0)


def _third_choice(env, first: int, second: int) -> int:  # noqa: ANN001
    """The most probable placement of :class:`_PreferringPolicy` after its two favourites."""
    probs = _PreferringPolicy(first, second).action_probabilities(env, "player_0")
    game = env.game
    places = game.place_base + np.flatnonzero(probs[game.place_base : game.pick_base] > 0)
    return int(places[np.argsort(-probs[places], kind="stable")][2])


def test_thin_ice_vsearch_plays_the_placement_its_critic_values_most() -> None:
    from polarzoo.baselines.agents.thin_ice import OUT_VALUE, ThinIceSearch, placement_value

    env, nest, elsewhere = _thin_ice_nest_position()
    third = _third_choice(env, nest, elsewhere)
    # the nest is tried and valued as out, below any value of the critic, which is never asked
    critic = _ScriptedCritic(nest, elsewhere, [0.2, 0.7])
    assert placement_value(env, "player_0", nest, critic) == OUT_VALUE and critic.asked == []
    placements = env.piles.placements
    chosen = ThinIceSearch(critic, k=3, scoring="value").act(env, "player_0", np.random.default_rng(0))
    # the less probable of the two that stand, because the critic values its pile more; the
    # critic was asked about the piles after the S was placed (nothing pending, still in)
    assert chosen == third and critic.asked == [("player_0", [], -1), ("player_0", [], -1)]
    assert env.piles.placements - placements == 3  # the three tries, no more
    assert env.agent_selection == "player_0" and env.game.state.pending == [0]  # the live game as it was
    # at equal values the most probable wins
    fresh, _, _ = _thin_ice_nest_position()
    assert (
        ThinIceSearch(_ScriptedCritic(nest, elsewhere, [0.5, 0.5]), k=3, scoring="value").act(
            fresh, "player_0", np.random.default_rng(0)
        )
        == elsewhere
    )


def test_thin_ice_vsearch_spec() -> None:
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.agents.registry import model_files
    from polarzoo.baselines.agents.thin_ice import ThinIceSearch

    pytest.importorskip("mujoco")
    agent = make_agent("vsearch:3", "thin_ice_v0")
    assert isinstance(agent, ThinIceSearch) and agent.scoring == "value" and agent.k == 3 and agent.name == "vsearch:3"
    assert make_agent("search:3", "thin_ice_v0").scoring == "safe"
    assert model_files("vsearch:3", "thin_ice_v0") == model_files("pretrained", "thin_ice_v0")
    with pytest.raises(ValueError, match="vsearch:N is a search of thin_ice_v0, not of fire_and_ice_v0"):
        make_agent("vsearch:4", "fire_and_ice_v0")
    with pytest.raises(ValueError, match="vsearch needs a positive whole number of placements to try"):
        make_agent("vsearch:0", "thin_ice_v0")
    with pytest.raises(ValueError, match="scoring must be one of"):
        ThinIceSearch(agent.policy, 2, scoring="best")
