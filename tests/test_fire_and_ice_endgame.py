"""The Fire & Ice endgame search against a plain minimax over the readable rules."""

from __future__ import annotations

import numpy as np

from polarzoo.envs.fire_and_ice import rules
from polarzoo.envs.fire_and_ice.endgame import LOSS, UNKNOWN, WIN, EndgameSolver, empty_holes
from tests.helpers import minimax


def position_with(empty: int, rng: np.random.Generator, handicap: int = 0) -> rules.State:
    while True:
        state = rules.initial_state(handicap, rng=rng)
        while state.winner < 0 and empty_holes(state) > empty:
            rules.apply_inplace(state, int(rng.choice(rules.legal_actions(state))))
        if state.winner < 0:
            return state


def test_proofs_agree_with_minimax_on_random_endgames() -> None:
    rng = np.random.default_rng(3)
    solver = EndgameSolver(table_bits=16)
    values = []
    for empty in (1, 2, 3, 4):
        for handicap in (0, 2):
            for _ in range(4):
                state = position_with(empty, rng, handicap)
                proof = solver.solve_within(state)
                assert proof.value == minimax(rules, state, 12)
                # df-pn, on a table of its own, agrees
                assert EndgameSolver(table_bits=12).solve_by_proof_numbers(state).value == proof.value
                values.append(proof.value)
                if proof.value == WIN:  # the move it names keeps the win
                    child = rules.apply(state, proof.move)
                    assert child.winner == state.to_move or minimax(rules, child, 12) == LOSS
    assert WIN in values and LOSS in values


def test_a_full_board_is_always_decided() -> None:
    # two lines of a Fano plane always meet: the last hole filled decides the game
    rng = np.random.default_rng(5)
    solver = EndgameSolver(table_bits=12)
    for _ in range(5):
        state = position_with(1, rng)
        assert solver.solve(state).value in (WIN, LOSS)


def test_the_table_answers_a_solved_position() -> None:
    rng = np.random.default_rng(11)
    solver = EndgameSolver(table_bits=14)
    state = position_with(6, rng)
    proof = solver.solve(state)
    assert proof.value != UNKNOWN
    assert solver.lookup(state) == (proof.value, proof.move)


def test_df_pn_and_the_deepening_agree_on_fuller_boards() -> None:
    rng = np.random.default_rng(17)
    agreed = 0
    for empty in (8, 10, 12):
        for _ in range(3):
            state = position_with(empty, rng)
            deepening = EndgameSolver(table_bits=16).solve_within(state, node_limit=200_000)
            proof_numbers = EndgameSolver(table_bits=16).solve_by_proof_numbers(state, node_limit=200_000)
            if UNKNOWN not in (deepening.value, proof_numbers.value):
                assert deepening.value == proof_numbers.value
                agreed += 1
    assert agreed >= 5
