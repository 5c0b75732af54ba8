"""Thin Ice game layer (rules.py) with stub physics: calls, turn order, masks, points, the end."""

from __future__ import annotations

import pytest

from polarzoo.envs.thin_ice import rules


# ---------------------------------------------------------------------------- game layer (stub physics)
class ScriptedPhysics:
    """Reports the scripted rule for (player, n-th physical action of that player)."""

    def __init__(self, script: dict[tuple[int, int], str] | None = None) -> None:
        self.script = script or {}
        self.count: dict[int, int] = {}

    def _next(self, player: int) -> str | None:
        self.count[player] = self.count.get(player, 0) + 1
        return self.script.get((player, self.count[player]))

    def place(self, player, size, target, piece_slot, rng):  # noqa: ANN001, ANN201
        return self._next(player)

    def pick_up(self, player, piece_slot):  # noqa: ANN001, ANN201
        return self._next(player)


def _play_round(game: rules.ThinIceGame, call: int) -> None:
    """The caller calls; every adder places its pending pieces at target 0 and says DONE."""
    game.apply(call, None)
    while game.state.phase == rules.ADD:
        s = game.state
        if s.pending:
            game.apply(game.place_base + s.pending[0] * game.num_targets, None)
        else:
            game.apply(game.done_action, None)


def test_calling_turn_tie_break_and_points_for_three_players() -> None:
    # Round 1: player_0 calls S, nobody falls.  Round 2: player_1 calls S; player_1 and player_2
    # both crash.  player_1 called more recently, so it scores lower.
    game = rules.ThinIceGame(3, ScriptedPhysics({(1, 2): "T", (2, 2): "N"}), num_targets=6)
    _play_round(game, 0)
    assert game.state.caller == 1 and game.state.phase == rules.CALL
    _play_round(game, 0)
    s = game.state
    assert s.phase == rules.OVER and s.out_rule == ["", "T", "N"]
    assert s.points == [3.0, 1.0, 2.0]
    assert game.rewards().tolist() == [1.0, -1.0, 0.0]


def test_points_ties_and_survivors_share() -> None:
    assert rules.final_points([-1, -1, -1], [-1, -1, -1]) == [2.0, 2.0, 2.0]
    assert rules.final_points([0, -1, -1, 0], [0, -1, -1, -1]) == [1.0, 3.5, 3.5, 2.0]


def test_supply_running_out_ends_the_game() -> None:
    game = rules.ThinIceGame(2, ScriptedPhysics(), num_targets=6)
    for call in ("LL", "LL", "L", "MM", "MM", "M", "SS", "SS"):
        assert game.state.phase == rules.CALL
        _play_round(game, rules.CALLS.index(call))
    assert game.state.legal_calls() == [0]  # one S left
    _play_round(game, 0)
    assert game.state.phase == rules.OVER and game.state.supply.tolist() == [0, 0, 0]
    assert game.state.points == [1.5, 1.5] and game.rewards().tolist() == [0.0, 0.0]


def test_masks_by_phase_and_rearrangement_rules() -> None:
    game = rules.ThinIceGame(2, ScriptedPhysics(), num_targets=6, max_rearrangements=1)
    mask = game.legal_action_mask()
    assert mask[:9].all() and not mask[9:].any()
    game.apply(rules.CALLS.index("SM"), None)
    mask = game.legal_action_mask()
    places = mask[game.place_base : game.pick_base].reshape(3, 6)
    assert places[0].all() and places[1].all() and not places[2].any() and not mask[game.done_action]
    game.apply(game.place_base, None)  # S
    game.apply(game.place_base + 6, None)  # M
    mask = game.legal_action_mask()
    assert mask[game.done_action] and mask[game.pick_base] and mask[game.pick_base + 1] and not mask[game.pick_base + 2]
    game.apply(game.pick_base + 1, None)  # pick the M up: it must be placed before anything else
    mask = game.legal_action_mask()
    assert mask[game.place_base + 6 : game.place_base + 12].all() and mask.sum() == 6
    assert "must be placed first" in game.explain_illegal(game.done_action)
    game.apply(game.place_base + 6, None)
    assert not game.legal_action_mask()[game.pick_base]  # max_rearrangements=1 used up
    assert "no rearrangements left" in game.explain_illegal(game.pick_base)


def test_notation_both_ways_for_every_action() -> None:
    for grid in (1, 3, 7):
        layout = rules.ActionLayout(grid)
        for action in range(layout.num_actions):
            text = rules.action_to_notation(action, layout)
            assert rules.notation_to_action(text, layout) == action
            assert rules.notation_to_action(f"  {text.upper()} ", layout) == action
    layout = rules.ActionLayout(3)
    assert rules.action_to_notation(rules.CALLS.index("SM"), layout) == "call SM"
    assert rules.notation_to_action("place M c2 upright", layout) == layout.place_base + layout.num_targets + (3 + 2) * 6
    # the message names the word that is wrong and what is allowed there
    for bad, match in (
        ("place M d1 upright", r"'d1' is not a cell of the 3x3 lattice: a1..c3"),
        ("place X a1 upright", r"'X' is not a size: S, M or L"),
        ("place S a1 sideways", r"'sideways' is not an orientation: upright, inverted, lying\+x"),
        ("pickup 15", r"'15' is not a slot of your pile: pickup takes a slot number 0..14"),
        ("call SSS", r"'SSS' is not a call: the calls are S, M, L, SS, MM, LL, SM, SL, ML"),
        ("call XX", r"'XX' is not a call"),
        ("jump", "is not a Thin Ice move: expected 'call SM'"),
    ):
        with pytest.raises(ValueError, match=match):
            rules.notation_to_action(bad, layout)


def test_rules_functions_on_the_state() -> None:
    """The state + functions shape: mask, apply, explain and returns work on a plain state."""
    state = rules.initial_state(2)
    layout = rules.ActionLayout(3)
    mask = rules.legal_action_mask(state, layout)
    assert mask[: rules.NUM_CALLS].all() and not mask[rules.NUM_CALLS :].any()
    assert "calling phase" in rules.explain_illegal(state, layout.done_action, layout)
    rules.apply_inplace(state, rules.CALLS.index("L"), layout, ScriptedPhysics(), None)
    assert state.phase == rules.ADD and state.pending == [2] and state.supply.tolist() == [5, 5, 4]
    place_large = layout.place_base + 2 * layout.num_targets
    assert rules.legal_action_mask(state, layout)[place_large] and not rules.legal_action_mask(state, layout)[layout.done_action]
    rules.apply_inplace(state, place_large, layout, ScriptedPhysics(), None)
    assert state.pending == [] and state.slot_in_pile[0] == [True]
    assert rules.legal_action_mask(state, layout)[layout.done_action]


def test_game_rejects_a_target_count_that_is_no_grid() -> None:
    with pytest.raises(ValueError, match="num_targets must be grid \\* grid \\* 6; got 7"):
        rules.ThinIceGame(2, ScriptedPhysics(), num_targets=7)


def test_state_copy_is_a_deep_copy() -> None:
    import copy

    import numpy as np

    from polarzoo.envs import thin_ice_v0

    env = thin_ice_v0.raw_env(num_players=3, grid=5)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(12):
        env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
    state = env.game.state
    copied, before = state.copy(), repr(state)
    assert repr(copied) == repr(copy.deepcopy(state)) == before
    copied.slot_sizes[0].append(2)
    copied.slot_in_pile[1].append(True)
    copied.pending.append(1)
    copied.supply[0] -= 1
    copied.points.append(1.0)
    assert repr(copied) != before and repr(state) == before


# ---------------------------------------------------------------------------- padded observations
def _observation(players: int, seed: int):  # noqa: ANN202
    """A flat observation of ``players`` with random values where the encoding allows any, the
    flags 0 / 1 and whose-turn one-hot, as the env writes them."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = rng.uniform(-1, 1, rules.observation_size(players)).astype(np.float32)
    blocks = out[: players * rules.PLAYER_FEATURES].reshape(players, rules.PLAYER_FEATURES)
    blocks[:, -2:] = rng.integers(0, 2, (players, 2))
    k = players * rules.PLAYER_FEATURES + rules.TURN_OFFSET
    out[k : k + players] = np.eye(players)[rng.integers(players)]
    return out


def test_pad_observation_adds_absent_seats_that_unpad_removes() -> None:
    import numpy as np

    for players in (2, 3, 5):
        observation = _observation(players, players)
        for to in range(players, 7):
            padded = rules.pad_observation(observation, to)
            assert padded.shape == (rules.observation_size(to),) and rules.players_of_size(len(padded)) == to
            n, k = players * rules.PLAYER_FEATURES, to * rules.PLAYER_FEATURES
            assert np.array_equal(padded[:n], observation[:n])  # the players' blocks where they were
            absent = padded[n:k].reshape(to - players, rules.PLAYER_FEATURES)
            assert not absent[:, :-2].any() and (absent[:, -2:] == rules.ABSENT_FLAGS).all()
            turn = padded[k + rules.TURN_OFFSET : k + rules.TURN_OFFSET + to]
            assert turn.sum() == 1 and not turn[players:].any()  # an absent seat never has the turn
            assert np.array_equal(padded[-4:], observation[-4:])  # phase and rearrangements
            assert rules.present_players(padded)[0] == players
            assert np.array_equal(rules.unpad_observation(padded), observation)
    batch = np.stack([rules.pad_observation(_observation(p, p), 6) for p in (2, 6, 4)])
    assert list(rules.present_players(batch)) == [2, 6, 4]
    with pytest.raises(ValueError, match="cannot pad a 3-player observation to 2"):
        rules.pad_observation(_observation(3, 0), 2)
    with pytest.raises(ValueError, match="not a Thin Ice observation: 100 numbers"):
        rules.pad_observation(np.zeros(100, dtype=np.float32), 4)
