"""The Go with the Floe endgame search (``search:D``, ``baselines/agents/floe_search.py``): values
against a plain expectimax over the readable rules, bounds that bracket, hand-built endgames, the
agent's moves (the best capture, the searched endgame move) and whole legal games in both seats."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.baselines.agents import floe_search as search
from polarzoo.envs.go_with_the_floe import kernels, rules


def _position(bear: str, seal: str, rings: str = "") -> rules.State:
    state = rules.State()
    state.board[rules.square_from_name(bear)] = rules.BEAR
    state.board[rules.square_from_name(seal)] = rules.SEAL
    for name in rings.split():
        state.rings[rules.square_from_name(name)] = True
    return state


def _bound(state: rules.State, depth: int, leaf: float) -> float:
    return search.endgame_bound(*search.endgame_arguments(state.board, state.rings), depth, leaf)


def _reference(state: rules.State, depth: int, leaf: float) -> float:
    """The same expectimax written over rules.apply: the seal to move, uniformly at random."""
    if state.winner >= 0:
        return float(state.winner == rules.WHITE)
    if state.to_move == rules.BLACK:
        return float(np.mean([_reference(rules.apply(state, a), depth, leaf) for a in rules.legal_actions(state)]))
    bear, seal = (int(np.flatnonzero(state.board == token)[0]) for token in (rules.BEAR, rules.SEAL))
    if rules.KING_DISTANCE[bear, seal] <= 1:
        return 1.0
    if depth == 0:
        return leaf
    return max(_reference(rules.apply(state, a), depth - 1, leaf) for a in rules.legal_actions(state))


def _random_endgames(count: int, seed: int) -> list[rules.State]:
    """Positions from random games: the first with one seal and one bear left (the seal to move)."""
    rng = np.random.default_rng(seed)
    found: list[rules.State] = []
    while len(found) < count:
        state = rules.initial_state()
        while state.winner < 0 and (state.board == rules.SEAL).sum() == 2:
            rules.apply_inplace(state, int(rng.choice(rules.legal_actions(state))))
        if state.winner < 0:
            found.append(state)
    return found


def test_seal_isolated_kernel_is_the_rules_test() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        state = rules.initial_state()
        for _ in range(int(rng.integers(0, 30))):
            if state.winner >= 0:
                break
            rules.apply_inplace(state, int(rng.choice(rules.legal_actions(state))))
        bears = np.uint64(rules._bits(state.board == rules.BEAR))
        ring_bits = np.uint64(rules._bits(state.rings))
        for seal in np.flatnonzero(state.board == rules.SEAL).tolist():
            assert kernels.seal_isolated(bears, seal, ring_bits) == rules.is_isolated(state, seal)


@pytest.mark.parametrize("depth,leaf", [(0, 0.5), (1, 0.0), (1, 0.9), (1, 1.0)])
def test_compiled_search_equals_an_expectimax_over_the_rules(depth: int, leaf: float) -> None:
    for state in _random_endgames(4, seed=depth * 10 + int(10 * leaf)):
        assert _bound(state, depth, leaf) == pytest.approx(_reference(state, depth, leaf), abs=1e-12)


def test_bounds_bracket_and_tighten_with_depth() -> None:
    for state in _random_endgames(6, seed=11):
        lower = [_bound(state, depth, 0.0) for depth in range(3)]
        upper = [_bound(state, depth, 1.0) for depth in range(3)]
        assert all(lo <= hi for lo, hi in zip(lower, upper))
        assert lower == sorted(lower) and upper == sorted(upper, reverse=True)


def test_hand_built_endgames() -> None:
    # In the open, the bear two squares from the seal: searching deeper finds more captures.
    assert _bound(_position("E6", "D4"), 0, 0.0) < _bound(_position("E6", "D4"), 2, 0.0) <= _bound(_position("E6", "D4"), 2, 1.0)
    # The seal on C4 boxed in by rings (jumps blocked too) except D4, next to the bear on E4:
    # its one move walks into the capture, a sure win found without searching a White move.
    corridor = _position("E4", "C4", "B3 B4 B5 C3 C5 C2 C6 D3 D5 E2 E6 A4 A6")
    assert rules.legal_actions(corridor).tolist() == [rules.notation_to_action("C4-D4")]
    assert _bound(corridor, 0, 0.0) == 1.0
    bear, seal, ring_bits = search.endgame_arguments(corridor.board, corridor.rings)
    assert search.play_endgame(bear, seal, ring_bits, 1, search.UNDECIDED_LEAF, 0)
    # Open it to the west (A4 free): half the seal's moves now jump away, and the bound says so.
    opened = _position("E4", "C4", "B3 B4 B5 C3 C5 C2 C6 D3 D5 E2 E6 A6")
    assert len(rules.legal_actions(opened)) == 2
    assert _bound(opened, 0, 0.0) == 0.5 and _bound(opened, 0, 1.0) == 1.0


def test_capture_value_is_the_value_of_the_endgame_it_leaves() -> None:
    last = _position("E4", "E5")
    assert search.capture_value(last.board, last.rings, rules.notation_to_action("E4xE5"), 1) == 1.0
    two = _position("E4", "E5")
    two.board[rules.square_from_name("B2")] = rules.SEAL
    two.board[rules.square_from_name("C6")] = rules.BEAR
    after = rules.apply(rules.State(two.board.copy(), two.rings.copy(), rules.WHITE), rules.notation_to_action("E4xE5"))
    assert after.winner < 0 and (after.board == rules.SEAL).sum() == 1
    value = search.capture_value(two.board, two.rings, rules.notation_to_action("E4xE5"), 2)
    assert value == _bound(after, 2, search.UNDECIDED_LEAF)


def _white_to_move(state: rules.State) -> rules.State:
    return rules.State(state.board.copy(), state.rings.copy(), rules.WHITE)


def test_endgame_move_is_a_best_move_of_the_plain_expectimax() -> None:
    for k, position in enumerate(_random_endgames(6, seed=21)):
        state = _white_to_move(position)
        if state.winner >= 0 or not len(rules.legal_actions(state)):
            continue
        legal = rules.legal_actions(state)
        for depth in (1, 2):
            chosen = search.FloeSearch(policy=None, depth=depth).search_move(state.board, state.rings, legal)  # type: ignore[arg-type]
            assert chosen in legal.tolist()
            values = {int(a): _reference(rules.apply(state, int(a)), depth - 1, search.UNDECIDED_LEAF) for a in legal}
            assert values[chosen] == pytest.approx(max(values.values()), abs=1e-12), (k, depth)


def _capture_choices(count: int, seed: int) -> list[rules.State]:
    """Positions from random games with White to move and two captures that leave different endgames."""
    rng = np.random.default_rng(seed)
    found: list[rules.State] = []
    while len(found) < count:
        state = rules.initial_state()
        while state.winner < 0:
            legal = rules.legal_actions(state)
            captures = [a for a in legal.tolist() if a != rules.PASS and state.board[rules.action_destination(a)] == rules.SEAL]
            if state.to_move == rules.WHITE and len(captures) >= 2:
                found.append(state.copy())
                break
            rules.apply_inplace(state, int(rng.choice(legal)))
    return found


def test_the_search_takes_the_capture_that_leaves_the_best_endgame() -> None:
    for state in _capture_choices(5, seed=4):
        legal = rules.legal_actions(state)
        captures = [a for a in legal.tolist() if a != rules.PASS and state.board[rules.action_destination(a)] == rules.SEAL]
        values = [_reference(rules.apply(state, a), 1, search.UNDECIDED_LEAF) for a in captures]
        chosen = search.best_capture(state.board, state.rings, legal, 1)
        assert chosen in captures
        assert values[captures.index(chosen)] == pytest.approx(max(values), abs=1e-12)
    assert search.best_capture(state.board, state.rings, np.array([rules.PASS]), 1) == -1


def test_search_agent_plays_legal_games_in_both_seats() -> None:
    from polarzoo.baselines.agents import RandomAgent, make_agent, pretrained_path
    from polarzoo.baselines.evaluation.tournament import play_game

    agent = make_agent("search:2", "go_with_the_floe_v0")
    assert agent.name == "search:2" and agent.depth == 2
    for seed in range(4):
        seats = [agent, RandomAgent()] if seed % 2 == 0 else [RandomAgent(), agent]
        record = play_game("go_with_the_floe_v0", seats, seed=seed)
        assert record.illegal == [0, 0] and record.length > 0
    with pytest.raises(ValueError, match="White moves to search"):
        make_agent("search:0", "go_with_the_floe_v0")
    with pytest.raises(ValueError, match="does not fit go_with_the_floe_v0"):
        make_agent(f"search:2:{pretrained_path('fire_and_ice_v0')}", "go_with_the_floe_v0")
    with pytest.raises(
        ValueError, match="vsearch:N is a search of thin_ice_v0, not of go_with_the_floe_v0; for go_with_the_floe_v0 use search:N"
    ):
        make_agent("vsearch:2", "go_with_the_floe_v0")


def test_the_search_finds_the_one_forced_win() -> None:
    # The seal on C4 boxed in (its one move is C4-D4); the bear on G4, White to move: of the bear's
    # 11 moves only the slide to E4 wins for sure (the seal must then step next to it).
    state = _white_to_move(_position("G4", "C4", "B3 B4 B5 C3 C5 C2 C6 D3 D5 E2 E6 A4 A6"))
    legal = rules.legal_actions(state)
    sure = [int(a) for a in legal if _reference(rules.apply(state, int(a)), 1, 0.0) == 1.0]
    assert len(legal) == 11 and sure == [rules.notation_to_action("G4-E4")]
    for depth in (1, 2, 3):
        assert search.FloeSearch(policy=None, depth=depth).search_move(state.board, state.rings, legal) == sure[0]  # type: ignore[arg-type]
