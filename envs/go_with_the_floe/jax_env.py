"""Go with the Floe in JAX with pgx's API: ``jit`` / ``vmap`` clean, for accelerators.

A twin of the rules in :mod:`polarzoo.envs.go_with_the_floe.rules` (the specification) and of
the numba kernels (:mod:`polarzoo.envs.go_with_the_floe.kernels`), built from the same
``TARGET`` table, tested in lockstep against the batch core (``tests/test_jax_envs.py``).
Single games (the batch core's game; match play is the AEC env's ``match=True``).

    import jax
    from polarzoo.envs.go_with_the_floe.jax_env import GoWithTheFloe

    env = GoWithTheFloe()
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 1024))

| pgx field | here |
|---|---|
| ``current_player`` | int32 player id 0 / 1; ``init`` draws which player id plays Black (the seals, who move first); ``state.first_player`` names it |
| ``observation`` | int8 (8, 8, 11), exactly ``go_with_the_floe_v0``'s single-game encoding for the player to move |
| ``legal_action_mask`` | bool (1025,), the AEC env's mask; all True once terminated (pgx's convention) |
| ``rewards`` | float32 (2,) by player id: +1 / -1 when the game ends |
| ``terminated`` / ``truncated`` | a win ends the game; nothing truncates (every move melts ice) |

Isolation (Black wins when no bear can ever come next to a seal) is the rules' bitboard flood
fill as a bounded ``lax.while_loop``: each round adds every node one king step or one
single-ring jump from what is reached, on 64-square bitboards held as two uint32 words (so it
runs without ``jax_enable_x64``).  Needs the optional extra: ``pip install "polarzoo[jax]"``.
"""

from __future__ import annotations

from typing import ClassVar

try:
    import jax
    import jax.numpy as jnp
    from pgx._src.struct import dataclass

    from polarzoo.envs._common.jax_env import TwinEnv, TwinState, state_at
except ImportError as error:  # pragma: no cover - exercised without the extra
    raise ImportError('the JAX twins need JAX and pgx: pip install "polarzoo[jax]"') from error

import numpy as np

from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe.encoding import OBSERVATION_SHAPE

ENV_ID = "polarzoo/go_with_the_floe"
_SQ = rules.NUM_SQUARES
_PASS = rules.PASS
_NEAR = rules.TARGET[:, :, 0].astype(np.int32)  # (64, 8), -1 off the board
_FAR = rules.TARGET[:, :, 1].astype(np.int32)
_NEAR_OK = _NEAR >= 0
_FAR_OK = _FAR >= 0
_NEAR_IDX = np.where(_NEAR_OK, _NEAR, 0)
_FAR_IDX = np.where(_FAR_OK, _FAR, 0)
_ON_BOARD = rules.ON_BOARD.copy()
_START_BOARD = rules.initial_state().board.astype(np.int8)
# A flood over the 52 ice squares grows by at least one square a round until it stops.
_MAX_FLOOD_ROUNDS = rules.NUM_ON_BOARD + 1


@dataclass
class GameState:
    """The rules' state: ``board`` int8 (64,) (EMPTY / SEAL / BEAR), ``rings`` bool (64,),
    ``to_move`` colour, ``passes`` consecutive passes, ``winner`` colour or -1."""

    board: jax.Array = jnp.asarray(_START_BOARD)
    rings: jax.Array = jnp.zeros(_SQ, dtype=jnp.bool_)
    to_move: jax.Array = jnp.int32(rules.BLACK)
    passes: jax.Array = jnp.int32(0)
    winner: jax.Array = jnp.int32(-1)


@dataclass
class State(TwinState):
    observation: jax.Array = jnp.zeros(OBSERVATION_SHAPE, dtype=jnp.int8)
    legal_action_mask: jax.Array = jnp.zeros(rules.NUM_ACTIONS, dtype=jnp.bool_)
    _x: GameState = GameState()
    title: ClassVar[str] = "Go with the Floe"

    @property
    def env_id(self) -> str:
        return ENV_ID

    def _board_svgs(self) -> list[str]:
        from polarzoo.envs.go_with_the_floe.render import render_svg

        boards = np.asarray(self._x.board).reshape(-1, _SQ)
        rings = np.asarray(self._x.rings).reshape(-1, _SQ)
        return [render_svg(rules.State(board=b.astype(np.int8), rings=r.astype(bool))) for b, r in zip(boards, rings)]


# --------------------------------------------------------------------------------------------
# The rules on one game (vmap for many)
# --------------------------------------------------------------------------------------------
def legal_action_mask(x: GameState) -> jax.Array:
    """bool (1025,): the legal actions of the colour to move (all False once the game is won)."""
    token = jnp.where(x.to_move == rules.BLACK, rules.SEAL, rules.BEAR)
    is_bear = token == rules.BEAR
    near_token = x.board[jnp.asarray(_NEAR_IDX)]  # (64, 8)
    near_ring = x.rings[jnp.asarray(_NEAR_IDX)]
    far_free = ~x.rings[jnp.asarray(_FAR_IDX)] & (x.board[jnp.asarray(_FAR_IDX)] == rules.EMPTY)
    step = jnp.asarray(_NEAR_OK) & ((~near_ring & (near_token == rules.EMPTY)) | (is_bear & (near_token == rules.SEAL)))
    slide = jnp.asarray(_FAR_OK) & far_free & (near_token == rules.EMPTY)
    moves = (jnp.stack([step, slide], axis=-1) & (x.board == token)[:, None, None]).ravel()
    live = x.winner < 0
    return jnp.concatenate([moves & live, (~moves.any() & live)[None]])


# 64-square bitboards as (low, high) uint32 pairs (square sq is bit sq % 32 of word sq // 32):
# the rules' bitboard flood fill without jax_enable_x64.
def _pair(bits: int) -> tuple[np.uint32, np.uint32]:
    return np.uint32(bits & 0xFFFFFFFF), np.uint32(bits >> 32)


_NOT_A = _pair(rules.NOT_FILE_A_BITS)
_NOT_H = _pair(rules.NOT_FILE_H_BITS)
_ON_BOARD_BITS = _pair(rules.ON_BOARD_BITS)
_KING_BITS = np.array([_pair(b) for b in rules.KING_NEIGHBOURS_BITS], dtype=np.uint32)  # (64, 2)
_SHIFTS = np.arange(32, dtype=np.uint32)


def _bits(flags: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A boolean board (64,) as a (low, high) uint32 pair."""
    words = flags.astype(jnp.uint32).reshape(2, 32) << jnp.asarray(_SHIFTS)
    # distinct bits: their sum is their OR
    return words[0].sum(dtype=jnp.uint32), words[1].sum(dtype=jnp.uint32)


def _shl(x, k: int):
    lo, hi = x
    return lo << k, (hi << k) | (lo >> (32 - k))


def _shr(x, k: int):
    lo, hi = x
    return (lo >> k) | (hi << (32 - k)), hi >> k


def _and(*xs):
    lo, hi = xs[0]
    for x in xs[1:]:
        lo, hi = lo & x[0], hi & x[1]
    return lo, hi


def _or(*xs):
    lo, hi = xs[0]
    for x in xs[1:]:
        lo, hi = lo | x[0], hi | x[1]
    return lo, hi


def spread(reach, nodes, rings):
    """One round of the isolation flood: the rules' ``spread_bits`` on (low, high) uint32 pairs
    (``reach`` plus every node one king step or one single-ring jump from it)."""
    a, h = _NOT_A, _NOT_H
    horizontal = _or(reach, _and(_shl(reach, 1), a), _and(_shr(reach, 1), h))
    grown = _or(horizontal, _shl(horizontal, 8), _shr(horizontal, 8))
    grown = _or(grown, _shl(_and(_shl(reach, 8), rings), 8), _shr(_and(_shr(reach, 8), rings), 8))
    grown = _or(grown, _and(_shl(_and(_shl(reach, 1), a, rings), 1), a), _and(_shr(_and(_shr(reach, 1), h, rings), 1), h))
    grown = _or(grown, _and(_shl(_and(_shl(reach, 9), a, rings), 9), a), _and(_shr(_and(_shr(reach, 9), h, rings), 9), h))
    grown = _or(grown, _and(_shl(_and(_shl(reach, 7), h, rings), 7), h), _and(_shr(_and(_shr(reach, 7), a, rings), 7), a))
    return _or(_and(grown, nodes), reach)


def seal_isolated(board: jax.Array, rings: jax.Array, seal_sq: jax.Array) -> jax.Array:
    """Whether the seal on ``seal_sq`` is isolated: no bear can ever reach a square next to it."""
    ring_bits = _bits(rings)
    target = (jnp.asarray(_KING_BITS)[seal_sq, 0], jnp.asarray(_KING_BITS)[seal_sq, 1])
    free = _and(_ON_BOARD_BITS, (~ring_bits[0], ~ring_bits[1]))
    all_ones = jnp.uint32(0xFFFFFFFF)
    without_seal = ~(jnp.uint32(1) << (seal_sq % 32).astype(jnp.uint32))  # the seal's square is no node
    nodes = _and(free, (jnp.where(seal_sq < 32, without_seal, all_ones), jnp.where(seal_sq >= 32, without_seal, all_ones)))
    reach = _and(_bits(board == rules.BEAR), nodes)

    def touches(x):
        return ((x[0] & target[0]) | (x[1] & target[1])) != 0

    def grow(carry):
        reach, _, _, rounds = carry
        grown = spread(reach, nodes, ring_bits)
        return grown, touches(grown), (grown[0] == reach[0]) & (grown[1] == reach[1]), rounds + 1

    def going(carry):
        _, touched, stalled, rounds = carry
        return ~touched & ~stalled & (rounds < _MAX_FLOOD_ROUNDS)

    _, touched, _, _ = jax.lax.while_loop(going, grow, (reach, touches(reach), jnp.bool_(False), 0))
    return ~touched


def decide(board: jax.Array, rings: jax.Array, passes: jax.Array) -> jax.Array:
    """The winner (colour) or -1: the rules' ``_decide_winner``."""
    seals = board == rules.SEAL
    squares = jnp.nonzero(seals, size=2, fill_value=-1)[0]
    isolated = jax.vmap(lambda sq: (sq >= 0) & seal_isolated(board, rings, jnp.maximum(sq, 0)))(squares)
    black = isolated.any() | (passes >= 2)
    return jnp.where(~seals.any(), rules.WHITE, jnp.where(black, rules.BLACK, -1)).astype(jnp.int32)


def play(x: GameState, action: jax.Array) -> GameState:
    """``action`` (legal) played by the colour to move: the rules' ``apply_inplace``."""
    is_pass = action == _PASS
    move = jnp.where(is_pass, 0, action)
    source = move // rules.ACTIONS_PER_SQUARE
    direction = (move % rules.ACTIONS_PER_SQUARE) // 2
    far_move = move % 2 == 1
    near = jnp.asarray(_NEAR_IDX)[source, direction]
    far = jnp.asarray(_FAR_IDX)[source, direction]
    token = x.board[source]
    board = x.board.at[source].set(jnp.int8(rules.EMPTY))
    rings = x.rings.at[source].set(True)
    capture = (x.board[near] == rules.SEAL) & (token == rules.BEAR)
    stepped = board.at[near].set(jnp.where(capture, jnp.int8(rules.EMPTY), token))
    slid = board.at[far].set(token)
    board = jnp.where(far_move, slid, stepped)
    rings = rings.at[near].set(rings[near] | far_move)
    board = jnp.where(is_pass, x.board, board)
    rings = jnp.where(is_pass, x.rings, rings)
    passes = jnp.where(is_pass, x.passes + 1, 0)
    return GameState(
        board=board,
        rings=rings,
        to_move=1 - x.to_move,
        passes=passes,  # type: ignore[call-arg]
        winner=decide(board, rings, passes),
    )


def observation(x: GameState, colour: jax.Array) -> jax.Array:
    """int8 (8, 8, 11): ``go_with_the_floe_v0``'s single-game observation for ``colour`` (the
    kernels' ``write_observation``; the match channels 8-10 are 0)."""
    own = jnp.where(colour == rules.BLACK, rules.SEAL, rules.BEAR)
    other = jnp.where(colour == rules.BLACK, rules.BEAR, rules.SEAL)
    on = jnp.asarray(_ON_BOARD)
    ones = jnp.ones(_SQ, dtype=jnp.bool_)
    zeros = jnp.zeros(_SQ, dtype=jnp.bool_)
    planes = jnp.stack(
        [
            x.board == own,
            x.board == other,
            x.rings,
            on,
            ones & (colour == rules.WHITE),
            ones & ((x.to_move == colour) & (x.winner < 0)),
            on & ~x.rings & (x.board == rules.EMPTY),
            ones & (x.passes > 0),
            zeros,
            zeros,
            zeros,
        ],
        axis=-1,
    )
    return planes.astype(jnp.int8).reshape(OBSERVATION_SHAPE)


def from_rules(state: rules.State, first_player: int = 0) -> State:
    """The twin's state of a readable-rules position (``rules.State``), ``first_player`` the
    player id of Black: search from a PettingZoo game's position (single games)."""
    return _from_arrays(
        np.asarray(state.board, dtype=np.int8),
        np.asarray(state.rings, dtype=bool),
        np.int32(state.to_move),
        np.int32(state.passes),
        np.int32(state.winner),
        np.int32(first_player),
    )


@jax.jit
def _from_arrays(board, rings, to_move, passes, winner, first):
    x = GameState(board=board, rings=rings, to_move=to_move, passes=passes, winner=winner)
    return state_at(State, x, first, legal_action_mask, observation)


# --------------------------------------------------------------------------------------------
# pgx.Env
# --------------------------------------------------------------------------------------------
class GoWithTheFloe(TwinEnv):
    """Go with the Floe (single games) as a ``pgx.Env`` (see the module docstring)."""

    game_play = staticmethod(play)
    game_mask = staticmethod(legal_action_mask)
    game_observation = staticmethod(observation)
    state_class = State
    env_id = ENV_ID

    def _init(self, key: jax.Array) -> State:
        return self._state_at(GameState(), jnp.int32(jax.random.bernoulli(key)))
