"""Exact search for Go with the Floe: who wins a position with perfect play from both sides.

Two searches, compiled with numba on 64-bit bitboards (seals, bears, rings): a depth-limited
negamax over win / loss / unknown, deepened one ply at a time from the root
(:meth:`FloeSolver.solve_within`: the shortest win), and a depth-first proof-number search (df-pn,
:meth:`FloeSolver.solve_by_proof_numbers`: no depth bound); :meth:`FloeSolver.solve` runs the first
on a tenth of its node budget, then the second.  The deepening:

* **Proofs are exact.**  The game is finite and has no draws: every move leaves a ring, so a game
  lasts at most 52 moves and two passes in a row end it.  A position's value does not depend on
  the path to it, so a proven win or loss is stored once and reused by every later iteration and
  every later call (the table lives in a :class:`FloeSolver`).  "Unknown" means "not decided within
  the depth searched" and is stored with that depth only.
* **Transposition table**: open addressing on the full position (seals, bears, rings, side to
  move, passes), so a hit is never a hash collision.  When the table is full an entry found
  unknown at a smaller depth is replaced; proofs are never overwritten by unknowns.
* **Move ordering**: the table's best move first, then (after a one-ply look for a move that ends
  the game in the mover's favour) captures, then moves that bring a bear nearest a seal (White) or
  keep the seals farthest from the bears (Black).

The rules are :mod:`polarzoo.envs.go_with_the_floe.rules` (the end test is the env's own compiled
kernel, :func:`~polarzoo.envs.go_with_the_floe.kernels.seal_isolated`); ``tests/test_floe_solver.py``
checks the solver against a plain minimax over the readable rules on hand-built and random
endgames.
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
from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe.kernels import seal_isolated

_U = np.uint64
_ONE = _U(1)
_ZERO = _U(0)
_TARGET = rules.TARGET.astype(np.int64)
_KING_DISTANCE = rules.KING_DISTANCE.astype(np.int64)
_PASS = rules.PASS
_MAX_CHILDREN = 40  # two tokens x 8 directions x 2 distances = 32, or one pass
_MAX_PLY = 120
_TO_MOVE_BIT = _U(1) << _U(63)  # square 63 is off the board, so its ring bit is free
_PASSED_BIT = _U(1)  # square 0 (A1) likewise


@njit(cache=True, nogil=True)
def _winner(seals, bears, rings, passes):
    """The rules' end test on bitboards: WHITE if no seal is left, BLACK if a seal is isolated or
    after two passes, else -1."""
    if seals == _ZERO:
        return rules.WHITE
    rest = seals
    while rest != _ZERO:
        low = rest & (~rest + _ONE)
        sq = 0
        probe = low
        while probe > _ONE:
            probe >>= _ONE
            sq += 1
        if seal_isolated(bears, sq, rings):
            return rules.BLACK
        rest ^= low
    if passes >= 2:
        return rules.BLACK
    return -1


@njit(cache=True, nogil=True)
def _bits_to_squares(bits, out):
    count = 0
    for sq in range(64):
        if (bits >> _U(sq)) & _ONE:
            out[count] = sq
            count += 1
    return count


@njit(cache=True, nogil=True)
def _children(seals, bears, rings, to_move, cs, cb, cr, ca):
    """The moves of the side to move: child bitboards in ``cs`` / ``cb`` / ``cr`` and the action
    in ``ca``; returns how many (0: the side must pass)."""
    mine = seals if to_move == rules.BLACK else bears
    occupied = seals | bears
    squares = np.empty(4, dtype=np.int64)
    n_tokens = _bits_to_squares(mine, squares)
    count = 0
    for t in range(n_tokens):
        sq = squares[t]
        from_bit = _ONE << _U(sq)
        for d in range(8):
            near = _TARGET[sq, d, 0]
            if near < 0:
                continue
            far = _TARGET[sq, d, 1]
            near_bit = _ONE << _U(near)
            near_ring = (rings & near_bit) != _ZERO
            near_free = (occupied & near_bit) == _ZERO
            if not near_ring and near_free:  # step
                if to_move == rules.BLACK:
                    cs[count], cb[count] = (seals & ~from_bit) | near_bit, bears
                else:
                    cs[count], cb[count] = seals, (bears & ~from_bit) | near_bit
                cr[count] = rings | from_bit
                ca[count] = 16 * sq + 2 * d
                count += 1
            elif to_move == rules.WHITE and (seals & near_bit) != _ZERO:  # capture: both leave
                cs[count], cb[count] = seals & ~near_bit, bears & ~from_bit
                cr[count] = rings | from_bit
                ca[count] = 16 * sq + 2 * d
                count += 1
            if far >= 0 and near_free:
                far_bit = _ONE << _U(far)
                if (rings & far_bit) == _ZERO and (occupied & far_bit) == _ZERO:  # slide or jump
                    if to_move == rules.BLACK:
                        cs[count], cb[count] = (seals & ~from_bit) | far_bit, bears
                    else:
                        cs[count], cb[count] = seals, (bears & ~from_bit) | far_bit
                    cr[count] = rings | from_bit | near_bit
                    ca[count] = 16 * sq + 2 * d + 1
                    count += 1
    return count


@njit(cache=True, nogil=True)
def _closeness(seals, bears):
    """The smallest king distance between a seal and a bear (8 if either side has none)."""
    best = 8
    s_sq = np.empty(4, dtype=np.int64)
    b_sq = np.empty(4, dtype=np.int64)
    ns = _bits_to_squares(seals, s_sq)
    nb = _bits_to_squares(bears, b_sq)
    for i in range(ns):
        for j in range(nb):
            d = _KING_DISTANCE[s_sq[i], b_sq[j]]
            if d < best:
                best = d
    return best


@njit(cache=True, nogil=True)
def _key(seals, bears, rings, to_move, passes):
    r = rings
    if to_move == 1:
        r |= _TO_MOVE_BIT
    if passes > 0:
        r |= _PASSED_BIT
    return seals, bears, r


@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _search(seals, bears, rings, to_move, passes, depth, ply, tt, stack, stats, limit):
    """WIN / LOSS for the side to move, proven; UNKNOWN if not decided within ``depth`` plies
    (or once ``stats[0]`` nodes exceed ``limit``); ``tt``: the deepening's table (:func:`store`)."""
    tt_keys, tt_value, tt_depth, tt_move, mask = tt
    stats[0] += 1
    k0, k1, k2 = _key(seals, bears, rings, to_move, passes)
    slot = probe(tt_keys, mask, k0, k1, k2)
    hint = -1
    if slot >= 0:
        v = tt_value[slot]
        if v != 0 or tt_depth[slot] >= depth:
            return v
        hint = tt_move[slot]
    if stats[0] > limit or ply >= _MAX_PLY:
        return UNKNOWN
    cs, cb, cr, ca = stack[0][ply], stack[1][ply], stack[2][ply], stack[3][ply]
    order = stack[4][ply]
    n = _children(seals, bears, rings, to_move, cs, cb, cr, ca)
    if n == 0:  # pass
        if passes >= 1:  # the second pass ends the game: Black wins
            value = WIN if to_move == rules.BLACK else LOSS
            store(tt, k0, k1, k2, value, depth, _PASS, stats)
            return value
        if depth == 0:
            return UNKNOWN
        value = -_search(seals, bears, rings, 1 - to_move, 1, depth - 1, ply + 1, tt, stack, stats, limit)
        store(tt, k0, k1, k2, value, depth, _PASS, stats)
        return value
    # One ply: a move that wins at once ends the search; moves that lose at once are dropped.
    live = 0
    for i in range(n):
        w = _winner(cs[i], cb[i], cr[i], 0)
        if w == to_move:
            store(tt, k0, k1, k2, WIN, depth, ca[i], stats)
            return WIN
        if w < 0:
            # ordering score: lower searches first
            if ca[i] == hint:
                score = -100
            elif to_move == rules.WHITE:
                score = _closeness(cs[i], cb[i]) - (10 if cs[i] != seals else 0)
            else:
                score = -_closeness(cs[i], cb[i])
            order[live] = score * 64 + i
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
        i = sorted_order[j] % 64  # Python's modulo: the child's index for negative scores too
        v = -_search(cs[i], cb[i], cr[i], 1 - to_move, 0, depth - 1, ply + 1, tt, stack, stats, limit)
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
    store(tt, k0, k1, k2, LOSS, depth, ca[sorted_order[0] % 64], stats)
    return LOSS


# ---------------------------------------------------------------------------------------------
# Depth-first proof-number search (df-pn; Nagai 2002), negamax form: each position stores phi
# (the proof number of "the side to move wins") and delta (of "it loses"); phi(n) = min over the
# children of delta(c), delta(n) = the sum of phi(c).  It descends to the most-proving child
# under thresholds, so it does not search the undecided subtrees full-width as the deepening
# does.  The game is acyclic (every move leaves a ring, two passes end it), so the table's proofs
# are exact; its sums may count a transposed subtree twice, which only slows the search.
# ---------------------------------------------------------------------------------------------
@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _mid(seals, bears, rings, to_move, passes, th_phi, th_delta, ply, pn, stack, stats, limit):
    stats[0] += 1
    k0, k1, k2 = _key(seals, bears, rings, to_move, passes)
    cs, cb, cr, ca, kind = stack[0][ply], stack[1][ply], stack[2][ply], stack[3][ply], stack[4][ply]
    n = _children(seals, bears, rings, to_move, cs, cb, cr, ca)
    next_passes = 0
    if n == 0:  # the only move is a pass; a second pass in a row ends the game for Black
        cs[0], cb[0], cr[0], ca[0] = seals, bears, rings, _PASS
        n, next_passes = 1, 1
        kind[0] = 0
        if passes >= 1:
            kind[0] = 1 if to_move == rules.BLACK else 2
    else:
        for i in range(n):
            w = _winner(cs[i], cb[i], cr[i], 0)
            kind[i] = 0 if w < 0 else (1 if w == to_move else 2)  # 1: the mover wins at once, 2: loses
            if kind[i] == 1:
                pn_put(pn, k0, k1, k2, 0, INFINITE, ca[i], stats)
                return
    while True:
        # phi(n) = min delta(c), delta(n) = sum phi(c); the best child and the second-best delta
        p_min, d_sum, d_second, best = INFINITE, 0, INFINITE, 0
        best_phi = 0
        for i in range(n):
            if kind[i] == 2:  # the child's mover has won
                cp, cd = 0, INFINITE
            elif kind[i] == 1:  # the child's mover has lost (Black's second pass)
                cp, cd = INFINITE, 0
            else:
                c0, c1, c2 = _key(cs[i], cb[i], cr[i], 1 - to_move, next_passes)
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
        child_th_phi = th_delta - d_sum + best_phi
        child_th_delta = min(th_phi, d_second + 1)
        _mid(cs[best], cb[best], cr[best], 1 - to_move, next_passes, child_th_phi, child_th_delta, ply + 1,
             pn, stack, stats, limit)  # fmt: skip


def state_bits(state: rules.State) -> tuple[int, int, int]:
    """(seals, bears, rings) of a rules state as 64-bit integers (square ``sq`` = bit ``sq``)."""
    seals = sum(1 << int(s) for s in np.flatnonzero(state.board == rules.SEAL))
    bears = sum(1 << int(s) for s in np.flatnonzero(state.board == rules.BEAR))
    rings = sum(1 << int(s) for s in np.flatnonzero(state.rings))
    return seals, bears, rings


class FloeSolver(ExactSearch):
    """Go with the Floe's exact searches with their tables kept across calls
    (:class:`~polarzoo.envs._common.proof_search.ExactSearch`: ``solve``, ``solve_within``,
    ``solve_by_proof_numbers``, ``lookup``); ``2**table_bits`` entries in each of the two tables,
    69 bytes a pair (22 bits: 290 MB)."""

    def __init__(self, table_bits: int = 22) -> None:
        stack = (
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
            np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
        )
        super().__init__(table_bits, stack)

    def position(self, state: rules.State) -> tuple:
        seals, bears, rings = (_U(b) for b in state_bits(state))
        return seals, bears, rings, state.to_move, min(state.passes, 1)

    def key(self, state: rules.State) -> tuple[np.uint64, np.uint64, np.uint64]:
        k0, k1, k2 = _key(*self.position(state))
        return _U(k0), _U(k1), _U(k2)

    def _deepen(self, position: tuple, depth: int, limit: int) -> int:
        return int(
            _search(*position, depth, 0, self.tt, self.stack, self.stats, limit)  # type: ignore[call-arg]
        )

    def _prove(self, position: tuple, limit: int) -> None:
        _mid(*position, INFINITE, INFINITE, 0, self.pn,  # type: ignore[call-arg]
             self.stack, self.pn_stats, limit)  # fmt: skip


@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _perft(seals, bears, rings, to_move, passes, depth, cs, cb, cr, ca, ply, counts):
    # counts[k]: positions reached after k plies (paths, not merged), games ended at ply k in counts[64 + k]
    counts[ply] += 1
    if _winner(seals, bears, rings, passes) >= 0 and ply > 0:
        counts[64 + ply] += 1
        return
    if ply == depth:
        return
    n = _children(seals, bears, rings, to_move, cs[ply], cb[ply], cr[ply], ca[ply])
    if n == 0:
        _perft(seals, bears, rings, 1 - to_move, passes + 1, depth, cs, cb, cr, ca, ply + 1, counts)
        return
    for i in range(n):
        _perft(cs[ply, i], cb[ply, i], cr[ply, i], 1 - to_move, 0, depth, cs, cb, cr, ca, ply + 1, counts)


def count_paths(state: rules.State, depth: int) -> tuple[list[int], list[int]]:
    """Game-tree nodes after 0..``depth`` plies (every path counted, transpositions not merged)
    and the games that end at each ply: the compiled count behind the size table."""
    seals, bears, rings = (_U(b) for b in state_bits(state))
    stack = [np.zeros((depth + 2, _MAX_CHILDREN), dtype=np.uint64) for _ in range(3)]
    actions = np.zeros((depth + 2, _MAX_CHILDREN), dtype=np.int64)
    counts = np.zeros(128, dtype=np.int64)
    _perft(seals, bears, rings, state.to_move, state.passes, depth, stack[0], stack[1], stack[2], actions, 0, counts)
    return counts[: depth + 1].tolist(), counts[64 : 64 + depth + 1].tolist()


@njit(cache=True, nogil=True)
def _knuth(seals, bears, rings, to_move, seed, games, out):
    # out[g] = product of the branching factors along game g's uniformly random path (Knuth 1975:
    # its mean is the game tree's number of leaves); out[games + g] = the game's length.
    np.random.seed(seed)
    cs = np.zeros(_MAX_CHILDREN, dtype=np.uint64)
    cb = np.zeros(_MAX_CHILDREN, dtype=np.uint64)
    cr = np.zeros(_MAX_CHILDREN, dtype=np.uint64)
    ca = np.zeros(_MAX_CHILDREN, dtype=np.int64)
    for g in range(games):
        s, b, r, m, passes = seals, bears, rings, to_move, 0
        product = 1.0
        plies = 0
        while _winner(s, b, r, passes) < 0:
            n = _children(s, b, r, m, cs, cb, cr, ca)
            if n == 0:
                passes += 1
            else:
                product *= n
                i = np.random.randint(n)
                s, b, r, passes = cs[i], cb[i], cr[i], 0
            m = 1 - m
            plies += 1
        out[g] = product
        out[games + g] = plies


def estimate_tree_size(state: rules.State, games: int = 100_000, seed: int = 0) -> dict[str, float]:
    """Knuth's estimate of the number of complete games (leaves of the game tree) from ``state``:
    the mean over uniformly random games of the product of their branching factors, with its
    standard error, and the random games' mean length."""
    seals, bears, rings = (_U(b) for b in state_bits(state))
    out = np.zeros(2 * games, dtype=np.float64)
    _knuth(seals, bears, rings, state.to_move, seed, games, out)
    products, lengths = out[:games], out[games:]
    return {
        "games": games,
        "leaves": float(products.mean()),
        "leaves_se": float(products.std(ddof=1) / np.sqrt(games)),
        "log10_leaves": float(np.log10(products.mean())),
        "mean_length": float(lengths.mean()),
        "max_length": float(lengths.max()),
    }


# ------------------------------------------------------------------------------ match score
_ON_BOARD_BITS = _U(rules.ON_BOARD_BITS)
_NO_SCORE = 1000  # beyond any score (52 squares at most)


@njit(cache=True, nogil=True)
def _popcount(bits):
    count = 0
    while bits != _ZERO:
        bits &= bits - _ONE
        count += 1
    return count


@njit(cache=True, nogil=True)
def _empty_squares(seals, bears, rings):
    """:func:`rules.empty_squares` on bitboards: on-board squares with neither ring nor token."""
    return _popcount(_ON_BOARD_BITS & ~rings & ~seals & ~bears)


@njit(nogil=True)  # recursive: numba's cache cannot hold it
def _score(seals, bears, rings, to_move, passes, depth, ply, alpha, beta, optimistic, cs, cb, cr, ca, best, stats, limit):
    """The game's score for Black (a Black win: +the empty squares it leaves; a White win: minus
    them), Black maximising and White minimising, by alpha-beta over ``depth`` plies.  A position
    the depth leaves open scores a bound on every score below it: Black's moves and White's
    non-captures only take squares away and a capture gives one back (a seal and a bear leave, a
    ring comes), so no game from here ends with more than its empty squares plus its seals
    (``optimistic``: that bound for Black; else its negative).  ``best[ply]``: the move chosen."""
    stats[0] += 1
    winner = _winner(seals, bears, rings, passes)
    if winner >= 0:
        empty = _empty_squares(seals, bears, rings)
        return empty if winner == rules.BLACK else -empty
    if depth == 0 or stats[0] > limit:
        if stats[0] > limit:
            stats[1] = 1
        bound = _empty_squares(seals, bears, rings) + _popcount(seals)
        return bound if optimistic else -bound
    n = _children(seals, bears, rings, to_move, cs[ply], cb[ply], cr[ply], ca[ply])
    if n == 0:  # a pass
        best[ply] = _PASS
        return _score(seals, bears, rings, 1 - to_move, passes + 1, depth - 1, ply + 1, alpha, beta, optimistic,
                      cs, cb, cr, ca, best, stats, limit)  # fmt: skip
    # the moves that end the game for the mover first (a one-ply look), then the generator's order
    order = np.empty(n, dtype=np.int64)
    front, back = 0, n - 1
    for i in range(n):
        if _winner(cs[ply, i], cb[ply, i], cr[ply, i], 0) == to_move:
            order[front] = i
            front += 1
        else:
            order[back] = i
            back -= 1
    maximising = to_move == rules.BLACK
    value = -_NO_SCORE if maximising else _NO_SCORE
    chosen = ca[ply, order[0]]
    for k in range(n):
        i = order[k]
        v = _score(cs[ply, i], cb[ply, i], cr[ply, i], 1 - to_move, 0, depth - 1, ply + 1, alpha, beta, optimistic,
                   cs, cb, cr, ca, best, stats, limit)  # fmt: skip
        if (maximising and v > value) or (not maximising and v < value):
            value, chosen = v, ca[ply, i]
        if maximising:
            alpha = max(alpha, value)
        else:
            beta = min(beta, value)
        if alpha >= beta:
            break
    best[ply] = chosen
    return value


class MatchValue:
    """A position's score under perfect play (:func:`match_value`): ``score`` for Black (a Black
    win: the empty squares it leaves; a White win: minus them), ``move`` the best move of the side
    to move, ``depth`` the plies searched, ``nodes``, and ``exact`` (``False``: the bounds
    ``low`` <= score <= ``high`` did not meet within the depth or node budget)."""

    def __init__(self, low: int, high: int, move: int, depth: int, nodes: int) -> None:
        self.low, self.high, self.move, self.depth, self.nodes = int(low), int(high), int(move), int(depth), int(nodes)
        self.exact = self.low == self.high
        self.score = self.low if self.exact else None

    def __repr__(self) -> str:
        shown = self.score if self.exact else f"[{self.low}, {self.high}]"
        return f"MatchValue(score={shown}, move={self.move}, depth={self.depth}, nodes={self.nodes})"


def match_value(state: rules.State, max_depth: int = 16, node_limit: int = 50_000_000) -> MatchValue:
    """The score of ``state``'s game under perfect play for the match (the winner scores the empty
    squares left): Black's best forced result against White's best defence.  Alpha-beta deepened a
    ply at a time, each depth searched with the open positions at their best and at their worst
    for Black, until the two agree (exact) or ``max_depth`` / ``node_limit`` is reached."""
    seals, bears, rings = (_U(b) for b in state_bits(state))
    buffers = (
        np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
        np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
        np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.uint64),
        np.zeros((_MAX_PLY + 1, _MAX_CHILDREN), dtype=np.int64),
    )
    best = np.zeros(_MAX_PLY + 1, dtype=np.int64)
    nodes, low, high, move = 0, -_NO_SCORE, _NO_SCORE, -1
    for depth in range(1, max_depth + 1):
        bounds = []
        for optimistic in (False, True):
            stats = np.zeros(2, dtype=np.int64)
            value = _score(seals, bears, rings, int(state.to_move), int(state.passes), depth, 0, -_NO_SCORE, _NO_SCORE,
                           optimistic, *buffers, best, stats, max(node_limit - nodes, 1))  # fmt: skip
            nodes += int(stats[0])
            bounds.append(int(value))
            if not optimistic:
                move = int(best[0])
        low, high = bounds
        if low == high or nodes >= node_limit:
            return MatchValue(low, high, move, depth, nodes)
    return MatchValue(low, high, move, max_depth, nodes)
