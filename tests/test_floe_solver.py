"""The Go with the Floe solver against a plain minimax over the readable rules."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe.solver import LOSS, UNKNOWN, WIN, FloeSolver, count_paths, estimate_tree_size
from tests.helpers import minimax


def random_position(rng: np.random.Generator, plies: int) -> rules.State:
    while True:
        state = rules.initial_state()
        for _ in range(plies):
            if state.winner >= 0:
                break
            rules.apply_inplace(state, int(rng.choice(rules.legal_actions(state))))
        if state.winner < 0:
            return state


@pytest.fixture(scope="module")
def solver() -> FloeSolver:
    return FloeSolver(table_bits=16)


def test_the_start_is_a_win_for_black_in_five_plies(solver: FloeSolver) -> None:
    proof = solver.solve_within(rules.initial_state())
    assert (proof.value, proof.winner, proof.depth) == (WIN, rules.BLACK, 5)
    # the move it names wins: after it, White loses within four plies by the readable rules
    assert minimax(rules, rules.apply(rules.initial_state(), proof.move), 4) == LOSS
    # and nothing shorter wins: within three plies the start is undecided
    assert minimax(rules, rules.initial_state(), 3) == UNKNOWN


def test_proofs_agree_with_minimax_on_random_positions(solver: FloeSolver) -> None:
    rng = np.random.default_rng(7)
    decided = 0
    for _ in range(15):
        state = random_position(rng, int(rng.integers(4, 30)))
        proof = solver.solve_within(state, max_depth=4)
        expected = minimax(rules, state, 4)
        assert proof.value == expected
        # df-pn (no depth bound, its own table) agrees wherever the minimax decides
        by_proof_numbers = FloeSolver(table_bits=14)
        unbounded = by_proof_numbers.solve_by_proof_numbers(state, node_limit=100_000)
        assert expected == UNKNOWN or unbounded.value == expected
        decided += proof.value != UNKNOWN
        if proof.value == WIN:  # the stored move keeps the win
            assert (
                rules.apply(state, proof.move).winner == state.to_move
                or minimax(rules, rules.apply(state, proof.move), 3) == LOSS
            )
    assert decided >= 6


def test_df_pn_proves_the_start_and_names_a_winning_move() -> None:
    solver = FloeSolver(table_bits=18)
    start = rules.initial_state()
    proof = solver.solve_by_proof_numbers(start, node_limit=200_000)
    assert (proof.value, proof.winner) == (WIN, rules.BLACK)
    after = rules.apply(start, proof.move)
    assert after.winner == rules.BLACK or solver.solve(after, node_limit=200_000).value == LOSS


def test_the_size_counts_match_the_readable_rules() -> None:
    paths, ended = count_paths(rules.initial_state(), 3)
    assert paths[:2] == [1, len(rules.legal_actions(rules.initial_state()))]
    level = [rules.initial_state()]
    for plies in range(1, 4):
        level = [rules.apply(s, int(a)) for s in level if s.winner < 0 for a in rules.legal_actions(s)]
        assert paths[plies] == len(level)
    estimate = estimate_tree_size(rules.initial_state(), games=200, seed=1)
    assert estimate["leaves"] > 0 and 5 < estimate["mean_length"] < 53


def score_minimax(state: rules.State, depth: int) -> int | None:
    """The match score for Black under perfect play by the readable rules (a Black win: the empty
    squares left; a White win: minus them), or ``None`` when some line is longer than ``depth``."""
    if state.winner >= 0:
        empty = rules.empty_squares(state)
        return empty if state.winner == rules.BLACK else -empty
    if depth == 0:
        return None
    values = [score_minimax(rules.apply(state, int(action)), depth - 1) for action in rules.legal_actions(state)]
    if any(value is None for value in values):
        return None
    return max(values) if state.to_move == rules.BLACK else min(values)  # type: ignore[type-var]


def test_the_match_score_agrees_with_minimax_over_the_readable_rules() -> None:
    from polarzoo.envs.go_with_the_floe.solver import match_value

    rng = np.random.default_rng(11)
    checked = 0
    while checked < 8:
        state = random_position(rng, int(rng.integers(30, 44)))
        expected = score_minimax(state, 6)
        if expected is None:
            continue
        value = match_value(state, max_depth=8)
        assert value.exact and value.score == expected
        after = rules.apply(state, value.move)  # the move it names keeps the score
        assert score_minimax(after, 5) == expected
        checked += 1


def test_the_match_score_of_the_start_is_forty_empty_squares_for_black() -> None:
    """Black's best forced win leaves 40 empty squares against White's best defence; B2-B4 (or its
    mirror image B7-B5) is a move that keeps it."""
    from polarzoo.envs.go_with_the_floe.solver import match_value

    start = rules.initial_state()
    value = match_value(start)
    assert (value.score, value.depth) == (40, 7)
    assert rules.action_to_notation(value.move, start) in ("B2-B4", "B7-B5")
    assert match_value(rules.apply(start, value.move)).score == 40
