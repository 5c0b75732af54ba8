"""What the games' exact searches share: the tables of proofs (compiled with numba) and the Python
face (:class:`ExactSearch`: ``solve``, ``solve_within``, ``solve_by_proof_numbers``, ``lookup``).

A game's search module (:mod:`polarzoo.envs.go_with_the_floe.solver`,
:mod:`polarzoo.envs.fire_and_ice.endgame`) writes its own move generator and its two recursive
searches - a depth-limited negamax over win / loss / unknown, and a depth-first proof-number search
(df-pn; Nagai 2002) - because they call its rules; everything else is here.

A position's key is three 64-bit words that are never all zero (a zero key marks a free slot).
Two tables, open addressing on the full key, so a hit is never a hash collision:

* the deepening's: a value (WIN / LOSS for the side to move, or UNKNOWN), the depth it was
  searched to, a move; a proof is never overwritten by an unknown;
* df-pn's: the proof and disproof numbers (phi, delta) and a move; when a run of slots is full,
  the least-searched undecided entry makes room.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

WIN, LOSS, UNKNOWN = 1, -1, 0
#: df-pn's "infinite" proof or disproof number (a proven position's other number).
INFINITE = 1 << 30
_ZERO = np.uint64(0)
_U = np.uint64
_RUN = 16  # slots searched from a key's home slot


@njit(cache=True, nogil=True)
def slot(k0, k1, k2, mask):
    """The home slot of a key (a multiply-xorshift mix of its three words)."""
    h = k0 * _U(0x9E3779B97F4A7C15) ^ k1 * _U(0xC2B2AE3D27D4EB4F) ^ k2 * _U(0x165667B19E3779F9)
    h ^= h >> _U(29)
    h *= _U(0xBF58476D1CE4E5B9)
    h ^= h >> _U(32)
    return np.int64(h & mask)


@njit(cache=True, nogil=True)
def probe(keys, mask, k0, k1, k2):
    """The slot holding the key, or -(1 + a free slot), or -(1 + len) when its run is full."""
    i = slot(k0, k1, k2, mask)
    for _ in range(_RUN):
        if keys[i, 0] == k0 and keys[i, 1] == k1 and keys[i, 2] == k2:
            return i
        if keys[i, 0] == _ZERO and keys[i, 1] == _ZERO and keys[i, 2] == _ZERO:
            return -(i + 1)
        i = (i + 1) & mask
    return -(keys.shape[0] + 1)


@njit(cache=True, nogil=True)
def claim(keys, i, victim, k0, k1, k2, stats):
    """The slot a new key takes: ``i``, the free slot :func:`probe` found, or when its run was
    full (``i == len``) ``victim`` (-1: none, the entry is lost: ``stats[2]``); -1 or the slot,
    whose key is written (``stats[1]``: entries in use)."""
    if i == keys.shape[0]:
        if victim < 0:
            stats[2] += 1
            return -1
        i = victim
    else:
        stats[1] += 1
    keys[i, 0], keys[i, 1], keys[i, 2] = k0, k1, k2
    return i


@njit(cache=True, nogil=True)
def _shallowest_unknown(values, depths, j, mask):
    """In the full run from slot ``j``: the unknown searched least deep, or -1."""
    best, best_depth = -1, 1 << 30
    for _ in range(_RUN):
        if values[j] == UNKNOWN and depths[j] < best_depth:
            best, best_depth = j, depths[j]
        j = (j + 1) & mask
    return best


@njit(cache=True, nogil=True)
def _least_searched(phi, delta, j, mask):
    """In the full run from slot ``j``: the undecided entry with the smallest phi + delta, or -1."""
    best, smallest = -1, INFINITE * 2
    for _ in range(_RUN):
        if phi[j] != 0 and delta[j] != 0 and phi[j] + delta[j] < smallest:
            best, smallest = j, phi[j] + delta[j]
        j = (j + 1) & mask
    return best


@njit(cache=True, nogil=True)
def store(table, k0, k1, k2, value, depth, move, stats):
    """The deepening's table, ``(keys, values, depths, moves, mask)``: ``value`` searched to
    ``depth`` (``stats[1]``: entries in use, ``stats[2]``: proofs lost to a full run)."""
    keys, values, depths, moves, mask = table
    i = probe(keys, mask, k0, k1, k2)
    if i < 0:
        i = -i - 1
        full = i == keys.shape[0]
        if full and value == UNKNOWN:
            return
        # a full run: the shallowest unknown makes room
        victim = _shallowest_unknown(values, depths, slot(k0, k1, k2, mask), mask) if full else -1
        i = claim(keys, i, victim, k0, k1, k2, stats)
        if i < 0:
            return
    elif values[i] != UNKNOWN and value == UNKNOWN:
        return
    values[i] = value
    depths[i] = depth
    moves[i] = move


@njit(cache=True, nogil=True)
def pn_get(table, k0, k1, k2):
    """df-pn's (phi, delta) of a position in its table, ``(keys, phi, delta, moves, mask)``;
    (1, 1) for one never searched."""
    keys, phi, delta, _, mask = table
    i = probe(keys, mask, k0, k1, k2)
    if i >= 0:
        return phi[i], delta[i]
    return 1, 1


@njit(cache=True, nogil=True)
def pn_put(table, k0, k1, k2, p, d, move, stats):
    """df-pn's table, ``(keys, phi, delta, moves, mask)``: (phi, delta) and the most-proving move
    of a position."""
    keys, phi, delta, moves, mask = table
    i = probe(keys, mask, k0, k1, k2)
    if i < 0:
        i = -i - 1
        # a full run: the least-searched undecided entry makes room
        victim = _least_searched(phi, delta, slot(k0, k1, k2, mask), mask) if i == keys.shape[0] else -1
        i = claim(keys, i, victim, k0, k1, k2, stats)
        if i < 0:
            return
    phi[i], delta[i], moves[i] = p, d, move


@dataclass
class Proof:
    """What a search found: ``value`` WIN / LOSS for the side to move, or UNKNOWN; ``winner`` the
    colour that wins with perfect play (-1 if unknown); ``move`` a move that keeps the value (a
    winning move, or the table's choice); ``depth`` the deepening's last depth (its proofs are the
    shortest wins)."""

    value: int
    winner: int
    move: int
    depth: int
    nodes: int
    seconds: float


class ExactSearch:
    """The tables and the Python face of a game's exact search.  A game's subclass gives
    :meth:`key` and :meth:`position` of a rules state and runs its compiled searches in
    :meth:`_deepen` and :meth:`_prove`."""

    def __init__(self, table_bits: int, stack: tuple[np.ndarray, ...]) -> None:
        if not isinstance(table_bits, int) or not 10 <= table_bits <= 30:
            raise ValueError(f"table_bits must be in 10..30, got {table_bits!r}")
        size = 1 << table_bits
        self.mask = _U(size - 1)
        self.tt_keys = np.zeros((size, 3), dtype=np.uint64)
        self.tt_value = np.zeros(size, dtype=np.int8)
        self.tt_depth = np.zeros(size, dtype=np.int16)
        self.tt_move = np.full(size, -1, dtype=np.int16)
        self.stats = np.zeros(3, dtype=np.int64)  # nodes, entries in use, proofs lost to a full table
        self.pn_keys = np.zeros((size, 3), dtype=np.uint64)
        self.pn_phi = np.zeros(size, dtype=np.int32)
        self.pn_delta = np.zeros(size, dtype=np.int32)
        self.pn_move = np.full(size, -1, dtype=np.int16)
        self.pn_stats = np.zeros(3, dtype=np.int64)
        self.stack = stack
        # the two tables as the compiled searches take them
        self.tt = (self.tt_keys, self.tt_value, self.tt_depth, self.tt_move, self.mask)
        self.pn = (self.pn_keys, self.pn_phi, self.pn_delta, self.pn_move, self.mask)

    # ---- what a game gives -------------------------------------------------------------------
    def key(self, state: Any) -> tuple[np.uint64, np.uint64, np.uint64]:
        raise NotImplementedError

    def position(self, state: Any) -> tuple:
        """The compiled searches' arguments for a position (before the depth / thresholds)."""
        raise NotImplementedError

    def _deepen(self, position: tuple, depth: int, limit: int) -> int:
        raise NotImplementedError

    def _prove(self, position: tuple, limit: int) -> None:
        raise NotImplementedError

    # ---- shared ------------------------------------------------------------------------------
    @property
    def entries(self) -> int:
        """Positions held by the tables."""
        return int(self.stats[1] + self.pn_stats[1])

    def lookup(self, state: Any) -> tuple[int, int]:
        """(value for the side to move, stored move) of a position either table has proven, else
        (UNKNOWN, the stored move or -1)."""
        k0, k1, k2 = self.key(state)
        found = probe(self.pn_keys, self.mask, k0, k1, k2)
        if found >= 0 and (self.pn_phi[found] == 0 or self.pn_delta[found] == 0):
            return (WIN if self.pn_phi[found] == 0 else LOSS), int(self.pn_move[found])
        found = probe(self.tt_keys, self.mask, k0, k1, k2)
        if found < 0:
            return UNKNOWN, -1
        return int(self.tt_value[found]), int(self.tt_move[found])

    @staticmethod
    def _decided(state: Any) -> Proof | None:
        if state.winner >= 0:
            return Proof(WIN if state.winner == state.to_move else LOSS, state.winner, -1, 0, 0, 0.0)
        return None

    def _proof(self, state: Any, value: int, depth: int, nodes: int, seconds: float) -> Proof:
        _, move = self.lookup(state)
        winner = -1 if value == UNKNOWN else (state.to_move if value == WIN else 1 - state.to_move)
        return Proof(value, winner, move, depth, nodes, seconds)

    def solve(self, state: Any, node_limit: int = 10**12) -> Proof:
        """Whether the side to move wins, within ``node_limit`` nodes: a tenth of them on the
        deepening (the short wins), the rest on df-pn (no depth bound)."""
        quick = self.solve_within(state, node_limit=max(node_limit // 10, 1))
        if quick.value != UNKNOWN:
            return quick
        proof = self.solve_by_proof_numbers(state, node_limit - quick.nodes)
        return Proof(proof.value, proof.winner, proof.move, quick.depth, quick.nodes + proof.nodes, quick.seconds + proof.seconds)

    def solve_within(
        self, state: Any, max_depth: int = 60, node_limit: int = 10**12, time_limit: float | None = None, log: Any = None
    ) -> Proof:
        """Deepen from 1 to ``max_depth`` plies until the position is proven (or ``node_limit``
        nodes, or ``time_limit`` seconds after the start of an iteration, are spent): a proof here
        is the shortest win (``depth``: its plies).  ``log(depth, value, nodes, entries, seconds)``
        after each iteration."""
        decided = self._decided(state)
        if decided is not None:
            return decided
        position = self.position(state)
        start = time.perf_counter()
        before = int(self.stats[0])
        value, depth = UNKNOWN, 0
        for depth in range(1, max_depth + 1):
            value = self._deepen(position, depth, before + node_limit)
            elapsed = time.perf_counter() - start
            if log is not None:
                log(depth, value, int(self.stats[0]) - before, self.entries, elapsed)
            if value != UNKNOWN or int(self.stats[0]) - before >= node_limit:
                break
            if time_limit is not None and elapsed >= time_limit:
                break
        return self._proof(state, value, depth, int(self.stats[0]) - before, time.perf_counter() - start)

    def solve_by_proof_numbers(self, state: Any, node_limit: int = 10**12) -> Proof:
        """df-pn alone, within ``node_limit`` nodes (``depth`` 0: no depth bound)."""
        decided = self._decided(state)
        if decided is not None:
            return decided
        start = time.perf_counter()
        before = int(self.pn_stats[0])
        self._prove(self.position(state), before + max(node_limit, 1))
        value, _ = self.lookup(state)
        return self._proof(state, value, 0, int(self.pn_stats[0]) - before, time.perf_counter() - start)
