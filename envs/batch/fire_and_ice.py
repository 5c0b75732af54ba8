"""Fire & Ice for B games at once (standard game, no handicap), on the compiled kernels of
:mod:`polarzoo.envs.fire_and_ice.kernels`."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.batch.core import BatchCore
from polarzoo.envs.fire_and_ice import kernels, rules
from polarzoo.envs.fire_and_ice.encoding import NUM_CHANNELS


class FireAndIceBatch(BatchCore):
    """State: ``board`` int8 (B, 49), ``to_move`` / ``moves`` / ``winner`` int8 (B,), ``supply``
    int8 (B, 2), ``control`` int8 (B, 7) (each island's controlling colour, -1 for none):
    61 bytes per game."""

    num_actions = rules.NUM_ACTIONS
    observation_shape = (rules.NUM_ISLANDS, rules.NUM_POSITIONS, NUM_CHANNELS)
    kernels = kernels
    state_layout = {
        "board": ((rules.NUM_HOLES,), np.int8),
        "to_move": ((), np.int8),
        "supply": ((2,), np.int8),
        "moves": ((), np.int8),
        "winner": ((), np.int8),
        "control": ((rules.NUM_ISLANDS,), np.int8),
    }

    def _mask_state(self) -> tuple[NDArray, ...]:
        return self.board, self.to_move, self.winner

    def _observe_state(self) -> tuple[NDArray, ...]:
        return self.board, self.to_move, self.supply, self.winner, self.control

    def sample_actions(self, rng: np.random.Generator) -> NDArray[np.int64]:
        """A uniformly random legal action per game from the bitboards (no pass over the 2,402
        mask entries); the same draw as ``sample_legal_actions(self.mask, rng)``."""
        out = np.empty(self.batch_size, dtype=np.int64)
        kernels.sample_games(self.board, self.to_move, self.winner, rng.random(self.batch_size), out)
        return out

    def potential(self, colours: NDArray[np.int8]) -> NDArray[np.float32]:
        """(islands held by ``colours`` - islands held by the opponent) / 7."""
        colours = np.asarray(colours)
        mine = (self.control == colours[:, None]).sum(axis=1)
        theirs = (self.control == (1 - colours)[:, None]).sum(axis=1)
        return ((mine - theirs) / rules.NUM_ISLANDS).astype(np.float32)
