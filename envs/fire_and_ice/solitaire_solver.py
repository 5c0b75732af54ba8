"""Exact solver for Fire & Ice Solitaire.

A position is two 49-bit boards (pegs of the colour to move, pegs of the other colour).  The
search is a depth-first search over captures with:

* **Symmetry-reduced transposition table.**  The movement rule only asks "same island?" and
  "same position?", so permuting islands, or permuting positions, maps positions to equivalent
  ones.  The table key sorts the islands (rows) and then the positions (columns) of the 7x7
  board; the result is a position equivalent to the original, so sharing results is sound.
* **Connectivity pruning.**  Holes never refill and a peg only moves onto an occupied hole in its
  island or position, so pegs never leave their connected component of the occupied holes
  (edges: same island or same position).  A component can never be emptied (its last capture
  leaves the capturer), so a disconnected board cannot come down to one peg.
* **Move ordering.**  Captures *from* the peg with the fewest occupied holes in sight go first
  (moving a poorly connected peg keeps the rest connected), then captures *onto* the best
  connected hole.

Measured by ``python -m polarzoo.baselines.solitaire_solver --deals 1000`` (see README).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from polarzoo.envs.fire_and_ice.rules import MOVE_DESTINATIONS, NUM_HOLES
from polarzoo.envs.fire_and_ice.solitaire_rules import SolitaireState

_DEST_BITS = [sum(1 << int(t) for t in MOVE_DESTINATIONS[h]) for h in range(NUM_HOLES)]
_LOW_BITS = sum(1 << (7 * i) for i in range(7))  # bit 0 of every island
_ROW_SHIFTS = (0, 7, 14, 21, 28, 35, 42)
_SPREAD = [sum(((v >> c) & 1) << (7 * c) for c in range(7)) for v in range(128)]  # row bits -> column


def board_bits(state: SolitaireState) -> tuple[int, int]:
    """(pegs of the colour to move, pegs of the other colour) as 49-bit integers."""
    own = np.flatnonzero(state.board == state.to_move + 1)
    other = np.flatnonzero(state.board == (1 - state.to_move) + 1)
    return sum(1 << int(h) for h in own), sum(1 << int(h) for h in other)


def _connected(occupied: int) -> bool:
    reach = occupied & -occupied
    while True:
        islands = reach & _LOW_BITS
        for k in range(1, 7):
            islands |= (reach >> k) & _LOW_BITS
        positions = 0
        for shift in _ROW_SHIFTS:
            positions |= (reach >> shift) & 0x7F
        grown = occupied & ((islands * 0x7F) | (positions * _LOW_BITS))
        if grown == reach:
            return grown == occupied
        reach = grown


def _canonical_key(own: int, other: int) -> tuple[int, ...]:
    rows = sorted(((own >> s) & 0x7F) | (((other >> s) & 0x7F) << 7) for s in _ROW_SHIFTS)
    columns_own = columns_other = 0
    for r, value in enumerate(rows):
        columns_own |= _SPREAD[value & 0x7F] << r
        columns_other |= _SPREAD[value >> 7] << r
    return tuple(sorted(((columns_own >> s) & 0x7F) | (((columns_other >> s) & 0x7F) << 7) for s in _ROW_SHIFTS))


def _ordered_captures(own: int, other: int) -> list[tuple[int, int, int, int]]:
    occupied = own | other
    captures = []
    bits = own
    while bits:
        source = bits & -bits
        bits ^= source
        hole = source.bit_length() - 1
        targets = _DEST_BITS[hole] & other
        if targets:
            source_degree = (_DEST_BITS[hole] & occupied).bit_count()
            while targets:
                target = targets & -targets
                targets ^= target
                target_degree = (_DEST_BITS[target.bit_length() - 1] & occupied).bit_count()
                captures.append((source_degree, -target_degree, source, target))
    captures.sort()
    return captures


@dataclass
class SolveResult:
    solvable: bool
    solution: list[int] | None  # actions (49 * from + to) from the given position, or None
    nodes: int  # positions expanded


class Solver:
    """Decides solitaire positions; keeps its transposition table across calls of one deal."""

    def __init__(self) -> None:
        self.table: dict[tuple[int, ...], bool] = {}
        self.nodes = 0

    def solvable(self, own: int, other: int) -> bool:
        """Whether the side to move (``own``) can bring the board down to one peg."""
        if (own | other).bit_count() == 1:
            return True
        key = _canonical_key(own, other)
        known = self.table.get(key)
        if known is not None:
            return known
        self.nodes += 1
        result = False
        if _connected(own | other):
            for _, _, source, target in _ordered_captures(own, other):
                if self.solvable(other ^ target, own ^ source ^ target):
                    result = True
                    break
        self.table[key] = result
        return result

    def solution(self, own: int, other: int) -> list[int] | None:
        """A winning capture sequence as actions, or ``None`` when there is none."""
        if not self.solvable(own, other):
            return None
        actions = []
        while (own | other).bit_count() > 1:
            for _, _, source, target in _ordered_captures(own, other):
                if self.solvable(other ^ target, own ^ source ^ target):
                    actions.append(NUM_HOLES * (source.bit_length() - 1) + target.bit_length() - 1)
                    own, other = other ^ target, own ^ source ^ target
                    break
        return actions


def solve(state: SolitaireState) -> SolveResult:
    """Decide ``state`` exactly; return a winning sequence if there is one."""
    if sys.getrecursionlimit() < 1000:  # depth is at most 27; keep a margin for callers' frames
        sys.setrecursionlimit(1000)
    solver = Solver()
    own, other = board_bits(state)
    solution = solver.solution(own, other)
    return SolveResult(solution is not None, solution, solver.nodes)


def is_solvable(state: SolitaireState) -> bool:
    return solve(state).solvable
