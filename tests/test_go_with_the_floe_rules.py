"""Go with the Floe rules core: the rulebook's figures as positions, end conditions, isolation,
and random-play invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe.rules import BEAR, BLACK, PASS, SEAL, WHITE


def position(diagram: str, to_move: int = BLACK) -> rules.State:
    """A state from an 8-row diagram (rank 8 first): s seal, b bear, o ring, . ice, X off-board."""
    state = rules.State(to_move=to_move)
    rows = [line.split()[1:] for line in diagram.strip().splitlines()]
    assert len(rows) == 8
    for r, cells in enumerate(rows):
        row = 7 - r
        for col, cell in enumerate(cells):
            sq = 8 * row + col
            assert (cell == "X") == (not rules.ON_BOARD[sq]), f"off-board mismatch at {rules.square_name(sq)}"
            if cell == "s":
                state.board[sq] = SEAL
            elif cell == "b":
                state.board[sq] = BEAR
            elif cell == "o":
                state.rings[sq] = True
    return state


def destinations(state: rules.State, square: str) -> set[str]:
    source = rules.square_from_name(square)
    return {rules.action_to_notation(a, state)[3:] for a in rules.legal_actions(state) if a != PASS and a // 16 == source}


def test_board_geometry_and_start() -> None:
    assert rules.NUM_ON_BOARD == 52
    off = {rules.square_name(sq) for sq in range(64) if not rules.ON_BOARD[sq]}
    assert off == {"A1", "B1", "A2", "G1", "H1", "H2", "A7", "A8", "B8", "H7", "G8", "H8"}
    state = rules.initial_state()
    assert {rules.square_name(s) for s in np.flatnonzero(state.board == SEAL)} == {"B2", "B7"}
    assert {rules.square_name(s) for s in np.flatnonzero(state.board == BEAR)} == {"G2", "G7"}
    assert state.to_move == BLACK and not state.rings.any()


def test_notation_round_trip() -> None:
    assert rules.notation_to_action("B2-C3") == 16 * 9 + 2 * 1
    assert rules.notation_to_action("pass") == PASS
    for action in range(PASS):
        if rules.action_destination(action) >= 0 and rules.ON_BOARD[action // 16]:
            assert rules.notation_to_action(rules.action_to_notation(action)) == action
    for bad in ("B2-B5", "B2-C4", "B2xB4", "Z1-A1", "B2"):
        with pytest.raises(ValueError):
            rules.notation_to_action(bad)


FIGURE_2 = """
8  X X . . . . X X
7  X . . . . . . X
6  . . . . . . . .
5  . . . . . . . .
4  . . . . . . . .
3  . . . . b o . .
2  X . . s . . . X
1  X X . . . . X X
"""


def test_figure_2_bear_moves_capture_and_jump() -> None:
    state = position(FIGURE_2, to_move=WHITE)
    assert destinations(state, "E3") == {
        "E4",
        "E5",
        "F4",
        "G5",  # N, NE steps and slides
        "G3",  # E: the jump over the ring on F3
        "F2",  # SE (G1 is off the board)
        "E2",
        "E1",
        "D3",
        "C3",
        "D4",
        "C5",  # S, W, NW
        "D2",  # SW: the capture of the seal
    }
    assert rules.action_to_notation(rules.notation_to_action("E3-D2"), state) == "E3xD2"


def test_figure_3_seal_cannot_capture_or_jump_the_bear() -> None:
    state = position(FIGURE_2, to_move=BLACK)
    assert destinations(state, "D2") == {"D3", "D4", "E2", "F2", "E1", "D1", "C1", "C2", "B2", "C3", "B4"}
    with pytest.raises(ValueError, match="occupied"):
        rules.apply(state, rules.notation_to_action("D2-E3"))
    with pytest.raises(ValueError, match="cannot pass over the token on E3"):
        rules.apply(state, rules.notation_to_action("D2-F4"))


def test_slides_blocked_by_token_and_jumps_over_one_ring() -> None:
    state = position(
        """
8  X X . . . . X X
7  X . . . . . . X
6  . . . . . . . .
5  . . . . . . . .
4  . . o o . . . .
3  . s s . . . . .
2  X . . . . . . X
1  X X . . . . X X
""",
        to_move=BLACK,
    )
    # B3 east: C3 holds a seal, so neither step nor slide; north-east: C4 ring, D5 empty -> jump.
    assert "C3" not in destinations(state, "B3") and "D3" not in destinations(state, "B3")
    assert "D5" in destinations(state, "B3") and "C4" not in destinations(state, "B3")
    # C3 north: D... C4 is a ring: no step onto it, jump to C5.  North-east: D4 ring -> E5.
    assert {"C5", "E5"} <= destinations(state, "C3") and "C4" not in destinations(state, "C3")
    # No chain of two rings: C3 cannot go west over B3 (token) nor over C4 D4 in one move.
    jump = rules.apply(state, rules.notation_to_action("B3-D5"))
    assert jump.rings.sum() == 3 and jump.rings[rules.square_from_name("B3")]  # only the start square
    slide = rules.apply(state, rules.notation_to_action("C3-E3"))
    assert slide.rings[rules.square_from_name("D3")] and slide.rings[rules.square_from_name("C3")]
    assert slide.rings.sum() == 4


def test_ring_at_the_destination_blocks() -> None:
    state = position(
        """
8  X X . . . . X X
7  X . . . . . . X
6  . . . . . . . .
5  . . . o . . . .
4  . . . . . . . .
3  . . . s . . . .
2  X . . . . . . X
1  X X . . . . X X
""",
    )
    assert "D4" in destinations(state, "D3") and "D5" not in destinations(state, "D3")


def test_capture_removes_both_tokens_and_leaves_the_square_empty() -> None:
    state = position(FIGURE_2, to_move=WHITE)
    after = rules.apply(state, rules.notation_to_action("E3xD2"))
    d2, e3 = rules.square_from_name("D2"), rules.square_from_name("E3")
    assert after.board[d2] == rules.EMPTY and not after.rings[d2]
    assert after.board[e3] == rules.EMPTY and after.rings[e3]
    assert (after.board != rules.EMPTY).sum() == 0
    assert after.winner == WHITE  # no seals left


def test_white_wins_when_no_seals_are_left_before_isolation_is_checked() -> None:
    state = position(
        """
8  X X . . . . X X
7  X . . . . . . X
6  . . . . . . . .
5  . . . . . . . .
4  . . . . . . . .
3  . . . . b . . .
2  X . . s . b . X
1  X X . . . . X X
""",
        to_move=WHITE,
    )
    after = rules.apply(state, rules.notation_to_action("E3xD2"))
    assert after.winner == WHITE and rules.returns(after).tolist() == [-1.0, 1.0]


TWO_THICK = """
8  X X . o o . X X
7  X s . o o . b X
6  . . . o o . . .
5  . . . o o . . .
4  . . . o o . . .
3  . . . o o . . .
2  X s . o o . b X
1  X X . o o . X X
"""


def test_isolation_two_ring_wall_isolates() -> None:
    state = position(TWO_THICK.replace("7  X s . o o", "7  X s . o ."), to_move=BLACK)
    # One gap (E7) in the double wall: the bears can walk through, nobody is isolated.
    assert not rules.is_isolated(state, rules.square_from_name("B2"))
    walled = position(TWO_THICK)
    for seal in ("B2", "B7"):
        assert rules.is_isolated(walled, rules.square_from_name(seal))
    # A move that keeps the wall makes Black win at once.
    after = rules.apply(position(TWO_THICK, to_move=WHITE), rules.notation_to_action("G2-F2"))
    assert after.winner == BLACK


def test_isolation_one_ring_wall_can_be_jumped() -> None:
    one_thick = position(TWO_THICK.replace(" o o ", " o . "))
    for seal in ("B2", "B7"):
        assert not rules.is_isolated(one_thick, rules.square_from_name(seal))


def test_seal_in_a_ring_cell_is_isolated() -> None:
    state = position(
        """
8  X X . . . . X X
7  X . . . . . b X
6  . . . . . . . .
5  . . o o o . . .
4  . . o s o . . .
3  . . o o o . . .
2  X . . . . . b X
1  X X . . . . X X
""",
    )
    # Every neighbour is a ring; a bear could jump a ring but never land on the seal's square.
    assert rules.is_isolated(state, rules.square_from_name("D4"))


def test_no_bears_left_means_isolated() -> None:
    state = position(
        """
8  X X . . . . X X
7  X . . . . . . X
6  . . . . . . . .
5  . . . . . . . .
4  . . . s . . . .
3  . . . . . . . .
2  X . . . . . . X
1  X X . . . . X X
""",
    )
    assert rules.is_isolated(state, rules.square_from_name("D4"))


STUCK = """
8  X X o o o o X X
7  X o o o o o o X
6  o o o o o o o o
5  o o o o o o o o
4  o b o s s o b o
3  o o o o o o o o
2  X o o o o o o X
1  X X o o o o X X
"""


def test_two_consecutive_passes_black_wins() -> None:
    state = position(STUCK, to_move=BLACK)
    # Each seal is reachable: a bear jumps (in the isolation graph) onto the other seal's square.
    assert not rules.is_isolated(state, rules.square_from_name("D4"))
    assert not rules.is_isolated(state, rules.square_from_name("E4"))
    assert rules.legal_actions(state).tolist() == [PASS]
    after_black = rules.apply(state, PASS)
    assert after_black.winner == -1 and after_black.passes == 1
    assert rules.legal_actions(after_black).tolist() == [PASS]
    after_white = rules.apply(after_black, PASS)
    assert after_white.winner == BLACK and after_white.passes == 2


def test_pass_only_without_a_move() -> None:
    with pytest.raises(ValueError, match="passing is only allowed without one"):
        rules.apply(rules.initial_state(), PASS)


def test_bad_moves_explained() -> None:
    state = rules.initial_state()
    with pytest.raises(ValueError, match="holds no seal"):
        rules.apply(state, rules.notation_to_action("G2-F2"))
    with pytest.raises(ValueError, match="leaves the board"):
        rules.apply(state, rules.encode_action(rules.square_from_name("B2"), 4, 1))  # B2 south -> B1


def test_empty_squares_score() -> None:
    state = rules.initial_state()
    assert rules.empty_squares(state) == 48
    assert rules.empty_squares(rules.apply(state, rules.notation_to_action("B2-D4"))) == 46


def test_random_playouts_invariants() -> None:
    rng = np.random.default_rng(99)
    winners = [0, 0]
    for game in range(300):
        state = rules.initial_state()
        while not state.is_terminal:
            mask = rules.legal_action_mask(state)
            assert mask.any()
            rings_before = state.rings.copy()
            action = int(rng.choice(np.flatnonzero(mask)))
            if game % 10 == 0:
                snapshot = state.copy()
                state_after = rules.apply(state, action)
                assert state == snapshot
                state = state_after
            else:
                rules.apply_inplace(state, action)
            assert (state.rings >= rings_before).all()  # rings only grow
            added = int(state.rings.sum() - rings_before.sum())
            assert added == (0 if action == PASS else added) and added <= 2
            assert state.rings.sum() <= rules.RING_SUPPLY
            tokens = state.board != rules.EMPTY
            assert not (tokens & state.rings).any() and not (tokens & ~rules.ON_BOARD).any()
            assert not (state.rings & ~rules.ON_BOARD).any()
            assert state.plies <= 2 * rules.RING_SUPPLY + 2
        winners[state.winner] += 1
        assert rules.legal_action_mask(state).sum() == 0
    assert winners[BLACK] > 0 and winners[WHITE] > 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=80))
def test_move_count_matches_rings(choices: list[int]) -> None:
    state = rules.initial_state()
    moves = slides = 0
    for choice in choices:
        if state.is_terminal:
            break
        legal = rules.legal_actions(state)
        action = int(legal[choice % len(legal)])
        if action != PASS:
            from_sq, direction, distance = rules.decode_action(action)
            near = rules.TARGET[from_sq, direction, 0]
            moves += 1
            slides += distance == 2 and not state.rings[near]
        state = rules.apply(state, action)
    assert state.rings.sum() == moves + slides


def test_every_action_id_has_a_notation_and_an_off_board_move_is_a_value_error() -> None:
    """Moves off the top edge (e.g. 882, 896, ..., 1022) once raised IndexError in the notation."""
    from polarzoo.envs import go_with_the_floe_v0

    env = go_with_the_floe_v0.raw_env()
    env.reset(seed=0)
    for action in range(rules.NUM_ACTIONS):
        assert isinstance(rules.action_to_notation(action, env.state), str)
    for action in (882, 896, 1022):
        assert "??" in rules.action_to_notation(action, env.state)
        with pytest.raises(ValueError, match=f"illegal action {action}"):
            env.step(action)


def test_winners_after_matches_apply_for_every_legal_action() -> None:
    """The Floe has no ``winners_after`` of its own: the shared one plays each move on a copy."""
    from polarzoo.envs.utils import winners_after

    assert not hasattr(rules, "winners_after")
    rng = np.random.default_rng(0)
    seen: set[int] = set()
    for _ in range(10):
        state = rules.initial_state()
        while not state.is_terminal:
            legal = rules.legal_actions(state)
            expected = [rules.apply(state, int(action)).winner for action in legal]
            assert winners_after(rules, state, legal).tolist() == expected
            seen.update(expected)
            state = rules.apply(state, int(rng.choice(legal)))
    assert seen == {-1, BLACK, WHITE}
