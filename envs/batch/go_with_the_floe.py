"""Go with the Floe for B games at once (single games, no match play).

Moves are generated with precomputed neighbour tables padded with an always-blocked square
(index 64); isolation is a flood fill on uint64 bitboards, all games and both seals at once.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from polarzoo.envs.batch.core import BatchCore
from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe.env import NUM_CHANNELS

_ON_BOARD_GRID = rules.ON_BOARD.reshape(rules.SIZE, rules.SIZE)

_PAD = rules.NUM_SQUARES  # index of a virtual square that is off the board
_NEAR = np.where(rules.TARGET[:, :, 0] >= 0, rules.TARGET[:, :, 0], _PAD).astype(np.intp)  # (64, 8)
_FAR = np.where(rules.TARGET[:, :, 1] >= 0, rules.TARGET[:, :, 1], _PAD).astype(np.intp)
_ON_BOARD_PAD = np.append(rules.ON_BOARD, False)
_U = np.uint64
_FULL = _U(0xFFFFFFFFFFFFFFFF)
_NOT_A = _U(rules.NOT_FILE_A_BITS)
_NOT_H = _U(rules.NOT_FILE_H_BITS)
_ON_BOARD_BITS = _U(rules.ON_BOARD_BITS)
_SHIFTS = [  # (left shift, right shift, mask) per direction N, NE, E, SE, S, SW, W, NW
    (8, 0, _FULL), (9, 0, _NOT_A), (1, 0, _NOT_A), (0, 7, _NOT_A), (0, 8, _FULL), (0, 9, _NOT_H), (0, 1, _NOT_H), (7, 0, _NOT_H),
]


def _shift(bits: NDArray[np.uint64], direction: int) -> NDArray[np.uint64]:
    left, right, mask = _SHIFTS[direction]
    return ((bits << _U(left)) if left else (bits >> _U(right))) & mask


def _king_spread(bits: NDArray[np.uint64]) -> NDArray[np.uint64]:
    horizontal = bits | ((bits << _U(1)) & _NOT_A) | ((bits >> _U(1)) & _NOT_H)
    return horizontal | (horizontal << _U(8)) | (horizontal >> _U(8))


def _bits(flags: NDArray[np.bool_]) -> NDArray[np.uint64]:
    return np.packbits(flags, axis=1, bitorder="little").view("<u8")[:, 0].astype(np.uint64)


class GoWithTheFloeBatch(BatchCore):
    """State: ``board`` int8 (B, 64), ``rings`` bool (B, 64), ``to_move`` / ``passes`` /
    ``winner`` int8 (B,): 131 bytes per game."""

    num_actions = rules.NUM_ACTIONS
    observation_shape = (rules.SIZE, rules.SIZE, NUM_CHANNELS)
    state_arrays = ("board", "rings", "to_move", "passes", "winner")

    def _reset_rows(self, rows: NDArray[np.intp]) -> None:
        if not hasattr(self, "board"):
            b = self.batch_size
            self.board = np.zeros((b, rules.NUM_SQUARES), dtype=np.int8)
            self.rings = np.zeros((b, rules.NUM_SQUARES), dtype=bool)
            self.to_move = np.zeros(b, dtype=np.int8)
            self.passes = np.zeros(b, dtype=np.int8)
            self.winner = np.full(b, -1, dtype=np.int8)
        start = rules.initial_state()
        self.board[rows] = start.board
        self.rings[rows] = False
        self.to_move[rows] = rules.BLACK
        self.passes[rows] = 0
        self.winner[rows] = -1

    def legal_action_mask(self) -> NDArray[np.int8]:
        b = self.batch_size
        board = np.concatenate([self.board, np.full((b, 1), rules.BEAR, dtype=np.int8)], axis=1)  # pad square blocks
        rings = np.concatenate([self.rings, np.zeros((b, 1), dtype=bool)], axis=1)
        mine = self.board == np.where(self.to_move == rules.BLACK, rules.SEAL, rules.BEAR)[:, None]
        near_token = board[:, _NEAR]  # (B, 64, 8)
        near_ring = rings[:, _NEAR]
        near_free = (near_token == rules.EMPTY) & ~near_ring & _ON_BOARD_PAD[_NEAR]
        capture = (self.to_move == rules.WHITE)[:, None, None] & (near_token == rules.SEAL)
        far_free = (board[:, _FAR] == rules.EMPTY) & ~rings[:, _FAR] & _ON_BOARD_PAD[_FAR]
        step = mine[:, :, None] & (near_free | capture)
        far = mine[:, :, None] & far_free & (near_token == rules.EMPTY) & _ON_BOARD_PAD[_NEAR]
        mask = np.zeros((b, rules.NUM_ACTIONS), dtype=np.int8)
        mask[:, : rules.PASS] = np.stack([step, far], axis=3).reshape(b, rules.PASS)
        mask[:, rules.PASS] = ~mask[:, : rules.PASS].any(axis=1)
        mask[self.winner >= 0] = 0
        return mask

    def _apply(self, rows: NDArray[np.intp], actions: NDArray[np.int64]) -> None:
        passing = actions == rules.PASS
        self.passes[rows[passing]] += 1
        move_rows = rows[~passing]
        moves = actions[~passing]
        self.passes[move_rows] = 0
        source, rest = np.divmod(moves, rules.ACTIONS_PER_SQUARE)
        direction, distance_index = np.divmod(rest, 2)
        near = _NEAR[source, direction]
        far = _FAR[source, direction]
        token = self.board[move_rows, source]
        self.board[move_rows, source] = rules.EMPTY
        self.rings[move_rows, source] = True
        one = distance_index == 0
        capture = one & (token == rules.BEAR) & (self.board[move_rows, near] == rules.SEAL)
        self.board[move_rows[one], near[one]] = np.where(capture[one], rules.EMPTY, token[one])
        two = ~one
        self.rings[move_rows[two], near[two]] = True
        self.board[move_rows[two], far[two]] = token[two]
        self.to_move[rows] = 1 - self.to_move[rows]
        self._decide(rows)

    def _decide(self, rows: NDArray[np.intp]) -> None:
        board = self.board[rows]
        seals = _bits(board == rules.SEAL)
        bears = _bits(board == rules.BEAR)
        rings = _bits(self.rings[rows])
        first = seals & (~seals + _U(1))
        second = seals ^ first
        isolated = np.zeros(len(rows), dtype=bool)
        for seal in (first, second):
            present = seal != 0
            nodes = _ON_BOARD_BITS & ~rings & ~seal
            target = _king_spread(seal) & ~seal
            reach = bears & nodes
            for _ in range(64):
                grown = reach | (_king_spread(reach) & nodes)
                for d in range(rules.NUM_DIRECTIONS):
                    grown |= _shift(_shift(reach, d) & rings, d) & nodes
                if np.array_equal(grown, reach):
                    break
                reach = grown
            isolated |= present & ((reach & target) == 0)
        winner = np.full(len(rows), -1, dtype=np.int8)
        winner[self.passes[rows] >= 2] = rules.BLACK
        winner[isolated] = rules.BLACK
        winner[seals == 0] = rules.WHITE
        self.winner[rows] = winner

    def observe(self, colours: NDArray[np.int8] | None = None) -> NDArray[np.int8]:
        """(B, 8, 8, 11) observations seen by ``colours`` (default: the player to move)."""
        colours = self.to_move if colours is None else np.where(colours >= 0, colours, self.to_move).astype(np.int8)
        b = self.batch_size
        own_token = np.where(colours == rules.BLACK, rules.SEAL, rules.BEAR)[:, None]
        other_token = np.where(colours == rules.BLACK, rules.BEAR, rules.SEAL)[:, None]
        obs = np.zeros((b, rules.NUM_SQUARES, NUM_CHANNELS), dtype=np.int8)
        obs[:, :, 0] = self.board == own_token
        obs[:, :, 1] = self.board == other_token
        obs[:, :, 2] = self.rings
        obs[:, :, 3] = rules.ON_BOARD
        obs[:, :, 4] = (colours == rules.WHITE)[:, None]
        obs[:, :, 5] = ((self.to_move == colours) & (self.winner < 0))[:, None]
        obs[:, :, 6] = rules.ON_BOARD & ~self.rings & (self.board == rules.EMPTY)
        obs[:, :, 7] = (self.passes > 0)[:, None]
        return obs.reshape(b, *self.observation_shape)
