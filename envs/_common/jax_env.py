"""The part of the JAX twins that both games share: a ``pgx.Env`` base whose ``step`` has pgx's
semantics exactly, written as one pass of ``jnp.where`` per field instead of pgx's three
``lax.cond`` (under ``vmap`` each ``cond`` becomes a select over the whole state, mask
included: most of a step's time on a CPU).

pgx's rules, kept here: a step on a finished game returns it with zero rewards; an illegal
action is played, then ends the game with -1 for the mover and +1 for the other; once a game is
over every action is marked legal; the observation is the new player-to-move's.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pgx.core as pgx_core
from pgx._src.struct import dataclass


@dataclass
class TwinState(pgx_core.State):
    """What both twins' ``State`` classes share: pgx's fields with their game-free defaults, the
    player id of colour 0 and the game's own state ``_x``.  A twin's ``State`` gives the
    observation, the mask and ``_x`` their defaults, and draws its boards (``_board_svgs``)."""

    current_player: jax.Array = jnp.int32(0)
    observation: jax.Array = jnp.zeros(0, dtype=jnp.int8)
    rewards: jax.Array = jnp.float32([0.0, 0.0])
    terminated: jax.Array = jnp.bool_(False)
    truncated: jax.Array = jnp.bool_(False)
    legal_action_mask: jax.Array = jnp.zeros(0, dtype=jnp.bool_)
    _step_count: jax.Array = jnp.int32(0)
    _first_player: jax.Array = jnp.int32(0)
    _x: Any = None

    #: the game's name over its pictures
    title: ClassVar[str] = ""

    @property
    def first_player(self) -> jax.Array:
        """The player id of colour 0 (Fire / Black, the first to move); colour c is player
        ``first_player ^ c``."""
        return self._first_player

    def _board_svgs(self) -> list[str]:
        """One SVG picture per game of this (possibly batched) state."""
        raise NotImplementedError

    def to_svg(self, *, color_theme: str | None = None, scale: float | None = None) -> str:
        """The board(s) as SVG, the single env's picture (``render_svg``; pgx's visualiser knows
        only pgx's games); a batched state: one board per game, four in a row."""
        from polarzoo.envs._common.jax_svg import boards_svg

        return boards_svg(self._board_svgs(), self.title, scale or 1.0)

    def save_svg(self, filename: str, *, color_theme: str | None = None, scale: float | None = None) -> None:
        """``to_svg`` into ``filename`` (pgx's ``save_svg``)."""
        from pathlib import Path

        Path(filename).write_text(self.to_svg(scale=scale))


def state_at(state_class: type[TwinState], x: Any, first_player: jax.Array, mask: Any, observe: Any) -> Any:
    """The twin's ``state_class`` at the game state ``x`` (``winner`` and ``to_move`` colours),
    colour 0 played by ``first_player``; ``mask(x)`` and ``observe(x, colour)`` are the game's
    (a finished game's mask all True, pgx's convention)."""
    terminated = x.winner >= 0
    state = state_class(
        current_player=first_player ^ x.to_move,
        legal_action_mask=mask(x) | terminated,
        terminated=terminated,
        _first_player=first_player,
        _x=x,
    )
    return state.replace(observation=observe(x, x.to_move))


class TwinEnv(pgx_core.Env):
    """Two-player turn-based twins: a subclass implements ``_init`` and names its game's pure
    functions ``game_play(x, action)``, ``game_mask(x)`` and ``game_observation(x, colour)``
    (``x``: the game state with ``winner`` and ``to_move`` colours); the pgx hooks are here."""

    game_play: Any
    game_mask: Any
    game_observation: Any
    #: the twin's ``State`` (a :class:`TwinState`) and its pgx id
    state_class: type[TwinState]
    env_id: str

    def _state_at(self, x: Any, first_player: jax.Array) -> pgx_core.State:
        """The twin's state at the game state ``x``, colour 0 played by ``first_player``."""
        cls = type(self)
        return state_at(cls.state_class, x, first_player, cls.game_mask, cls.game_observation)

    def _step(self, state: pgx_core.State, action: jax.Array, key: jax.Array | None) -> pgx_core.State:
        del key
        x = type(self).game_play(state._x, action)
        terminated = x.winner >= 0
        # +1 to the winner's player id, -1 to the other: colour c is player first_player XOR c.
        winner_player = state._first_player ^ x.winner
        rewards = jnp.where(jnp.arange(2) == winner_player, 1.0, -1.0).astype(jnp.float32)
        rewards = jnp.where(terminated, rewards, jnp.zeros(2, jnp.float32))
        return state.replace(
            current_player=state._first_player ^ x.to_move,
            legal_action_mask=type(self).game_mask(x),
            rewards=rewards,
            terminated=terminated,
            _x=x,
        )

    def _observe(self, state: pgx_core.State, player_id: jax.Array) -> jax.Array:
        return type(self).game_observation(state._x, state._first_player ^ player_id)

    def step(self, state: pgx_core.State, action: jax.Array, key: jax.Array | None = None) -> pgx_core.State:
        """pgx's ``Env.step`` (same results, one select per field).  ``action`` must be of an integer
        dtype (``TypeError`` for a float or a bool: ``3.7`` is not move 3)."""
        action = jnp.asarray(action)
        if action.dtype == jnp.bool_ or not jnp.issubdtype(action.dtype, jnp.integer):
            raise TypeError(f"{self.id}: an action is an integer, got dtype {action.dtype}")
        action = action.astype(jnp.int32)
        over = state.terminated | state.truncated
        illegal = ~state.legal_action_mask[action]
        mover = state.current_player
        played = self._step(state.replace(_step_count=state._step_count + 1), action, key)
        penalty = jnp.where(jnp.arange(2) == mover, -1.0, 1.0).astype(jnp.float32)
        rewards = jnp.where(illegal, penalty, played.rewards)
        terminated = played.terminated | illegal
        mask = played.legal_action_mask | terminated
        new = played.replace(rewards=rewards, terminated=terminated, legal_action_mask=mask)
        old = state.replace(rewards=jnp.zeros_like(state.rewards))
        out = jax.tree.map(lambda a, b: jnp.where(over, a, b), old, new)
        return out.replace(observation=self.observe(out))

    def observe(self, state: pgx_core.State, player_id: jax.Array | None = None) -> jax.Array:
        """The observation of ``player_id`` (default: the player to move): 0 or 1, an integer
        (``ValueError`` / ``TypeError`` otherwise, where the value is known at trace time)."""
        if player_id is None:
            player_id = state.current_player
        else:
            _check_player(self.id, player_id)
        return jax.lax.stop_gradient(self._observe(state, player_id))

    def random_action(self, state: pgx_core.State, key: jax.Array) -> jax.Array:
        """A uniformly random legal action of one game (:func:`sample_legal_action` of its mask;
        a twin may compute the same draw faster from its state)."""
        return sample_legal_action(key, state.legal_action_mask)

    @property
    def id(self) -> str:
        return self.env_id

    @property
    def version(self) -> str:
        return "v0"

    @property
    def num_players(self) -> int:
        return 2


def _check_player(env_id: str, player_id: Any) -> None:
    value = player_id if isinstance(player_id, jax.core.Tracer) else np.asarray(player_id)
    if value.dtype == np.bool_ or not np.issubdtype(value.dtype, np.integer):
        raise TypeError(f"{env_id}: player_id is an integer (0 or 1), got {player_id!r}")
    if not isinstance(value, jax.core.Tracer) and not np.all((value >= 0) & (value < 2)):
        raise ValueError(f"{env_id}: player_id must be 0 or 1 (two players), got {player_id!r}")


_BLOCK = 64
_LOWER_TRIANGLE = np.tril(np.ones((_BLOCK, _BLOCK), dtype=np.float32))


def sample_legal_action(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly random legal action of one game (``mask`` (A,) bool; 0 when none is legal):
    the k-th legal action in mask order with ``k = floor(u * count)`` for one uniform ``u``,
    the batch cores' draw.  Counted in 64-entry blocks: XLA on a CPU is slow at a cumulative
    sum over the whole mask (quadratic work) and at reductions over bool, so the blocks are
    uint8, materialised once, and the running count inside the chosen block is a small matmul."""
    n = mask.shape[-1]
    blocks = -(-n // _BLOCK)
    padded = jnp.concatenate([mask.astype(jnp.uint8), jnp.zeros(blocks * _BLOCK - n, jnp.uint8)])
    padded = jax.lax.optimization_barrier(padded.reshape(blocks, _BLOCK))
    counts = padded.sum(-1, dtype=jnp.uint8).astype(jnp.int32)
    total = counts.sum()
    k = jnp.minimum(jnp.floor(jax.random.uniform(key) * total).astype(jnp.int32), jnp.maximum(total - 1, 0))
    ends = jnp.cumsum(counts)
    block = jnp.sum(ends <= k)
    k_in_block = k - (ends[block] - counts[block])
    row = jax.lax.dynamic_index_in_dim(padded, block, 0, keepdims=False).astype(jnp.float32)
    within = jnp.sum(jnp.asarray(_LOWER_TRIANGLE) @ row <= k_in_block)
    return jnp.where(total > 0, block * _BLOCK + within, 0).astype(jnp.int32)
