"""Fire & Ice rules core: hand-built positions from the rule text, and random-play invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polarzoo.envs.fire_and_ice import rules
from polarzoo.envs.fire_and_ice.rules import FIRE, ICE, PASS


def position(fire: str = "", ice: str = "", to_move: int = FIRE) -> rules.State:
    """A state with Fire pegs and Ice pegs on the named holes (space-separated, e.g. 'A1 D4')."""
    state = rules.State()
    for colour, holes in ((FIRE, fire), (ICE, ice)):
        for name in holes.split():
            state.board[rules.hole_from_name(name)] = colour + 1
            state.supply[colour] -= 1
    state.to_move = to_move
    return state


def moves_from(state: rules.State, hole: str) -> set[str]:
    source = rules.hole_from_name(hole)
    return {
        rules.action_to_notation(a).split("-")[1]
        for a in rules.legal_actions(state)
        if a != PASS and a // rules.NUM_HOLES == source
    }


# ---------------------------------------------------------------------------- geometry
def test_fano_geometry() -> None:
    # Every pair of positions lies on exactly one line; any two lines share exactly one point.
    for p in range(7):
        for q in range(p + 1, 7):
            assert sum(p in line and q in line for line in rules.LINES.tolist()) == 1
    for i in range(7):
        for j in range(i + 1, 7):
            assert len(set(rules.LINES[i]) & set(rules.LINES[j])) == 1


def test_notation_round_trip() -> None:
    assert rules.hole_from_name("A1") == 0 and rules.hole_from_name("D4") == 24
    assert rules.hole_from_name("g7") == 48
    assert rules.notation_to_action("D4-A4") == 24 * 49 + 3
    assert rules.notation_to_action("pass") == PASS
    for action in range(rules.NUM_ACTIONS):
        assert rules.notation_to_action(rules.action_to_notation(action)) == action
    for bad in ("H1", "A8", "D4A4", "D4-", ""):
        with pytest.raises(ValueError):
            rules.notation_to_action(bad)


# ---------------------------------------------------------------------------- movement
def test_setup() -> None:
    state = rules.initial_state()
    assert state.board[24] == FIRE + 1 and np.count_nonzero(state.board) == 1
    assert state.supply.tolist() == [24, 25] and state.to_move == FIRE


def test_movement_same_island_any_hole_or_same_position_other_island() -> None:
    #  Fire peg on A1, Ice pegs on A3 and C1 block two destinations.
    state = position(fire="A1", ice="A3 C1")
    assert moves_from(state, "A1") == {"A2", "A4", "A5", "A6", "A7", "B1", "D1", "E1", "F1", "G1"}
    # Opening move: D4 goes anywhere on D or to position 4 of any other island.
    opening = rules.initial_state()
    assert moves_from(opening, "D4") == {"D1", "D2", "D3", "D5", "D6", "D7", "A4", "B4", "C4", "E4", "F4", "G4"}


def test_move_places_opponent_peg_in_vacated_hole() -> None:
    state = rules.apply(rules.initial_state(), rules.notation_to_action("D4-A4"))
    assert state.board[rules.hole_from_name("A4")] == FIRE + 1
    assert state.board[rules.hole_from_name("D4")] == ICE + 1
    assert state.supply.tolist() == [24, 24]
    assert state.to_move == ICE and state.moves_made == 1


def test_cannot_move_opponent_peg_or_to_occupied_or_off_pattern() -> None:
    state = position(fire="A1", ice="A3 B2", to_move=FIRE)
    for text, reason in (
        ("B2-B3", "does not hold a fire peg"),
        ("A1-A3", "not empty"),
        ("A1-B2", "neither"),
        ("A1-A1", "must move to another hole"),
    ):
        with pytest.raises(ValueError, match=reason):
            rules.apply(state, rules.notation_to_action(text))


# ---------------------------------------------------------------------------- control
@pytest.mark.parametrize("line", range(7))
def test_control_through_each_line(line: int) -> None:
    holes = " ".join(f"B{p + 1}" for p in rules.LINES[line])
    control = rules.island_control(position(fire=holes).board)
    assert control.tolist() == [-1, FIRE, -1, -1, -1, -1, -1]
    two = " ".join(f"B{p + 1}" for p in rules.LINES[line][:2])
    assert (rules.island_control(position(ice=two).board) == -1).all()


def test_control_is_lost_when_a_peg_moves_away() -> None:
    # Fire holds B1 B2 B5 (a side).  Moving B5 to E5 breaks the line; Ice's peg fills B5.
    state = position(fire="B1 B2 B5", ice="A1")
    assert rules.island_control(state.board)[1] == FIRE
    after = rules.apply(state, rules.notation_to_action("B5-E5"))
    assert rules.island_control(after.board)[1] == -1


def island_holes(island: str, colour_line: int = 0) -> str:
    return " ".join(f"{island}{p + 1}" for p in rules.LINES[colour_line])


@pytest.mark.parametrize("island_line", range(7))
def test_island_level_win_on_each_island_line(island_line: int) -> None:
    islands = [rules.ISLAND_LETTERS[i] for i in rules.LINES[island_line]]
    board = position(ice=" ".join(island_holes(i) for i in islands)).board
    assert rules.winner_of(board) == ICE
    board_two = position(ice=" ".join(island_holes(i) for i in islands[:2])).board
    assert rules.winner_of(board_two) == -1


def test_placed_peg_hands_the_win_to_the_opponent() -> None:
    #  Fire controls A and B; on E Fire holds E1 E2 and Ice holds E5 (line {1,2,5} of E).
    #  Ice moves E5-E3: the Fire peg placed on E5 completes E, and A-B-E is an island-line.
    state = position(fire=f"{island_holes('A')} {island_holes('B')} E1 E2", ice="E5 G3 G5", to_move=ICE)
    assert rules.winner_of(state.board) == -1
    after = rules.apply(state, rules.notation_to_action("E5-E3"))
    assert after.winner == FIRE
    assert rules.returns(after).tolist() == [1.0, -1.0]
    assert rules.legal_action_mask(after).sum() == 0


def test_forced_pass() -> None:
    #  Fire's only peg A1; every hole it could reach (A2..A7, B1..G1) holds Ice.
    state = position(fire="A1", ice="A2 A3 A4 A5 A6 A7 B1 C1 D1 E1 F1 G1", to_move=FIRE)
    assert rules.legal_actions(state).tolist() == [PASS]
    after = rules.apply(state, PASS)
    assert np.array_equal(after.board, state.board)
    assert after.to_move == ICE and after.moves_made == 0 and after.plies == 1 and after.winner == -1
    # Ice is not stuck, and may not pass while it has a move.
    assert PASS not in rules.legal_actions(after).tolist()
    with pytest.raises(ValueError, match="passing is not allowed"):
        rules.apply(after, PASS)


def test_empty_supply_leaves_the_vacated_hole_empty() -> None:
    state = position(fire="A1", ice="B2")
    state.supply[ICE] = 0
    after = rules.apply(state, rules.notation_to_action("A1-A2"))
    assert after.board[0] == rules.EMPTY and after.supply[ICE] == 0


# ---------------------------------------------------------------------------- handicap
@pytest.mark.parametrize("handicap", range(7))
def test_handicap_at_most_one_per_island_never_on_d4(handicap: int) -> None:
    for seed in range(50):
        state = rules.initial_state(handicap, ICE, rng=np.random.default_rng(seed))
        ice_holes = np.flatnonzero(state.board == ICE + 1)
        assert len(ice_holes) == handicap
        assert len(set(ice_holes // 7)) == handicap
        assert rules.CENTRE_HOLE not in ice_holes and state.board[24] == FIRE + 1
        assert state.supply[ICE] == 25 - handicap and state.winner == -1


def test_handicap_for_fire_and_explicit_holes() -> None:
    holes = [rules.hole_from_name(h) for h in ("A1", "C7", "G2")]
    state = rules.initial_state(3, FIRE, handicap_holes=holes)
    assert np.count_nonzero(state.board == FIRE + 1) == 4 and state.supply[FIRE] == 21
    for bad_holes, match in (([0, 1, 2], "distinct islands"), ([24, 0, 8], "D4"), ([0, 8], "lists 2")):
        with pytest.raises(ValueError, match=match):
            rules.initial_state(3, FIRE, handicap_holes=bad_holes)
    with pytest.raises(ValueError, match="0..6"):
        rules.initial_state(9, ICE, rng=np.random.default_rng(0))


# ---------------------------------------------------------------------------- random play
def _independent_controllers(board: np.ndarray) -> list[int]:
    """Number of colours holding a line on each island, computed without rules.island_control."""
    counts = []
    for island in range(7):
        holders = 0
        for colour in (FIRE, ICE):
            if any(all(board[7 * island + p] == colour + 1 for p in line) for line in rules.LINES.tolist()):
                holders += 1
        counts.append(holders)
    return counts


def test_random_playouts_invariants() -> None:
    rng = np.random.default_rng(2024)
    winners = [0, 0]
    for game in range(2000):
        state = rules.initial_state()
        while not state.is_terminal:
            mask = rules.legal_action_mask(state)
            assert mask.any() and mask.dtype == np.int8
            if mask[PASS]:
                assert mask.sum() == 1
            action = int(rng.choice(np.flatnonzero(mask)))
            if game % 10 == 0:  # the pure apply must not touch its input
                before = state.copy()
                state = rules.apply(state, action)
                assert before == rules.State(**before.__dict__) and not np.shares_memory(before.board, state.board)
            else:
                state = rules.apply_inplace(state, action)
            pegs = np.count_nonzero(state.board)
            assert pegs == 1 + state.moves_made
            assert state.moves_made <= 48
            if game % 20 == 0:
                assert max(_independent_controllers(state.board)) <= 1
        assert rules.legal_action_mask(state).sum() == 0
        winners[state.winner] += 1
        # A full board always has a winner, so the game ends by 48 moves.
        assert state.moves_made <= 48
    assert winners[0] > 0 and winners[1] > 0


def test_full_board_has_exactly_one_winner() -> None:
    rng = np.random.default_rng(7)
    for _ in range(500):
        board = rng.integers(1, 3, size=49).astype(np.int8)
        fire_wins = (rules.island_control(board)[rules.LINES] == FIRE).all(axis=1).any()
        ice_wins = (rules.island_control(board)[rules.LINES] == ICE).all(axis=1).any()
        assert fire_wins != ice_wins


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=60))
def test_apply_is_pure_over_arbitrary_legal_sequences(choices: list[int]) -> None:
    state = rules.initial_state()
    for choice in choices:
        if state.is_terminal:
            break
        legal = rules.legal_actions(state)
        snapshot = state.copy()
        new_state = rules.apply(state, int(legal[choice % len(legal)]))
        assert state == snapshot
        assert np.count_nonzero(new_state.board) == 1 + new_state.moves_made
        state = new_state


def test_winners_after_matches_apply_for_every_legal_action() -> None:
    """A search's look at all its children (``winners_after``, one stack of boards) gives the
    winner ``apply`` leaves, through whole random games (the supplies running out, either colour
    winning, a move that hands the opponent the win), and the shared ``winners_after`` asks it."""
    from polarzoo.envs.utils import winners_after

    rng = np.random.default_rng(0)
    seen: set[int] = set()
    for game in range(20):
        state = rules.initial_state()
        if game % 2:
            state.supply[:] = 15  # random games end before 25 pegs a side run out
        while not state.is_terminal and state.plies < 100:  # pegs without a supply only move
            legal = rules.legal_actions(state)
            expected = [rules.apply(state, int(action)).winner for action in legal]
            assert rules.winners_after(state, legal).tolist() == expected == winners_after(rules, state, legal).tolist()
            seen.update(expected)
            state = rules.apply(state, int(rng.choice(legal)))
    assert seen == {-1, FIRE, ICE}
