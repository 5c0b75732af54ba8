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

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from polarzoo.envs.fire_and_ice import rules

WIN, LOSS, UNKNOWN = 1, -1, 0
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
def _winner(fire, ice):  # type: ignore[no-untyped-def]
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
def _island_score(mine, theirs, island):  # type: ignore[no-untyped-def]
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
def _children(fire, ice, to_move, supply_fire, supply_ice, cf, ci, ca):  # type: ignore[no-untyped-def]
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
def _slot(k0, k1, mask):  # type: ignore[no-untyped-def]
    h = k0 * _U(0x9E3779B97F4A7C15) ^ k1 * _U(0xC2B2AE3D27D4EB4F)
    h ^= h >> _U(29)
    h *= _U(0xBF58476D1CE4E5B9)
    h ^= h >> _U(32)
    return np.int64(h & mask)


@njit(cache=True, nogil=True)
def _key(fire, ice, to_move, supply_fire):  # type: ignore[no-untyped-def]
    # the supplies sum to 50 minus the pegs on the board, so one of them is enough
    k0 = fire | (_U(supply_fire) << _SUPPLY_SHIFT)
    if to_move == 1:
        k0 |= _TO_MOVE_BIT
    return k0, ice | (_ONE << _U(62))  # bit 62 set: a used slot never reads as empty


@njit(cache=True, nogil=True)
def _probe(tt_keys, mask, k0, k1):  # type: ignore[no-untyped-def]
    i = _slot(k0, k1, mask)
    for _ in range(16):
        if tt_keys[i, 0] == k0 and tt_keys[i, 1] == k1:
            return i
        if tt_keys[i, 1] == _ZERO:
            return -(i + 1)
        i = (i + 1) & mask
    return -(tt_keys.shape[0] + 1)


@njit(cache=True, nogil=True)
def _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, value, depth, move, stats):  # type: ignore[no-untyped-def]
    i = _probe(tt_keys, mask, k0, k1)
    if i < 0:
        i = -i - 1
        if i == tt_keys.shape[0]:
            if value == 0:
                return
            j = _slot(k0, k1, mask)
            best, best_depth = -1, 1 << 30
            for _ in range(16):
                if tt_value[j] == 0 and tt_depth[j] < best_depth:
                    best, best_depth = j, tt_depth[j]
                j = (j + 1) & mask
            if best < 0:
                stats[2] += 1
                return
            i = best
        else:
            stats[1] += 1
        tt_keys[i, 0], tt_keys[i, 1] = k0, k1
    elif tt_value[i] != 0 and value == 0:
        return
    tt_value[i] = value
    tt_depth[i] = depth
    tt_move[i] = move


@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _search(
    fire, ice, to_move, supply_fire, supply_ice, depth, ply, tt_keys, tt_value, tt_depth, tt_move, mask, stack, stats, limit
):  # type: ignore[no-untyped-def]
    stats[0] += 1
    k0, k1 = _key(fire, ice, to_move, supply_fire)
    slot = _probe(tt_keys, mask, k0, k1)
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
        value = -_search(
            fire,
            ice,
            opponent,
            supply_fire,
            supply_ice,
            depth - 1,
            ply + 1,
            tt_keys,
            tt_value,
            tt_depth,
            tt_move,
            mask,
            stack,
            stats,
            limit,
        )
        _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, value, depth, _PASS, stats)
        return value
    mine = fire if to_move == rules.FIRE else ice
    theirs = ice if to_move == rules.FIRE else fire
    live = 0
    for i in range(n):
        w = _winner(cf[i], ci[i])
        if w == to_move:
            _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, WIN, depth, ca[i], stats)
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
        _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, LOSS, depth, ca[0], stats)
        return LOSS
    if depth <= 1:
        return UNKNOWN
    sorted_order = np.sort(order[:live])
    unknown = False
    best_unknown = -1
    for j in range(live):
        i = sorted_order[j] % 1024  # Python's modulo: the child's index for negative scores too
        v = -_search(
            cf[i],
            ci[i],
            opponent,
            next_fire,
            next_ice,
            depth - 1,
            ply + 1,
            tt_keys,
            tt_value,
            tt_depth,
            tt_move,
            mask,
            stack,
            stats,
            limit,
        )
        if v == WIN:
            _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, WIN, depth, ca[i], stats)
            return WIN
        if v == UNKNOWN:
            if not unknown:
                best_unknown = ca[i]
            unknown = True
    if unknown:
        if stats[0] <= limit:
            _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, UNKNOWN, depth, best_unknown, stats)
        return UNKNOWN
    _store(tt_keys, tt_value, tt_depth, tt_move, mask, k0, k1, LOSS, depth, ca[sorted_order[0] % 1024], stats)
    return LOSS


# ---------------------------------------------------------------------------------------------
# Depth-first proof-number search (df-pn; Nagai 2002), negamax form, as for the Floe
# (:mod:`polarzoo.envs.go_with_the_floe.solver`): phi(n) = min over the children of delta(c),
# delta(n) = their sum of phi(c).  The endgame is wide (a hundred moves is common), where the
# deepening searches every undecided subtree full-width.  Proofs are exact: each rests on
# positions whose game is over.  Once a supply is empty a position can repeat; a descent deeper
# than the stack stops the search (UNKNOWN), it never loops.
# ---------------------------------------------------------------------------------------------
INFINITE = 1 << 30


@njit(cache=True, nogil=True)
def _pn_probe(keys, mask, k0, k1):  # type: ignore[no-untyped-def]
    i = _slot(k0, k1, mask)
    for _ in range(8):
        if keys[i, 0] == k0 and keys[i, 1] == k1:
            return i
        if keys[i, 1] == _ZERO:
            return -(i + 1)
        i = (i + 1) & mask
    return -(keys.shape[0] + 1)


@njit(cache=True, nogil=True)
def _pn_get(keys, phi, delta, mask, k0, k1):  # type: ignore[no-untyped-def]
    i = _pn_probe(keys, mask, k0, k1)
    if i >= 0:
        return phi[i], delta[i]
    return 1, 1


@njit(cache=True, nogil=True)
def _pn_put(keys, phi, delta, move, mask, k0, k1, p, d, m, stats):  # type: ignore[no-untyped-def]
    i = _pn_probe(keys, mask, k0, k1)
    if i < 0:
        i = -i - 1
        if i == keys.shape[0]:
            j = _slot(k0, k1, mask)
            best, smallest = -1, INFINITE * 2
            for _ in range(8):
                if phi[j] != 0 and delta[j] != 0 and phi[j] + delta[j] < smallest:
                    best, smallest = j, phi[j] + delta[j]
                j = (j + 1) & mask
            if best < 0:
                stats[2] += 1
                return
            i = best
        else:
            stats[1] += 1
        keys[i, 0], keys[i, 1] = k0, k1
    phi[i], delta[i], move[i] = p, d, m


@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _mid(fire, ice, to_move, supply_fire, supply_ice, th_phi, th_delta, ply, keys, phi, delta, move, mask, stack, stats, limit):  # type: ignore[no-untyped-def]
    stats[0] += 1
    if ply >= _MAX_PLY - 1:  # a repetition this long: stop the whole search, undecided
        stats[0] = limit + 1
        return
    k0, k1 = _key(fire, ice, to_move, supply_fire)
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
                _pn_put(keys, phi, delta, move, mask, k0, k1, 0, INFINITE, ca[i], stats)
                return
    opponent = 1 - to_move
    while True:
        p_min, d_sum, d_second, best, best_phi = INFINITE, 0, INFINITE, 0, 0
        for i in range(n):
            if kind[i] == 2:  # the move hands the opponent an island line
                cp, cd = 0, INFINITE
            else:
                c0, c1 = _key(cf[i], ci[i], opponent, next_fire)
                cp, cd = _pn_get(keys, phi, delta, mask, c0, c1)
            d_sum = min(d_sum + cp, INFINITE)
            if cd < p_min:
                d_second = p_min
                p_min, best, best_phi = cd, i, cp
            elif cd < d_second:
                d_second = cd
        if p_min >= th_phi or d_sum >= th_delta or stats[0] > limit:
            _pn_put(keys, phi, delta, move, mask, k0, k1, p_min, d_sum, ca[best], stats)
            return
        _mid(cf[best], ci[best], opponent, next_fire, next_ice, th_delta - d_sum + best_phi, min(th_phi, d_second + 1),
             ply + 1, keys, phi, delta, move, mask, stack, stats, limit)  # fmt: skip


def state_bits(state: rules.State) -> tuple[int, int]:
    """(Fire's pegs, Ice's pegs) of a rules state as 49-bit integers (hole ``h`` = bit ``h``)."""
    fire = sum(1 << int(h) for h in np.flatnonzero(state.board == rules.FIRE + 1))
    ice = sum(1 << int(h) for h in np.flatnonzero(state.board == rules.ICE + 1))
    return fire, ice


def empty_holes(state: rules.State) -> int:
    return int((state.board == rules.EMPTY).sum())


@dataclass
class Proof:
    """What :meth:`EndgameSolver.solve` found: ``value`` WIN / LOSS for the side to move or
    UNKNOWN; ``winner`` the colour that wins with perfect play (-1 if unknown); ``move`` a move that
    keeps the value; ``depth`` the last depth searched."""

    value: int
    winner: int
    move: int
    depth: int
    nodes: int
    seconds: float


class EndgameSolver:
    """Fire & Ice's exact endgame search with its table kept across calls (``2**table_bits``
    entries of 20 bytes: 22 bits, 84 MB)."""

    def __init__(self, table_bits: int = 22) -> None:
        if not 10 <= table_bits <= 30:
            raise ValueError(f"table_bits must be in 10..30, got {table_bits!r}")
        size = 1 << table_bits
        self.tt_keys = np.zeros((size, 2), dtype=np.uint64)
        self.tt_value = np.zeros(size, dtype=np.int8)
        self.tt_depth = np.zeros(size, dtype=np.int16)
        self.tt_move = np.full(size, -1, dtype=np.int16)
        self.mask = _U(size - 1)
        self.stats = np.zeros(3, dtype=np.int64)
        self.pn_keys = np.zeros((size, 2), dtype=np.uint64)
        self.pn_phi = np.zeros(size, dtype=np.int32)
        self.pn_delta = np.zeros(size, dtype=np.int32)
        self.pn_move = np.full(size, -1, dtype=np.int16)
        self.pn_stats = np.zeros(3, dtype=np.int64)
        self.stack = (
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
        )

    @property
    def entries(self) -> int:
        return int(self.stats[1])

    def lookup(self, state: rules.State) -> tuple[int, int]:
        """(value for the side to move, stored move) of a position either table has proven, else
        (UNKNOWN, the stored move or -1)."""
        fire, ice = state_bits(state)
        k0, k1 = (_U(k) for k in _key(_U(fire), _U(ice), state.to_move, int(state.supply[rules.FIRE])))
        slot = _pn_probe(self.pn_keys, self.mask, k0, k1)
        if slot >= 0 and (self.pn_phi[slot] == 0 or self.pn_delta[slot] == 0):
            return (WIN if self.pn_phi[slot] == 0 else LOSS), int(self.pn_move[slot])
        slot = _probe(self.tt_keys, self.mask, k0, k1)
        if slot < 0:
            return UNKNOWN, -1
        return int(self.tt_value[slot]), int(self.tt_move[slot])

    def solve(self, state: rules.State, node_limit: int = 10**12) -> Proof:
        """Whether the side to move wins, within ``node_limit`` nodes: a tenth of them on the
        deepening (short wins), the rest on df-pn (no depth bound)."""
        quick = self.solve_within(state, node_limit=max(node_limit // 10, 1))
        if quick.value != UNKNOWN:
            return quick
        proof = self.solve_by_proof_numbers(state, node_limit - quick.nodes)
        return Proof(proof.value, proof.winner, proof.move, quick.depth, quick.nodes + proof.nodes, quick.seconds + proof.seconds)

    def solve_by_proof_numbers(self, state: rules.State, node_limit: int = 10**12) -> Proof:
        """df-pn alone, within ``node_limit`` nodes (``depth`` 0: no depth bound)."""
        if state.winner >= 0:
            value = WIN if state.winner == state.to_move else LOSS
            return Proof(value, state.winner, -1, 0, 0, 0.0)
        fire, ice = (_U(b) for b in state_bits(state))
        start = time.perf_counter()
        before = int(self.pn_stats[0])
        _mid(
            fire, ice, state.to_move, int(state.supply[rules.FIRE]), int(state.supply[rules.ICE]), INFINITE, INFINITE, 0,
            self.pn_keys, self.pn_phi, self.pn_delta, self.pn_move, self.mask, self.stack, self.pn_stats,
            before + max(node_limit, 1),
        )  # fmt: skip
        value, move = self.lookup(state)
        winner = -1 if value == UNKNOWN else (state.to_move if value == WIN else 1 - state.to_move)
        return Proof(value, winner, move, 0, int(self.pn_stats[0]) - before, time.perf_counter() - start)

    def solve_within(
        self, state: rules.State, max_depth: int = 60, node_limit: int = 10**12, time_limit: float | None = None, log=None
    ) -> Proof:  # type: ignore[no-untyped-def]
        """Deepen from 1 to ``max_depth`` plies until the position is proven (or ``node_limit``
        nodes, or ``time_limit`` seconds after the start of an iteration are spent): a proof here
        is the shortest win (``depth``: its plies)."""
        if state.winner >= 0:
            value = WIN if state.winner == state.to_move else LOSS
            return Proof(value, state.winner, -1, 0, 0, 0.0)
        fire, ice = (_U(b) for b in state_bits(state))
        start = time.perf_counter()
        nodes_before = int(self.stats[0])
        value, depth = UNKNOWN, 0
        for depth in range(1, max_depth + 1):
            value = _search(
                fire, ice, state.to_move, int(state.supply[rules.FIRE]), int(state.supply[rules.ICE]), depth, 0,
                self.tt_keys, self.tt_value, self.tt_depth, self.tt_move, self.mask, self.stack, self.stats,
                nodes_before + node_limit,
            )  # fmt: skip
            elapsed = time.perf_counter() - start
            if log is not None:
                log(depth, value, int(self.stats[0]) - nodes_before, self.entries, elapsed)
            if value != UNKNOWN or int(self.stats[0]) - nodes_before >= node_limit:
                break
            if time_limit is not None and elapsed >= time_limit:
                break
        _, move = self.lookup(state)
        winner = -1 if value == UNKNOWN else (state.to_move if value == WIN else 1 - state.to_move)
        return Proof(value, winner, move, depth, int(self.stats[0]) - nodes_before, time.perf_counter() - start)
