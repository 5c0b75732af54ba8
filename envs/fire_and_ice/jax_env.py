"""Fire & Ice in JAX with pgx's API: ``jit`` / ``vmap`` clean, for accelerators.

A twin of the rules in :mod:`polarzoo.envs.fire_and_ice.rules` (the specification) and of the
numba kernels (:mod:`polarzoo.envs.fire_and_ice.kernels`), built from the same tables
(``IS_GEOMETRIC_MOVE``, ``LINE_OWNER``, the powers of three) and tested in lockstep against the
batch core (``tests/test_jax_envs.py``: every state, mask, observation and reward equal).

    import jax, jax.numpy as jnp
    from polarzoo.envs.fire_and_ice.jax_env import FireAndIce

    env = FireAndIce()
    state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 1024))
    state = jax.jit(jax.vmap(env.step))(state, actions)          # actions (1024,) int32

| pgx field | here |
|---|---|
| ``current_player`` | int32 player id 0 / 1; ``init`` draws which player id plays Fire (pgx's convention, so a self-play learner sees both seats); ``state.first_player`` names it |
| ``observation`` | int8 (7, 7, 9), exactly ``fire_and_ice_v0``'s encoding for the player to move (``observe(state, player_id)`` for the other) |
| ``legal_action_mask`` | bool (2402,), the AEC env's mask; all True once terminated (pgx's convention) |
| ``rewards`` | float32 (2,) by player id: +1 / -1 on the step that ends the game |
| ``terminated`` / ``truncated`` | a win ends the game; nothing truncates (the game cannot draw) |

An illegal action ends the game with -1 for the mover and +1 for the other (pgx's rule, the
same as ``fire_and_ice_v0.env()``).  ``FireAndIce(handicap=k)`` places ``k`` pegs of
``handicap_player`` on distinct islands, never on D4, drawn from the ``init`` key.
Needs the optional extra: ``pip install "polarzoo[jax]"``.
"""

from __future__ import annotations

from typing import ClassVar

try:
    import jax
    import jax.numpy as jnp
    import pgx.core as pgx_core
    from pgx._src.struct import dataclass

    from polarzoo.envs._common.jax_env import TwinEnv, TwinState, state_at
except ImportError as error:  # pragma: no cover - exercised without the extra
    raise ImportError('the JAX twins need JAX and pgx: pip install "polarzoo[jax]"') from error

import numpy as np

from polarzoo.envs.fire_and_ice import rules
from polarzoo.envs.fire_and_ice.encoding import OBSERVATION_SHAPE

ENV_ID = "polarzoo/fire_and_ice"
_HOLES = rules.NUM_HOLES
_N = rules.NUM_POSITIONS
_PASS = rules.PASS
# Tables as numpy; jnp.asarray inside the traced functions makes them XLA constants.
_GEOMETRY_U8 = rules.IS_GEOMETRIC_MOVE[: rules.NUM_MOVE_ACTIONS].reshape(_HOLES, _HOLES).astype(np.uint8)
_LOWER_TRIANGLE = np.tril(np.ones((_HOLES, _HOLES), dtype=np.float32))
_LINE_OWNER = rules.LINE_OWNER.astype(np.int32)
_POWERS = rules.POWERS_OF_THREE.astype(np.int32)
_CONTROL_OFFSET = int(_POWERS.sum())
_START_BOARD = rules.initial_state().board.astype(np.int8)
# For a handicap: the holes of each island a handicap peg may take (D4 never) and how many.
_HANDICAP_HOLES = np.array(
    [[i * _N + p if i * _N + p != rules.CENTRE_HOLE else -1 for p in range(_N)] for i in range(rules.NUM_ISLANDS)]
)


@dataclass
class GameState:
    """The rules' state: ``board`` int8 (49,) (``EMPTY`` or colour + 1), ``to_move`` colour,
    ``supply`` int32 (2,) by colour, ``control`` int8 (7,) (-1 none), ``winner`` colour or -1,
    ``moves`` moves made (passes not counted)."""

    board: jax.Array = jnp.asarray(_START_BOARD)
    to_move: jax.Array = jnp.int32(rules.FIRE)
    supply: jax.Array = jnp.int32([rules.PEGS_PER_PLAYER - 1, rules.PEGS_PER_PLAYER])
    control: jax.Array = jnp.full(rules.NUM_ISLANDS, -1, dtype=jnp.int8)
    winner: jax.Array = jnp.int32(-1)
    moves: jax.Array = jnp.int32(0)


@dataclass
class State(TwinState):
    observation: jax.Array = jnp.zeros(OBSERVATION_SHAPE, dtype=jnp.int8)
    legal_action_mask: jax.Array = jnp.zeros(rules.NUM_ACTIONS, dtype=jnp.bool_)
    _x: GameState = GameState()
    title: ClassVar[str] = "Fire & Ice"

    @property
    def env_id(self) -> str:
        return ENV_ID

    def _board_svgs(self) -> list[str]:
        from polarzoo.envs.fire_and_ice.render import render_svg

        return [render_svg(board.astype(np.int8)) for board in np.asarray(self._x.board).reshape(-1, _HOLES)]


# --------------------------------------------------------------------------------------------
# The rules on one game (vmap for many)
# --------------------------------------------------------------------------------------------
def island_control(board: jax.Array) -> jax.Array:
    """int8 (7,): the colour controlling each island of ``board`` (49,), or -1."""
    codes = board.reshape(rules.NUM_ISLANDS, _N).astype(jnp.int32) @ jnp.asarray(_POWERS)
    return jnp.asarray(_LINE_OWNER)[codes].astype(jnp.int8)


def winner_from_control(control: jax.Array) -> jax.Array:
    """int32: the colour whose islands hold an island-line, or -1."""
    return jnp.asarray(_LINE_OWNER)[control.astype(jnp.int32) @ jnp.asarray(_POWERS) + _CONTROL_OFFSET]


def legal_action_mask(x: GameState) -> jax.Array:
    """bool (2402,): the legal actions of the colour to move (all False once the game is won)."""
    live = (x.winner < 0).astype(jnp.uint8)
    own = (x.board == x.to_move + 1).astype(jnp.uint8) * live
    empty = (x.board == rules.EMPTY).astype(jnp.uint8)
    # One 49-entry block per source, concatenated: XLA on a CPU runs a fused (49, 49) outer
    # product + reshape about 4x slower (an index division per entry); uint8, not bool, for speed.
    blocks = [own[source] * empty * jnp.asarray(_GEOMETRY_U8[source]) for source in range(_HOLES)]
    moves = jnp.concatenate(blocks)
    return jnp.concatenate([moves, ((1 - moves.max()) * live)[None]]) > 0


def random_legal_action(key: jax.Array, x: GameState) -> jax.Array:
    """The same draw as ``sample_legal_action(key, legal_action_mask(x))`` (the k-th legal
    action in mask order, ``k = floor(u * count)``) from the board instead of the 2,402-entry
    mask: per-source move counts are one small matmul (the kernels' bitboard sampler)."""
    own = (x.board == x.to_move + 1).astype(jnp.float32)
    empty = (x.board == rules.EMPTY).astype(jnp.float32)
    counts = jnp.asarray(_GEOMETRY_U8, jnp.float32) @ empty * own  # legal moves per source (exact in float32)
    total = counts.sum().astype(jnp.int32)
    k = jnp.minimum(jnp.floor(jax.random.uniform(key) * total).astype(jnp.int32), jnp.maximum(total - 1, 0))
    ends = (jnp.asarray(_LOWER_TRIANGLE) @ counts).astype(jnp.int32)  # running counts: a matmul, not XLA's cumsum
    counts = counts.astype(jnp.int32)
    source = jnp.sum(ends <= k)
    k_in_source = k - (ends[source] - counts[source])
    targets = jnp.asarray(_GEOMETRY_U8, jnp.float32)[source] * empty
    destination = jnp.sum(jnp.asarray(_LOWER_TRIANGLE) @ targets <= k_in_source)
    return jnp.where(total > 0, source * _HOLES + destination, _PASS).astype(jnp.int32)


def play(x: GameState, action: jax.Array) -> GameState:
    """``action`` (legal) played by the colour to move: the rules' ``apply_inplace``."""
    mover = x.to_move
    opponent = 1 - mover
    is_pass = action == _PASS
    source = action // _HOLES
    destination = action % _HOLES
    refill = x.supply[opponent] > 0
    board = x.board.at[destination].set((mover + 1).astype(jnp.int8))
    board = board.at[source].set(jnp.where(refill, opponent + 1, rules.EMPTY).astype(jnp.int8))
    board = jnp.where(is_pass, x.board, board)
    supply = x.supply.at[opponent].add(jnp.where(refill & ~is_pass, -1, 0))
    control = island_control(board)
    winner = jnp.where(is_pass, x.winner, winner_from_control(control))
    return GameState(
        board=board,
        to_move=opponent,
        supply=supply,
        control=control,
        winner=winner,  # type: ignore[call-arg]
        moves=x.moves + jnp.where(is_pass, 0, 1),
    )


def observation(x: GameState, colour: jax.Array) -> jax.Array:
    """int8 (7, 7, 9): ``fire_and_ice_v0``'s observation for ``colour`` (the kernels'
    ``write_observation``)."""
    own = x.board == colour + 1
    other = x.board == 2 - colour
    empty = x.board == rules.EMPTY
    held = jnp.repeat(x.control == colour, _N)
    lost = jnp.repeat(x.control == 1 - colour, _N)
    ones = jnp.ones(_HOLES, dtype=jnp.int8)
    my_turn = ((x.to_move == colour) & (x.winner < 0)).astype(jnp.int8)
    planes = jnp.stack(
        [
            own.astype(jnp.int8),
            other.astype(jnp.int8),
            empty.astype(jnp.int8),
            held.astype(jnp.int8),
            lost.astype(jnp.int8),
            ones * my_turn,
            ones * (colour == rules.FIRE).astype(jnp.int8),
            ones * x.supply[colour].astype(jnp.int8),
            ones * x.supply[1 - colour].astype(jnp.int8),
        ],
        axis=-1,
    )
    return planes.reshape(OBSERVATION_SHAPE)


def initial_game(key: jax.Array, handicap: int = 0, handicap_player: int = rules.ICE) -> GameState:
    """The starting position, with ``handicap`` pegs drawn from ``key`` (distinct islands, never D4)."""
    x = GameState()
    if handicap == 0:
        return x
    island_key, hole_key = jax.random.split(key)
    islands = jax.random.permutation(island_key, rules.NUM_ISLANDS)[:handicap]
    choices = jnp.asarray(_HANDICAP_HOLES)[islands]  # (handicap, 7), -1 for D4
    logits = jnp.where(choices >= 0, 0.0, -jnp.inf)
    picks = jax.random.categorical(hole_key, logits, axis=-1)
    holes = jnp.take_along_axis(choices, picks[:, None], axis=1)[:, 0]
    board = x.board.at[holes].set(jnp.int8(handicap_player + 1))
    supply = x.supply.at[handicap_player].add(-handicap)
    return x.replace(board=board, supply=supply, control=island_control(board))  # type: ignore[attr-defined]


def from_rules(state: rules.State, first_player: int = 0) -> State:
    """The twin's state of a readable-rules position (``rules.State``), ``first_player`` the
    player id of Fire: search from a PettingZoo game's position (``env.unwrapped.state``)."""
    return _from_arrays(
        np.asarray(state.board, dtype=np.int8),
        np.int32(state.to_move),
        np.asarray(state.supply, dtype=np.int32),
        np.int32(state.winner),
        np.int32(state.moves_made),
        np.int32(first_player),
    )


@jax.jit
def _from_arrays(board, to_move, supply, winner, moves, first):
    x = GameState(board=board, to_move=to_move, supply=supply, control=island_control(board), winner=winner, moves=moves)
    return state_at(State, x, first, legal_action_mask, observation)


# --------------------------------------------------------------------------------------------
# pgx.Env
# --------------------------------------------------------------------------------------------
class FireAndIce(TwinEnv):
    """Fire & Ice as a ``pgx.Env`` (see the module docstring).

    Args:
        handicap: 0..6 pegs of ``handicap_player`` placed before play (drawn from the key).
        handicap_player: ``"ice"`` or ``"fire"`` (or the colour 1 / 0).
    """

    game_play = staticmethod(play)
    game_mask = staticmethod(legal_action_mask)
    game_observation = staticmethod(observation)
    state_class = State
    env_id = ENV_ID

    def __init__(self, handicap: int = 0, handicap_player: str | int = "ice") -> None:
        super().__init__()
        if (
            isinstance(handicap, bool)
            or not isinstance(handicap, (int, np.integer))
            or not 0 <= handicap <= rules.NUM_ISLANDS - 1
        ):
            raise ValueError(f"handicap must be an integer 0..{rules.NUM_ISLANDS - 1}; got {handicap!r}")
        names = {"fire": rules.FIRE, "ice": rules.ICE, rules.FIRE: rules.FIRE, rules.ICE: rules.ICE}
        if isinstance(handicap_player, bool) or handicap_player not in names:
            raise ValueError(f"handicap_player must be 'ice' or 'fire'; got {handicap_player!r}")
        self.handicap = int(handicap)
        self.handicap_player = names[handicap_player]

    def _init(self, key: jax.Array) -> State:
        seat_key, board_key = jax.random.split(key)
        first_player = jnp.int32(jax.random.bernoulli(seat_key))
        return self._state_at(initial_game(board_key, self.handicap, self.handicap_player), first_player)

    def random_action(self, state: pgx_core.State, key: jax.Array) -> jax.Array:
        """A uniformly random legal action (:func:`random_legal_action`; 0 once the game is over)."""
        assert isinstance(state, State)
        return jnp.where(state.terminated, 0, random_legal_action(key, state._x))
