"""The 8 symmetries of the square in Thin Ice (envs/thin_ice/symmetry.py): the maps form the
group, act on cells, orientations, actions and observations consistently, and commute with the
rules and with the physics on scripted piles (no hand tremor: a mapped pile is the mapped pile)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from polarzoo.envs import thin_ice_v0  # noqa: E402
from polarzoo.envs.thin_ice import rules, symmetry  # noqa: E402

K = range(symmetry.NUM_SYMMETRIES)


def test_the_maps_form_the_dihedral_group() -> None:
    assert symmetry.NUM_SYMMETRIES == 8
    for j in K:
        assert symmetry.compose(j, symmetry.inverse(j)) == 0
        for k in K:
            assert 0 <= symmetry.compose(j, k) < 8
    assert len({symmetry.MATRICES[k].tobytes() for k in K}) == 8


@pytest.mark.parametrize("grid", [1, 4, 5, 7])
def test_cell_target_and_action_maps_are_permutations_that_compose(grid: int) -> None:
    layout = rules.ActionLayout(grid)
    for k in K:
        cells = symmetry.cell_map(k, grid)
        assert sorted(cells) == list(range(grid * grid))
        actions = symmetry.action_map(k, grid)
        assert sorted(actions) == list(range(layout.num_actions))
        # calls, pick-ups and DONE stay
        assert (actions[: rules.NUM_CALLS] == np.arange(rules.NUM_CALLS)).all()
        assert (actions[layout.pick_base :] == np.arange(layout.pick_base, layout.num_actions)).all()
        for j in K:
            assert (symmetry.action_map(j, grid)[actions] == symmetry.action_map(symmetry.compose(j, k), grid)).all()


def test_rotation_by_90_degrees_turns_cells_and_lying_pieces_counter_clockwise() -> None:
    layout = rules.ActionLayout(7)
    # b1 is column 1, row 0: (x, y) = (-2, -3) -> (3, -2) = column 6, row 1 = g2; lying+x -> lying+y
    action = rules.notation_to_action("place M b1 lying+x", layout)
    assert rules.action_to_notation(symmetry.transform_action(action, 1, 7), layout) == "place M g2 lying+y"
    assert rules.action_to_notation(symmetry.transform_action(action, 4, 7), layout) == "place M f1 lying-x"
    assert symmetry.orientation_map(2) == (0, 1, 3, 2, 5, 4)
    assert symmetry.transform_point((0.007, 0.0), 1) == pytest.approx((0.0, 0.007))


def test_masks_commute_with_the_maps() -> None:
    env = thin_ice_v0.raw_env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(12):
        if env.terminations[env.agent_selection]:
            break
        mask = env.legal_action_mask()
        for k in K:
            # the legal set of a position is the legal set of its image
            assert (symmetry.transform_mask(mask, k, env.grid) == mask).all()
        env.step(int(rng.choice(np.flatnonzero(mask))))


def test_observation_map_is_a_signed_permutation_of_the_piece_coordinates() -> None:
    observation = np.arange(rules.observation_size(3), dtype=np.float32)
    for k in K:
        image = symmetry.transform_observation(observation, k, 3)
        assert sorted(np.abs(image)) == sorted(observation)
        back = symmetry.transform_observation(image, symmetry.inverse(k), 3)
        assert (back == observation).all()
    # only x, y and axis_x, axis_y of the slots move
    moved = symmetry.transform_observation(observation, 1, 3) != observation
    assert (np.flatnonzero(moved) < 3 * rules.PLAYER_FEATURES).all()
    within_block = np.flatnonzero(moved) % rules.PLAYER_FEATURES
    assert (within_block < rules.MAX_SLOTS * rules.SLOT_FEATURES).all()
    assert set(within_block % rules.SLOT_FEATURES) == {5, 6, 8, 9}


SCRIPT = [
    "call LL",
    "place L d4 lying+x",
    "place L c4 lying+y",
    "done",
    "place L d4 lying+x",
    "place L d4 lying+y",
    "done",
    "call M",
    "place M d4 lying-x",
    "done",
    "place M e3 upright",
    "done",
]


def _play(script: list[str], k: int) -> tuple[list[np.ndarray], dict]:
    env = thin_ice_v0.raw_env(tremor_mm=0.0, tremor_degrees=0.0)
    env.reset(seed=0)
    observations = []
    for text in script:
        action = symmetry.transform_action(env.notation_to_action(text), k, env.grid)
        env.step(action)
        observations.append(env.observe("player_0")["observation"].copy())
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
    return observations, env.result()


@pytest.mark.parametrize("k", [1, 2, 4, 6])
def test_mapped_placements_build_the_mapped_pile(k: int) -> None:
    """Without tremor, the piles built by mapped placements are the mapped piles (piece positions
    within a millimetre, the same axes, the same pieces on the table) with the same outcome."""
    reference, result = _play(SCRIPT, 0)
    mapped, mapped_result = _play(SCRIPT, k)
    assert mapped_result == result
    assert len(mapped) == len(reference)
    for expected, got in zip(reference, mapped):
        # positions are in units of 0.25 m: 1 mm = 0.004
        assert np.allclose(symmetry.transform_observation(expected, k, 2), got, atol=0.004)


@pytest.mark.parametrize("k", [-1, 8, 1.5, True])
def test_a_bad_symmetry_index_is_a_value_error(k: object) -> None:
    with pytest.raises(ValueError, match="symmetry index must be in 0..7"):
        symmetry.action_map(k, 7)  # type: ignore[arg-type]
