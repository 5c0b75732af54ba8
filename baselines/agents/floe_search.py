"""Go with the Floe search for White (``search:D`` for ``go_with_the_floe_v0``): the policy, with
each capture chosen by the searched value of the endgame it leaves, and the last seal hunted by an
expectimax over the rules.

The endgame (one bear against one seal) is searched as an expectimax against a seal that moves
uniformly at random: ``D`` White moves deep, a bear next to the seal with White to move counts as
won, an isolated seal (or two passes) as lost, any other leaf as :data:`UNDECIDED_LEAF`.  With the
leaves counted 0 or 1 instead, :func:`endgame_bound` brackets the exact value of White's best play
(the White study of 0.2.0, ``git show 5b8b7a0:benchmarks/floe_white.py``, used both).  Compiled with numba on bitboards and memoised per move,
a move takes milliseconds.  Black is played by the policy alone: the search is White's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit, types
from numba.typed import Dict

from polarzoo.envs.go_with_the_floe import kernels as floe_kernels
from polarzoo.envs.go_with_the_floe import rules

if TYPE_CHECKING:
    from polarzoo.baselines.agents.policy import PolicyAgent

#: Leaf value of an undecided endgame position in the expectimax (a bear next to the seal with
#: White to move is a capture, so a win: 1.0).
UNDECIDED_LEAF = 0.9


# ---------------------------------------------------------------------------------------------
# The endgame searched: one bear against one seal that moves uniformly at random.  Compiled with
# numba on bitboards (``rings`` uint64, squares as ints); the end test is the env's own kernel.
# The recursion cannot be cached by numba, so the first call compiles (~3 s).
# ---------------------------------------------------------------------------------------------
_TARGET = rules.TARGET.astype(np.int64)
_KING_DISTANCE = rules.KING_DISTANCE.astype(np.int64)
_MEMO_KEY = types.UniTuple(types.int64, 3)


@njit(cache=True)
def _token_moves(square, other, rings, destinations, new_rings):
    """The moves of the token on ``square`` (the other token on ``other``; captures left out):
    their destination squares and the ring bits each adds; returns how many."""
    one = np.uint64(1)
    count = 0
    for direction in range(8):
        near, far = _TARGET[square, direction, 0], _TARGET[square, direction, 1]
        if near < 0 or near == other:
            continue
        if (rings >> np.uint64(near)) & one == 0:
            destinations[count], new_rings[count] = near, one << np.uint64(square)
            count += 1
        if far >= 0 and far != other and (rings >> np.uint64(far)) & one == 0:
            destinations[count], new_rings[count] = far, (one << np.uint64(square)) | (one << np.uint64(near))
            count += 1
    return count


@njit
def endgame_value(white_to_move, bear, seal, rings, passes, depth, leaf, memo):
    """White's winning chance with ``depth`` more White moves searched (then ``leaf`` for a
    position not yet decided): the best of White's moves, the mean of the seal's."""
    destinations, new_rings = np.empty(16, np.int64), np.empty(16, np.uint64)
    one = np.uint64(1)
    if not white_to_move:
        count = _token_moves(seal, bear, rings, destinations, new_rings)
        if count == 0:
            return 0.0 if passes >= 1 else endgame_value(True, bear, seal, rings, passes + 1, depth, leaf, memo)
        total = 0.0
        for i in range(count):
            after = rings | new_rings[i]
            if not floe_kernels.seal_isolated(one << np.uint64(bear), destinations[i], after):
                total += endgame_value(True, bear, destinations[i], after, 0, depth, leaf, memo)
        return total / count
    if _KING_DISTANCE[bear, seal] <= 1:
        return 1.0  # the capture
    if depth == 0:
        return leaf
    key = (np.int64(rings), np.int64(64 * bear + seal), np.int64(64 * passes + depth))
    if key in memo:
        return memo[key]
    count = _token_moves(bear, seal, rings, destinations, new_rings)
    if count == 0:
        best = 0.0 if passes >= 1 else endgame_value(False, bear, seal, rings, passes + 1, depth - 1, leaf, memo)
    else:
        best = best_bear_move(seal, rings, destinations, new_rings, count, depth, leaf, memo)[0]
    memo[key] = best
    return best


@njit
def best_bear_move(seal, rings, destinations, new_rings, count, depth, leaf, memo):
    """(value, index) of the best of the bear's ``count`` moves, each searched ``depth - 1``
    White moves further (the first of equal ones; a move that isolates the seal is worth 0)."""
    one = np.uint64(1)
    best, chosen = 0.0, 0
    for i in range(count):
        after = rings | new_rings[i]
        if not floe_kernels.seal_isolated(one << np.uint64(destinations[i]), seal, after):
            value = endgame_value(False, destinations[i], seal, after, 0, depth - 1, leaf, memo)
            if value > best:
                best, chosen = value, i
        if best >= 1.0:
            break
    return best, chosen


@njit
def endgame_bound(bear, seal, rings, depth, leaf):
    """White's winning chance from an endgame position with the seal to move, searched ``depth``
    White moves deep with ``leaf`` for undecided positions: leaf 1 gives an upper bound on the
    exact value (White's best play against the random seal), leaf 0 a lower bound."""
    memo = Dict.empty(key_type=_MEMO_KEY, value_type=types.float64)
    return endgame_value(False, bear, seal, rings, 0, depth, leaf, memo)


@njit
def play_endgame(bear, seal, rings, depth, leaf, seed):
    """Play an endgame position (the seal to move) to its end: the seal uniformly at random, the
    bear by expectimax ``depth`` White moves deep.  Whether White won."""
    np.random.seed(seed)
    destinations, new_rings = np.empty(16, np.int64), np.empty(16, np.uint64)
    one = np.uint64(1)
    passes = 0
    while True:
        count = _token_moves(seal, bear, rings, destinations, new_rings)
        if count == 0:
            passes += 1
            if passes >= 2:
                return False
        else:
            i = np.random.randint(count)
            rings, seal, passes = rings | new_rings[i], destinations[i], 0
            if floe_kernels.seal_isolated(one << np.uint64(bear), seal, rings):
                return False
        if _KING_DISTANCE[bear, seal] <= 1:
            return True
        count = _token_moves(bear, seal, rings, destinations, new_rings)
        if count == 0:
            passes += 1
            if passes >= 2:
                return False
            continue
        memo = Dict.empty(key_type=_MEMO_KEY, value_type=types.float64)
        chosen = best_bear_move(seal, rings, destinations, new_rings, count, depth, leaf, memo)[1]
        rings, bear, passes = rings | new_rings[chosen], destinations[chosen], 0
        if floe_kernels.seal_isolated(one << np.uint64(bear), seal, rings):
            return False


def endgame_arguments(board: np.ndarray, rings: np.ndarray) -> tuple[int, int, np.uint64]:
    """(bear square, seal square, ring bitboard) of a one-bear, one-seal position."""
    ring_bits = np.uint64(rules._bits(rings.astype(bool)))
    return int(np.flatnonzero(board == rules.BEAR)[0]), int(np.flatnonzero(board == rules.SEAL)[0]), ring_bits


def capture_value(board: np.ndarray, rings: np.ndarray, action: int, depth: int, leaf: float = UNDECIDED_LEAF) -> float:
    """Searched value of the endgame a capture leaves (0 if the other seal is isolated by it)."""
    state = rules.apply_inplace(rules.State(board.copy(), rings.astype(bool), rules.WHITE), action)
    if state.winner >= 0:
        return float(state.winner == rules.WHITE)
    return float(endgame_bound(*endgame_arguments(state.board, state.rings), depth, leaf))


def best_capture(board: np.ndarray, rings: np.ndarray, legal: np.ndarray, depth: int, leaf: float = UNDECIDED_LEAF) -> int:
    """Among White's ``legal`` moves, the capture whose endgame searches best (the first of equal
    ones), or -1 if none captures."""
    captures = [a for a in legal.tolist() if a != rules.PASS and board[rules.action_destination(a)] == rules.SEAL]
    if not captures:
        return -1
    return int(captures[int(np.argmax([capture_value(board, rings, a, depth, leaf) for a in captures]))])


@njit
def endgame_move(bear, seal, rings, depth, leaf):
    """The bear's destination square chosen by the expectimax (``depth`` White moves deep) in an
    endgame position with White to move, or -1 when the bear has no move (White passes)."""
    destinations, new_rings = np.empty(16, np.int64), np.empty(16, np.uint64)
    count = _token_moves(bear, seal, rings, destinations, new_rings)
    if count == 0:
        return -1
    memo = Dict.empty(key_type=_MEMO_KEY, value_type=types.float64)
    return destinations[best_bear_move(seal, rings, destinations, new_rings, count, depth, leaf, memo)[1]]


def compile_search() -> None:
    """Compile the search now (a few seconds, once per process; numba cannot cache the recursion),
    so that an agent's first capture or endgame move is not the one that waits for it."""
    squares = np.flatnonzero(rules.ON_BOARD)
    bear, seal = int(squares[0]), int(squares[-1])
    endgame_move(bear, seal, np.uint64(0), 1, UNDECIDED_LEAF)
    endgame_bound(bear, seal, np.uint64(0), 1, UNDECIDED_LEAF)


class FloeSearch:
    """``search:D``: a Go with the Floe policy whose White is helped by the endgame search.

    As White: where captures are legal, the one whose endgame searches best (:func:`capture_value`,
    ``depth`` White moves; a capture that wins at once is worth 1); with one seal left, the bear's
    move chosen by :func:`endgame_move`; every other move (and every Black move) by ``policy``.
    The search models the seal as moving at random, so it is built for random seals; against
    seals that play well its model is wrong, yet in the league's games it still wins more as White
    than the policy alone (docs/results.md)."""

    def __init__(self, policy: PolicyAgent, depth: int = 3, name: str | None = None, leaf: float = UNDECIDED_LEAF) -> None:
        if depth < 1:
            raise ValueError(f"the endgame search needs at least 1 White move of depth, got {depth}")
        self.policy, self.depth, self.leaf = policy, int(depth), float(leaf)
        self.name = name or f"search:{depth}"
        compile_search()

    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        state = env.state
        if state.to_move != rules.WHITE:
            return self.policy.act(env, agent, rng)
        # the rules' own legal moves: the env's observation (reach planes) is built once, by the policy
        move = self.search_move(state.board, state.rings, rules.legal_actions(state))
        return self.policy.act(env, agent, rng) if move < 0 else move

    def search_move(self, board: np.ndarray, rings: np.ndarray, legal: np.ndarray) -> int:
        """White's move where the search decides (a capture, or any move with one seal left), else -1."""
        capture = best_capture(board, rings, legal, self.depth, self.leaf)
        if capture >= 0:
            return capture
        if int((board == rules.SEAL).sum()) != 1:
            return -1
        bear, seal, ring_bits = endgame_arguments(board, rings)
        destination = int(endgame_move(bear, seal, ring_bits, self.depth, self.leaf))
        if destination < 0:
            return rules.PASS
        for action in legal.tolist():
            if (
                action != rules.PASS
                and rules.decode_action(action)[0] == bear
                and rules.action_destination(action) == destination
            ):
                return int(action)
        raise AssertionError(f"the endgame search chose {rules.square_name(destination)}, which no legal move reaches")


def build_search(policy: Any, kind: str, budget: int | None, label: str = "") -> FloeSearch:
    """``search:D`` (default depth 3) over ``policy``, as the Floe's kit builds it; ``label``
    names the policy's file after the spec."""
    depth = budget or 3
    return FloeSearch(policy, depth, name=f"search:{depth}{label}")
