"""Fire & Ice for B games at once (standard game, no handicap)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.batch.core import BatchCore
from polarzoo.envs.fire_and_ice import rules
from polarzoo.envs.fire_and_ice.env import NUM_CHANNELS

#: GEOMETRIC[from, to]: 1 where the movement rule connects the two holes.
_GEOMETRIC = rules.IS_GEOMETRIC_MOVE[: rules.NUM_MOVE_ACTIONS].reshape(rules.NUM_HOLES, rules.NUM_HOLES).astype(np.int8)
_GEOMETRIC_FLOAT = _GEOMETRIC.astype(np.float32)


class FireAndIceBatch(BatchCore):
    """State: ``board`` int8 (B, 49), ``to_move`` / ``winner`` int8 (B,), ``supply`` int8 (B, 2),
    ``moves`` int8 (B,): 54 bytes per game."""

    num_actions = rules.NUM_ACTIONS
    observation_shape = (rules.NUM_ISLANDS, rules.NUM_POSITIONS, NUM_CHANNELS)
    state_arrays = ("board", "to_move", "supply", "moves", "winner")

    def _reset_rows(self, rows: NDArray[np.intp]) -> None:
        if not hasattr(self, "board"):
            b = self.batch_size
            self.board = np.zeros((b, rules.NUM_HOLES), dtype=np.int8)
            self.to_move = np.zeros(b, dtype=np.int8)
            self.supply = np.zeros((b, 2), dtype=np.int8)
            self.moves = np.zeros(b, dtype=np.int8)
            self.winner = np.full(b, -1, dtype=np.int8)
            self._control = np.full((b, rules.NUM_ISLANDS), -1, dtype=np.int8)
        self.board[rows] = 0
        self.board[rows, rules.CENTRE_HOLE] = rules.FIRE + 1
        self.to_move[rows] = rules.FIRE
        self.supply[rows] = (rules.PEGS_PER_PLAYER - 1, rules.PEGS_PER_PLAYER)
        self.moves[rows] = 0
        self.winner[rows] = -1
        self._control[rows] = -1

    def legal_action_mask(self) -> NDArray[np.int8]:
        board = self.board
        b = self.batch_size
        own = (board == (self.to_move + 1)[:, None]).view(np.int8)
        empty = (board == rules.EMPTY).view(np.int8)
        mask = np.empty((b, rules.NUM_ACTIONS), dtype=np.int8)
        # The 2401 move entries of each row, seen as a (49 from, 49 to) block: a dense outer
        # product (no scatter), masked by the movement geometry.
        moves = np.lib.stride_tricks.as_strided(mask, shape=(b, rules.NUM_HOLES, rules.NUM_HOLES), strides=(rules.NUM_ACTIONS, rules.NUM_HOLES, 1))
        np.multiply(own[:, :, None], empty[:, None, :], out=moves)
        moves &= _GEOMETRIC
        # A player can move iff some own peg sees an empty hole: (own @ geometry) . empty > 0,
        # a small matrix product instead of a pass over the 2,401 entries of every row.
        reachable = own.astype(np.float32) @ _GEOMETRIC_FLOAT
        mask[:, rules.PASS] = np.einsum("ij,ij->i", reachable, empty.astype(np.float32)) == 0
        mask[self.winner >= 0] = 0
        return mask

    def _apply(self, rows: NDArray[np.intp], actions: NDArray[np.int64]) -> None:
        moving = actions != rules.PASS
        move_rows = rows[moving]
        source, destination = np.divmod(actions[moving], rules.NUM_HOLES)
        mover = self.to_move[move_rows]
        opponent = 1 - mover
        has_supply = self.supply[move_rows, opponent] > 0
        self.board[move_rows, destination] = mover + 1
        self.board[move_rows, source] = np.where(has_supply, opponent + 1, rules.EMPTY)
        self.supply[move_rows, opponent] -= has_supply
        self.moves[move_rows] += 1
        control = rules.LINE_OWNER[self.board[move_rows].reshape(-1, rules.NUM_ISLANDS, rules.NUM_POSITIONS) @ rules._POWERS_OF_THREE]
        self._control[move_rows] = control
        self.winner[move_rows] = rules.LINE_OWNER[(control + 1) @ rules._POWERS_OF_THREE]
        self.to_move[rows] = 1 - self.to_move[rows]

    def observe(self, colours: NDArray[np.int8] | None = None) -> NDArray[np.int8]:
        """(B, 7, 7, 9) observations seen by ``colours`` (default: the player to move)."""
        colours = self.to_move if colours is None else np.where(colours >= 0, colours, self.to_move).astype(np.int8)
        b = self.batch_size
        own = (colours + 1)[:, None]
        opponent = (2 - colours)[:, None]
        board = self.board
        obs = np.empty((b, rules.NUM_HOLES, NUM_CHANNELS), dtype=np.int8)
        obs[:, :, 0] = board == own
        obs[:, :, 1] = board == opponent
        obs[:, :, 2] = board == rules.EMPTY
        control = np.repeat(self._control, rules.NUM_POSITIONS, axis=1)
        obs[:, :, 3] = control == colours[:, None]
        obs[:, :, 4] = control == (1 - colours)[:, None]
        obs[:, :, 5] = ((self.to_move == colours) & (self.winner < 0))[:, None]
        obs[:, :, 6] = (colours == rules.FIRE)[:, None]
        obs[:, :, 7] = np.take_along_axis(self.supply, colours[:, None].astype(np.intp), axis=1)
        obs[:, :, 8] = np.take_along_axis(self.supply, (1 - colours)[:, None].astype(np.intp), axis=1)
        return obs.reshape(b, *self.observation_shape)

    def potential(self, colours: NDArray[np.int8]) -> NDArray[np.float32]:
        """(islands held by ``colours`` - islands held by the opponent) / 7."""
        mine = (self._control == colours[:, None]).sum(axis=1)
        theirs = (self._control == (1 - colours)[:, None]).sum(axis=1)
        return ((mine - theirs) / rules.NUM_ISLANDS).astype(np.float32)
