"""Fire & Ice symmetries: 168 x 168 collineation maps commute with the rules and the encodings."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs.fire_and_ice import rules
from polarzoo.envs.fire_and_ice import symmetry as sym
from polarzoo.envs.fire_and_ice.encoding import observation_tensor


def test_group_sizes() -> None:
    assert sym.NUM_COLLINEATIONS == 168 and sym.NUM_SYMMETRIES == 28_224
    assert len(sym.CENTRE_FIXING) == 24 and len(sym.START_FIXING) == 576
    assert (sym.COLLINEATIONS[0] == np.arange(7)).all()
    lines = {frozenset(line.tolist()) for line in rules.LINES}
    for perm in sym.COLLINEATIONS:
        assert {frozenset(perm[list(line)].tolist()) for line in lines} == lines
    assert len({tuple(p) for p in sym.COLLINEATIONS.tolist()}) == 168


def test_maps_are_permutations_with_inverses() -> None:
    rng = np.random.default_rng(0)
    for k in rng.integers(sym.NUM_SYMMETRIES, size=50):
        holes, actions = sym.hole_map(k), sym.action_map(k)
        assert sorted(holes.tolist()) == list(range(49))
        assert sorted(actions.tolist()) == list(range(rules.NUM_ACTIONS)) and actions[rules.PASS] == rules.PASS
        back = sym.hole_map(sym.inverse(k))
        assert (back[holes] == np.arange(49)).all()
    with pytest.raises(ValueError, match="out of range"):
        sym.hole_map(sym.NUM_SYMMETRIES)


def test_start_fixing_maps_keep_d4() -> None:
    start = rules.initial_state()
    for k in sym.START_FIXING:
        assert sym.transform_state(start, k) == start
    moved = [k for k in range(0, sym.NUM_SYMMETRIES, 97) if sym.hole_map(k)[rules.CENTRE_HOLE] != rules.CENTRE_HOLE]
    assert moved and all(k not in set(sym.START_FIXING.tolist()) for k in moved)


def test_rules_commute_with_every_kind_of_map_over_random_games() -> None:
    rng = np.random.default_rng(1)
    for _game in range(40):
        state = rules.initial_state()
        while state.winner < 0:
            k = int(rng.integers(sym.NUM_SYMMETRIES))
            mapped = sym.transform_state(state, k)
            mask = rules.legal_action_mask(state)
            assert (sym.transform_mask(mask, k) == rules.legal_action_mask(mapped)).all()
            for colour in (rules.FIRE, rules.ICE):
                assert (
                    sym.transform_observation(observation_tensor(state, colour), k) == observation_tensor(mapped, colour)
                ).all()
            assert (
                sym.transform_board(rules.island_control(state.board)[np.arange(49) // 7].astype(np.int8), k)
                == rules.island_control(mapped.board)[np.arange(49) // 7]
            ).all()
            action = int(rng.choice(np.flatnonzero(mask)))
            after = rules.apply(state, action)
            assert sym.transform_state(after, k) == rules.apply(mapped, sym.transform_action(action, k))
            assert rules.winner_of(mapped.board) == rules.winner_of(state.board)
            state = after
