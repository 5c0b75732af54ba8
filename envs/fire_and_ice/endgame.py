"""Exact endgame search for Fire & Ice: who wins a position with few empty holes, with perfect play.

Each move fills one empty hole while the opponent has pegs in supply (the mover's peg lands on an
empty hole and the opponent's fills the hole it left), so a position with ``e`` empty holes ends
within about ``e`` moves: the late game is a short, wide tree.  Two searches, compiled with numba
on two 49-bit boards, with tables (:class:`EndgameSolver`) kept across calls - the endgame table,
filled on demand: a depth-limited negamax over win / loss / unknown deepened one ply at a time
(:meth:`EndgameSolver.solve_within`: the shortest wins), and a depth-first proof-number search
(:meth:`EndgameSolver.solve_by_proof_numbers`); :meth:`EndgameSolver.solve` runs the first on a
tenth of its node budget, then the second:

* **Proofs are exact** (a forced win found within the depth is a forced win; a loss is proven only
  when every move is), so a stored proof is reused at any depth; "unknown" is stored with its
  depth.  The game has no draws (a full board always holds an island line for one colour).
* **Move ordering**: a move that wins at once ends the search; moves that hand the opponent the
  game at once are dropped; then the table's best move, then moves onto holes of islands the
  mover is closest to controlling.

The rules are :mod:`polarzoo.envs.fire_and_ice.rules`; ``tests/test_fire_and_ice_endgame.py``
checks the search against a plain minimax over the readable rules on random endgames.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from polarzoo.envs._common.proof_search import (  # noqa: F401 (Proof, WIN, LOSS, UNKNOWN: public here too)
    INFINITE,
    LOSS,
    UNKNOWN,
    WIN,
    ExactSearch,
    Proof,
    pn_get,
    pn_put,
    probe,
    store,
)
from polarzoo.envs.fire_and_ice import rules

_U = np.uint64
_ONE = _U(1)
_ZERO = _U(0)
_HOLES = rules.NUM_HOLES
_PASS = rules.PASS
_DESTINATIONS = rules.MOVE_DESTINATIONS.astype(np.int64)  # (49, 12)
#: _LINE_BITS[island, line]: the three holes of a position line on an island, as a bitboard.
_LINE_BITS = np.array(
    [[sum(1 << int(h) for h in rules.HOLE_LINES[i, j]) for j in range(rules.NUM_LINES)] for i in range(rules.NUM_ISLANDS)],
    dtype=np.uint64,
)
#: _ISLAND_LINES[j]: the 7-bit set of islands on island line j.
_ISLAND_LINES = np.array([sum(1 << int(p) for p in line) for line in rules.LINES], dtype=np.int64)
_MAX_CHILDREN = 12 * _HOLES
_MAX_PLY = 100
_TO_MOVE_BIT = _U(1) << _U(63)
_SUPPLY_SHIFT = _U(50)


@njit(cache=True, nogil=True)
def _winner(fire, ice):
    """The colour holding three islands on an island line, or -1."""
    fire_islands = 0
    ice_islands = 0
    for island in range(7):
        for line in range(7):
            bits = _LINE_BITS[island, line]
            if (fire & bits) == bits:
                fire_islands |= 1 << island
                break
            if (ice & bits) == bits:
                ice_islands |= 1 << island
                break
    for line in range(7):
        mask = _ISLAND_LINES[line]
        if (fire_islands & mask) == mask:
            return rules.FIRE
        if (ice_islands & mask) == mask:
            return rules.ICE
    return -1


@njit(cache=True, nogil=True)
def _island_score(mine, theirs, island):
    # the most of my pegs on one of the island's lines free of the opponent's (0..3)
    best = 0
    for line in range(7):
        bits = _LINE_BITS[island, line]
        if (theirs & bits) == _ZERO:
            count = 0
            b = mine & bits
            while b != _ZERO:
                b &= b - _ONE
                count += 1
            if count > best:
                best = count
    return best


@njit(cache=True, nogil=True)
def _children(fire, ice, to_move, supply_fire, supply_ice, cf, ci, ca):
    """The moves of the side to move: the child boards in ``cf`` / ``ci`` and the actions in
    ``ca``; returns how many (0: the side must pass)."""
    mine = fire if to_move == rules.FIRE else ice
    empty = ~(fire | ice) & ((_ONE << _U(_HOLES)) - _ONE)
    opponent_supply = supply_ice if to_move == rules.FIRE else supply_fire
    count = 0
    for source in range(_HOLES):
        source_bit = _ONE << _U(source)
        if (mine & source_bit) == _ZERO:
            continue
        for k in range(12):
            destination = _DESTINATIONS[source, k]
            dest_bit = _ONE << _U(destination)
            if (empty & dest_bit) == _ZERO:
                continue
            new_mine = (mine & ~source_bit) | dest_bit
            if to_move == rules.FIRE:
                cf[count] = new_mine
                ci[count] = ice | source_bit if opponent_supply > 0 else ice
            else:
                ci[count] = new_mine
                cf[count] = fire | source_bit if opponent_supply > 0 else fire
            ca[count] = source * _HOLES + destination
            count += 1
    return count


@njit(cache=True, nogil=True)
def _key(fire, ice, to_move, supply_fire):
    # the supplies sum to 50 minus the pegs on the board, so one of them is enough
    k0 = fire | (_U(supply_fire) << _SUPPLY_SHIFT)
    if to_move == 1:
        k0 |= _TO_MOVE_BIT
    return k0, ice | (_ONE << _U(62)), _ZERO  # bit 62 set: a key is never all zero (a free slot)


@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _search(fire, ice, to_move, supply_fire, supply_ice, depth, ply, tt, stack, stats, limit):
    stats[0] += 1
    tt_keys, tt_value, tt_depth, tt_move, mask = tt
    k0, k1, k2 = _key(fire, ice, to_move, supply_fire)
    slot = probe(tt_keys, mask, k0, k1, k2)
    hint = -1
    if slot >= 0:
        v = tt_value[slot]
        if v != 0 or tt_depth[slot] >= depth:
            return v
        hint = tt_move[slot]
    if stats[0] > limit or ply >= _MAX_PLY:
        return UNKNOWN
    cf, ci, ca, order = stack[0][ply], stack[1][ply], stack[2][ply], stack[3][ply]
    n = _children(fire, ice, to_move, supply_fire, supply_ice, cf, ci, ca)
    opponent = 1 - to_move
    # the supplies after a move: the opponent's drops by one while it lasts
    next_fire = supply_fire - 1 if (to_move == rules.ICE and supply_fire > 0) else supply_fire
    next_ice = supply_ice - 1 if (to_move == rules.FIRE and supply_ice > 0) else supply_ice
    if n == 0:
        if depth == 0:
            return UNKNOWN
        value = -_search(fire, ice, opponent, supply_fire, supply_ice, depth - 1, ply + 1, tt, stack, stats, limit)
        store(tt, k0, k1, k2, value, depth, _PASS, stats)
        return value
    mine = fire if to_move == rules.FIRE else ice
    theirs = ice if to_move == rules.FIRE else fire
    live = 0
    for i in range(n):
        w = _winner(cf[i], ci[i])
        if w == to_move:
            store(tt, k0, k1, k2, WIN, depth, ca[i], stats)
            return WIN
        if w < 0:
            if ca[i] == hint:
                score = -1000
            else:
                destination = ca[i] % _HOLES
                score = -_island_score(mine, theirs, destination // 7) * 4 - _island_score(theirs, mine, destination // 7)
            order[live] = score * 1024 + i
            live += 1
    if live == 0:
        store(tt, k0, k1, k2, LOSS, depth, ca[0], stats)
        return LOSS
    if depth <= 1:
        return UNKNOWN
    sorted_order = np.sort(order[:live])
    unknown = False
    best_unknown = -1
    for j in range(live):
        i = sorted_order[j] % 1024  # Python's modulo: the child's index for negative scores too
        v = -_search(cf[i], ci[i], opponent, next_fire, next_ice, depth - 1, ply + 1, tt, stack, stats, limit)
        if v == WIN:
            store(tt, k0, k1, k2, WIN, depth, ca[i], stats)
            return WIN
        if v == UNKNOWN:
            if not unknown:
                best_unknown = ca[i]
            unknown = True
    if unknown:
        if stats[0] <= limit:
            store(tt, k0, k1, k2, UNKNOWN, depth, best_unknown, stats)
        return UNKNOWN
    store(tt, k0, k1, k2, LOSS, depth, ca[sorted_order[0] % 1024], stats)
    return LOSS


# ---------------------------------------------------------------------------------------------
# Depth-first proof-number search (df-pn; Nagai 2002), negamax form, as for the Floe
# (:mod:`polarzoo.envs.go_with_the_floe.solver`): phi(n) = min over the children of delta(c),
# delta(n) = their sum of phi(c).  The endgame is wide (a hundred moves is common), where the
# deepening searches every undecided subtree full-width.  Proofs are exact: each rests on
# positions whose game is over.  Once a supply is empty a position can repeat; a descent deeper
# than the stack stops the search (UNKNOWN), it never loops.
# ---------------------------------------------------------------------------------------------
@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _mid(fire, ice, to_move, supply_fire, supply_ice, th_phi, th_delta, ply, pn, stack, stats, limit):
    stats[0] += 1
    if ply >= _MAX_PLY - 1:  # a repetition this long: stop the whole search, undecided
        stats[0] = limit + 1
        return
    k0, k1, k2 = _key(fire, ice, to_move, supply_fire)
    cf, ci, ca, kind = stack[0][ply], stack[1][ply], stack[2][ply], stack[3][ply]
    n = _children(fire, ice, to_move, supply_fire, supply_ice, cf, ci, ca)
    next_fire = supply_fire - 1 if (to_move == rules.ICE and supply_fire > 0) else supply_fire
    next_ice = supply_ice - 1 if (to_move == rules.FIRE and supply_ice > 0) else supply_ice
    if n == 0:  # a pass: the same pegs, the other side to move, the supplies unchanged
        cf[0], ci[0], ca[0], kind[0] = fire, ice, _PASS, 0
        n, next_fire, next_ice = 1, supply_fire, supply_ice
    else:
        for i in range(n):
            w = _winner(cf[i], ci[i])
            kind[i] = 0 if w < 0 else (1 if w == to_move else 2)
            if kind[i] == 1:
                pn_put(pn, k0, k1, k2, 0, INFINITE, ca[i], stats)
                return
    opponent = 1 - to_move
    while True:
        p_min, d_sum, d_second, best, best_phi = INFINITE, 0, INFINITE, 0, 0
        for i in range(n):
            if kind[i] == 2:  # the move hands the opponent an island line
                cp, cd = 0, INFINITE
            else:
                c0, c1, c2 = _key(cf[i], ci[i], opponent, next_fire)
                cp, cd = pn_get(pn, c0, c1, c2)
            d_sum = min(d_sum + cp, INFINITE)
            if cd < p_min:
                d_second = p_min
                p_min, best, best_phi = cd, i, cp
            elif cd < d_second:
                d_second = cd
        if p_min >= th_phi or d_sum >= th_delta or stats[0] > limit:
            pn_put(pn, k0, k1, k2, p_min, d_sum, ca[best], stats)
            return
        _mid(cf[best], ci[best], opponent, next_fire, next_ice, th_delta - d_sum + best_phi, min(th_phi, d_second + 1),
             ply + 1, pn, stack, stats, limit)  # fmt: skip


def state_bits(state: rules.State) -> tuple[int, int]:
    """(Fire's pegs, Ice's pegs) of a rules state as 49-bit integers (hole ``h`` = bit ``h``)."""
    fire = sum(1 << int(h) for h in np.flatnonzero(state.board == rules.FIRE + 1))
    ice = sum(1 << int(h) for h in np.flatnonzero(state.board == rules.ICE + 1))
    return fire, ice


def empty_holes(state: rules.State) -> int:
    return int((state.board == rules.EMPTY).sum())


def within_empty_holes(state: rules.State, max_empty: int) -> bool:
    """Whether ``state`` has at most ``max_empty`` empty holes (where a caller keeps the
    endgame search to fuller boards; 49: everywhere)."""
    return empty_holes(state) <= max_empty


class EndgameSolver(ExactSearch):
    """Fire & Ice's exact searches with their tables kept across calls - the endgame table
    (:class:`~polarzoo.envs._common.proof_search.ExactSearch`: ``solve``, ``solve_within``,
    ``solve_by_proof_numbers``, ``lookup``); ``2**table_bits`` entries in each of the two tables,
    69 bytes a pair (22 bits: 290 MB)."""

    def __init__(self, table_bits: int = 22) -> None:
        stack = (
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
        )
        super().__init__(table_bits, stack)

    def position(self, state: rules.State) -> tuple:
        fire, ice = (_U(b) for b in state_bits(state))
        return fire, ice, state.to_move, int(state.supply[rules.FIRE]), int(state.supply[rules.ICE])

    def key(self, state: rules.State) -> tuple[np.uint64, np.uint64, np.uint64]:
        fire, ice, to_move, supply_fire, _ = self.position(state)
        k0, k1, k2 = _key(fire, ice, to_move, supply_fire)
        return _U(k0), _U(k1), _U(k2)

    def _deepen(self, position: tuple, depth: int, limit: int) -> int:
        return int(
            _search(*position, depth, 0, self.tt, self.stack, self.stats, limit)  # type: ignore[call-arg]
        )

    def _prove(self, position: tuple, limit: int) -> None:
        _mid(*position, INFINITE, INFINITE, 0, self.pn,  # type: ignore[call-arg]
             self.stack, self.pn_stats, limit)  # fmt: skip
