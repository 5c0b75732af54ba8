"""Thin Ice physics (MuJoCo piles): the elimination rules on hand-built scenarios, stability, snapshots."""

from __future__ import annotations

import numpy as np
import pytest
from polarzoo.envs.thin_ice.physics import PhysicsConfig, PhysicsError, PilePhysics

from tests.thin_ice_helpers import Pile


def test_four_separate_upright_pieces_out_by_T() -> None:
    pile = Pile()
    for i in range(3):
        assert pile.place("S", x_mm=30 * i).eliminated is None
    assert pile.place("S", x_mm=90).eliminated == "T"


def test_medium_dropped_upright_on_a_medium_out_by_N() -> None:
    pile = Pile()
    assert pile.place("M").eliminated is None
    outcome = pile.place("M")
    assert outcome.eliminated == "N"
    assert pile.physics.contacts().nested_pairs


def test_large_over_small_both_on_table_not_nested() -> None:
    pile = Pile()
    pile.place("S")
    outcome = pile.place("L")
    assert outcome.eliminated is None and outcome.settled
    assert pile.on_table("S", 0) and pile.on_table("L", 0)
    assert not pile.physics.contacts().nested_pairs and pile.rule() is None


def test_lying_piece_resting_across_others_is_stable() -> None:
    pile = Pile()
    pile.place("L", x_mm=-15)
    pile.place("L", x_mm=15)
    outcome = pile.place("L", orientation="lying+y")
    assert outcome.eliminated is None and outcome.settled
    assert not pile.on_table("L", 2) and pile.touching_piece("L", 2)
    assert pile.height_mm("L", 2) > 20


def test_three_pieces_released_in_mid_air_out_by_A() -> None:
    pile = Pile()
    outcome = pile.release(("S", (0, 0, 100), "upright"), ("M", (50, 0, 100), "upright"), ("L", (-50, 0, 100), "upright"))
    assert outcome.eliminated == "A" and outcome.steps == 1
    two = Pile()
    assert two.release(("S", (0, 0, 100), "upright"), ("M", (50, 0, 100), "upright")).eliminated is None


def test_pick_up_makes_pieces_fall() -> None:
    pile = Pile()
    pile.place("L")
    pile.place("M", orientation="inverted")  # balanced on the large's apex, off the table
    assert not pile.on_table("M", 0)
    height = pile.height_mm("M", 0)
    outcome = pile.pick_up("L", 0)
    assert outcome.eliminated is None
    assert pile.on_table("M", 0) and pile.height_mm("M", 0) < height - 10


def test_unstable_simulation_is_reported() -> None:
    physics = PilePhysics()
    physics.place(2, (0.0, 0.0), 0, None)
    physics.data.qvel[physics.dof_adr[10] : physics.dof_adr[10] + 3] = np.nan
    with pytest.raises(PhysicsError, match="unstable"):
        physics.settle()


def test_snapshot_restore_replays_bit_identically() -> None:
    physics = PilePhysics()
    physics.place(2, (0.0, 0.0), 0, None)
    saved = physics.snapshot()
    physics.place(1, (0.004, 0.0), 1, np.random.default_rng(3))
    first = physics.data.qpos.copy()
    physics.restore(saved)
    physics.place(1, (0.004, 0.0), 1, np.random.default_rng(3))
    assert np.array_equal(first, physics.data.qpos)


def test_physics_config_validation() -> None:
    with pytest.raises(ValueError, match="table_friction"):
        PhysicsConfig(table_friction=-1).validate()
