"""The Go with the Floe endgame search of ``benchmarks.floe_white``: values against a plain
expectimax over the readable rules, bounds that bracket, hand-built endgames."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs.go_with_the_floe import kernels, rules

floe_white = pytest.importorskip("benchmarks.floe_white")  # the repository's benchmarks/, run from its root


def _position(bear: str, seal: str, rings: str = "") -> rules.State:
    state = rules.State()
    state.board[rules.square_from_name(bear)] = rules.BEAR
    state.board[rules.square_from_name(seal)] = rules.SEAL
    for name in rings.split():
        state.rings[rules.square_from_name(name)] = True
    return state


def _bound(state: rules.State, depth: int, leaf: float) -> float:
    return floe_white.endgame_bound(*floe_white.endgame_arguments(state.board, state.rings), depth, leaf)


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
    bear, seal, ring_bits = floe_white.endgame_arguments(corridor.board, corridor.rings)
    assert floe_white.play_endgame(bear, seal, ring_bits, 1, floe_white.UNDECIDED_LEAF, 0)
    # Open it to the west (A4 free): half the seal's moves now jump away, and the bound says so.
    opened = _position("E4", "C4", "B3 B4 B5 C3 C5 C2 C6 D3 D5 E2 E6 A6")
    assert len(rules.legal_actions(opened)) == 2
    assert _bound(opened, 0, 0.0) == 0.5 and _bound(opened, 0, 1.0) == 1.0


def test_capture_value_is_the_value_of_the_endgame_it_leaves() -> None:
    last = _position("E4", "E5")
    assert floe_white._capture_value(last.board, last.rings, rules.notation_to_action("E4xE5"), 1) == 1.0
    two = _position("E4", "E5")
    two.board[rules.square_from_name("B2")] = rules.SEAL
    two.board[rules.square_from_name("C6")] = rules.BEAR
    after = rules.apply(rules.State(two.board.copy(), two.rings.copy(), rules.WHITE), rules.notation_to_action("E4xE5"))
    assert after.winner < 0 and (after.board == rules.SEAL).sum() == 1
    value = floe_white._capture_value(two.board, two.rings, rules.notation_to_action("E4xE5"), 2)
    assert value == _bound(after, 2, floe_white.UNDECIDED_LEAF)


class _IllegalPolicy:
    """Answers action 0 (A1, off the board: never legal) for every game."""

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.zeros(len(masks), dtype=np.int64)


def test_heuristic_first_phase_plays_every_white_move_and_repeats() -> None:
    from polarzoo.envs.batch import GoWithTheFloeBatch

    # The batch core raises on an illegal action, so finishing means no policy move was played.
    results = [floe_white.play_with_search(_IllegalPolicy(), GoWithTheFloeBatch(6), np.random.default_rng(5), 1, "heuristic")
               for _ in range(2)]
    assert results[0].dtype == bool and results[0].shape == (6,)
    np.testing.assert_array_equal(results[0], results[1])
    with pytest.raises(ValueError, match="first_phase"):
        floe_white.play_with_search(_IllegalPolicy(), GoWithTheFloeBatch(1), np.random.default_rng(0), 1, "greedy")
    with pytest.raises(ValueError, match="illegal actions"):  # the policy's first phase does play the policy
        floe_white.play_with_search(_IllegalPolicy(), GoWithTheFloeBatch(1), np.random.default_rng(0), 1, "policy")
