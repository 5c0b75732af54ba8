"""Test helper for Thin Ice physics scenarios.

``Pile`` wraps one :class:`~polarzoo.envs.thin_ice.physics.PilePhysics` scene with readable verbs:

    pile = Pile()
    pile.place("L", x_mm=0, y_mm=0, orientation="upright")   # lowered to first contact, no tremor
    pile.release(("M", (0, 0, 100), "upright"), ...)          # exact poses in mm, released at once
    pile.pick_up("L", 0)                                      # first L placed
    pile.on_table("L", 0), pile.rule(), pile.last.eliminated

Placements are exact (no hand tremor) so the scenarios are deterministic.
"""

from __future__ import annotations

import numpy as np

from polarzoo.envs.thin_ice.physics import ORIENTATIONS, Outcome, PilePhysics, orientation_matrix

SIZES = {"S": 0, "M": 1, "L": 2}


class Pile:
    def __init__(self) -> None:
        self.physics = PilePhysics()
        self.placed: dict[str, list[int]] = {"S": [], "M": [], "L": []}
        self.last = Outcome()

    def place(self, size: str, x_mm: float = 0.0, y_mm: float = 0.0, orientation: str = "upright") -> Outcome:
        piece = self.physics.free_piece(SIZES[size])
        self.placed[size].append(piece)
        self.last = self.physics.place(
            SIZES[size], (x_mm / 1000, y_mm / 1000), ORIENTATIONS.index(orientation), None, piece=piece
        )
        return self.last

    def release(self, *pieces: tuple[str, tuple[float, float, float], str]) -> Outcome:
        poses = []
        for size, position_mm, orientation in pieces:
            piece = self.physics.free_piece(SIZES[size])
            self.placed[size].append(piece)
            rotation = orientation_matrix(SIZES[size], ORIENTATIONS.index(orientation))
            poses.append((piece, np.array(position_mm) / 1000, rotation))
        self.last = self.physics.release(poses)
        return self.last

    def pick_up(self, size: str, index: int) -> Outcome:
        self.last = self.physics.pick_up(self.placed[size][index])
        return self.last

    def piece(self, size: str, index: int) -> int:
        return self.placed[size][index]

    def on_table(self, size: str, index: int) -> bool:
        return bool(self.physics.contacts().on_table[self.piece(size, index)])

    def touching_piece(self, size: str, index: int) -> bool:
        return bool(self.physics.contacts().touching_piece[self.piece(size, index)])

    def height_mm(self, size: str, index: int) -> float:
        return float(self.physics.positions()[self.piece(size, index)][2] * 1000)

    def rule(self) -> str | None:
        return self.physics.rule_violated()
