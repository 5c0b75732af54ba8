"""Go with the Floe symmetry: the row mirror commutes with the rules and the encodings."""

from __future__ import annotations

import numpy as np
import pytest

from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe import symmetry as sym
from polarzoo.envs.go_with_the_floe.encoding import observation_tensor


def test_mirror_by_name() -> None:
    mirror = sym.square_map(1)
    for a, b in (("B2", "B7"), ("G2", "G7"), ("A4", "A5"), ("D1", "D8")):
        assert mirror[rules.square_from_name(a)] == rules.square_from_name(b)
    assert sym.transform_action(rules.notation_to_action("B2-C3"), 1) == rules.notation_to_action("B7-C6")
    assert sym.transform_action(rules.PASS, 1) == rules.PASS
    assert sym.transform_state(rules.initial_state(), 1) == rules.initial_state()
    assert (sym.action_map(1)[sym.action_map(1)] == np.arange(rules.NUM_ACTIONS)).all()
    with pytest.raises(ValueError, match="out of range"):
        sym.action_map(2)


def test_rules_commute_with_the_mirror_over_random_games() -> None:
    rng = np.random.default_rng(2)
    for _game in range(60):
        state = rules.initial_state()
        while state.winner < 0:
            mapped = sym.transform_state(state, 1)
            mask = rules.legal_action_mask(state)
            assert (sym.transform_mask(mask, 1) == rules.legal_action_mask(mapped)).all()
            for colour in (rules.BLACK, rules.WHITE):
                assert (
                    sym.transform_observation(observation_tensor(state, colour), 1) == observation_tensor(mapped, colour)
                ).all()
            action = int(rng.choice(np.flatnonzero(mask)))
            after = rules.apply(state, action)
            assert sym.transform_state(after, 1) == rules.apply(mapped, sym.transform_action(action, 1))
            state = after
