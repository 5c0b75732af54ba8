"""Go with the Floe for B games at once (single games, no match play), on the compiled kernels
of :mod:`polarzoo.envs.go_with_the_floe.kernels` (isolation: the rules' bitboard flood fill)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.batch.core import BatchCore
from polarzoo.envs.go_with_the_floe import kernels, rules
from polarzoo.envs.go_with_the_floe.encoding import NUM_CHANNELS


class GoWithTheFloeBatch(BatchCore):
    """State: ``board`` int8 (B, 64), ``rings`` uint8 (B, 64), ``to_move`` / ``passes`` /
    ``winner`` int8 (B,): 131 bytes per game."""

    num_actions = rules.NUM_ACTIONS
    observation_shape = (rules.SIZE, rules.SIZE, NUM_CHANNELS)
    kernels = kernels
    state_layout = {
        "board": ((rules.NUM_SQUARES,), np.int8),
        "rings": ((rules.NUM_SQUARES,), np.uint8),
        "to_move": ((), np.int8),
        "passes": ((), np.int8),
        "winner": ((), np.int8),
    }

    def _mask_state(self) -> tuple[NDArray, ...]:
        return self.board, self.rings, self.to_move, self.winner

    def _observe_state(self) -> tuple[NDArray, ...]:
        return self.board, self.rings, self.to_move, self.passes, self.winner

    def potential(self, colours: NDArray[np.int8]) -> NDArray[np.float32]:
        """:func:`polarzoo.envs.go_with_the_floe.rules.shaping_potentials` of every game."""
        return rules.shaping_potentials(self.board, colours)
