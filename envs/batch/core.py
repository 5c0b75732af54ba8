"""The shared step logic of the batch cores: validation, then one compiled kernel pass.

Each game supplies a kernels module (``polarzoo.envs.<game>.kernels``) with ``reset_games``,
``observe_games``, ``mask_games`` and ``step_games`` over its state arrays; this class checks
every input first (so a bad call changes nothing) and hands out fresh result arrays each step.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

_BLOCK = 64


@njit(cache=True, nogil=True)
def _sample_rows(mask, uniforms, out):
    # Count the legal entries of each 64-byte block (a pass the compiler vectorises), pick the
    # k-th legal entry with k = floor(u * count), walk to its block, then inside it.
    n = mask.shape[1]
    blocks = (n + _BLOCK - 1) // _BLOCK
    counts = np.zeros(blocks, dtype=np.int64)
    for g in range(mask.shape[0]):
        row = mask[g]
        total = 0
        for b in range(blocks):
            start = b * _BLOCK
            stop = min(start + _BLOCK, n)
            c = 0
            for a in range(start, stop):
                c += row[a] != 0
            counts[b] = c
            total += c
        out[g] = 0
        if total == 0:
            continue
        k = min(int(uniforms[g] * total), total - 1)
        b = 0
        while k >= counts[b]:
            k -= counts[b]
            b += 1
        for a in range(b * _BLOCK, min(b * _BLOCK + _BLOCK, n)):
            if row[a] != 0:
                if k == 0:
                    out[g] = a
                    break
                k -= 1


def sample_legal_actions(mask: NDArray[np.int8], rng: np.random.Generator) -> NDArray[np.int64]:
    """One uniformly random legal action per row of ``mask`` (0 for a row with none), compiled:
    one uniform draw from ``rng`` per row, then the k-th legal entry."""
    mask = np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D (games, actions); got shape {mask.shape}")
    if mask.dtype == np.bool_:
        mask = mask.view(np.int8)
    out = np.empty(len(mask), dtype=np.int64)
    _sample_rows(np.ascontiguousarray(mask), rng.random(len(mask)), out)
    return out


@njit(cache=True, nogil=True)
def _first_illegal(actions, active, mask):
    n = mask.shape[1]
    for g in range(actions.shape[0]):
        if active[g]:
            a = actions[g]
            if a < 0 or a >= n or mask[g, a] == 0:
                return g
    return -1


@dataclass
class BatchStep:
    """Result of :meth:`BatchCore.step` (arrays over the B games, fresh each step).

    ``observation`` and ``action_mask`` are for the player to move *after* the automatic reset
    of finished games; ``final_observation`` is the finished game's last position seen by the
    player who made the final move, or by the ``observer`` given to ``step`` (rows of games that
    did not end hold zeros).  ``action_mask`` is read-only: the core checks the next actions
    against it.
    """

    observation: NDArray
    action_mask: NDArray[np.int8]
    rewards: NDArray[np.float32]  # (B, 2) per colour
    terminated: NDArray[np.bool_]
    winner: NDArray[np.int8]  # the finished game's winner colour, -1 where none ended
    mover: NDArray[np.int8]  # colour that acted in each game this step (-1 if inactive)
    final_observation: NDArray


class BatchCore:
    """B independent games stepped by a game's compiled kernels (subclasses name them)."""

    num_actions: int
    observation_shape: tuple[int, ...]
    kernels: ModuleType
    #: name -> (shape after B, dtype) of the state arrays, in the kernels' argument order
    state_layout: dict[str, tuple[tuple[int, ...], Any]]

    def __init__(self, batch_size: int, seed: int | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}")
        self.batch_size = int(batch_size)
        self.rng = np.random.default_rng(seed)
        self._all = np.arange(self.batch_size)
        for name, (shape, dtype) in self.state_layout.items():
            setattr(self, name, np.zeros((self.batch_size, *shape), dtype=dtype))
        self._observation_size = int(np.prod(self.observation_shape))
        self._no_observer = np.full(self.batch_size, -1, dtype=np.int8)
        self._everyone = np.ones(self.batch_size, dtype=bool)
        self.reset()

    @property
    def state(self) -> tuple[NDArray, ...]:
        """The state arrays, in the kernels' argument order."""
        return tuple(getattr(self, name) for name in self.state_layout)

    @property
    def state_arrays(self) -> tuple[str, ...]:
        return tuple(self.state_layout)

    # ---- API --------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> tuple[NDArray, NDArray[np.int8]]:
        """Start all B games; returns (observations, masks) for the players to move."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.kernels.reset_games(*self.state, self._all)
        self._mask = self._masks()
        return self.observe(), self._mask

    def set_state(self, **arrays: Any) -> None:
        """Overwrite state arrays by name (see :attr:`state_arrays`; each value is broadcast to
        ``(B, ...)``) and recompute the masks: start the games from given positions (analysis,
        curricula).  The positions must be reachable ones; nothing beyond shapes is checked."""
        unknown = sorted(set(arrays) - set(self.state_layout))
        if unknown:
            raise ValueError(f"unknown state arrays {unknown}; this core has {list(self.state_layout)}")
        for name, value in arrays.items():
            target = getattr(self, name)
            try:
                target[...] = np.broadcast_to(np.asarray(value), target.shape)
            except ValueError:
                raise ValueError(
                    f"{name}: expected shape {target.shape} or one that broadcasts to it; got {np.shape(value)}"
                ) from None
        self._mask = self._masks()

    @property
    def mask(self) -> NDArray[np.int8]:
        """The legal-action masks of the players to move (read-only)."""
        return self._mask

    def legal_action_mask(self) -> NDArray[np.int8]:
        return self._mask.copy()

    def sample_actions(self, rng: np.random.Generator) -> NDArray[np.int64]:
        """A uniformly random legal action per game; the same draw as
        ``sample_legal_actions(self.mask, rng)`` (cores may compute it from their state)."""
        return sample_legal_actions(self._mask, rng)

    def _masks(self) -> NDArray[np.int8]:
        mask = np.empty((self.batch_size, self.num_actions), dtype=np.int8)
        self.kernels.mask_games(*self._mask_state(), mask)
        mask.flags.writeable = False
        return mask

    def _mask_state(self) -> tuple[NDArray, ...]:
        raise NotImplementedError

    def _observe_state(self) -> tuple[NDArray, ...]:
        raise NotImplementedError

    def observe(self, colours: NDArray[np.int8] | None = None) -> NDArray[np.int8]:
        """Observations of every game seen by ``colours`` (default, or -1: the player to move)."""
        colours = self._no_observer if colours is None else self._check_colours("colours", colours, allow_none=True)
        out = np.empty((self.batch_size, self._observation_size), dtype=np.int8)
        self.kernels.observe_games(*self._observe_state(), colours, out)
        return out.reshape(self.batch_size, *self.observation_shape)

    def step(
        self,
        actions: NDArray,
        active: NDArray[np.bool_] | None = None,
        auto_reset: bool = True,
        observer: NDArray[np.int8] | None = None,
    ) -> BatchStep:
        """Play ``actions[i]`` in every game ``i`` (only where ``active``); finished games restart.

        ``final_observation`` of a finished game is seen by ``observer[i]`` (default: the mover).
        Every argument is checked before anything changes.
        """
        b = self.batch_size
        actions = np.asarray(actions)
        if actions.shape != (b,) or not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must be an integer array of shape ({b},); got {actions.dtype} {actions.shape}")
        actions = actions.astype(np.int64, copy=False)
        active = self._everyone if active is None else self._check_active(active)
        observer = self._no_observer if observer is None else self._check_colours("observer", observer)
        bad = _first_illegal(actions, active, self._mask)
        if bad >= 0:
            legal = (actions >= 0) & (actions < self.num_actions)
            ok = legal.copy()
            ok[legal] = self._mask[np.flatnonzero(legal), actions[legal]] != 0
            games = np.flatnonzero(active & ~ok)
            raise ValueError(f"illegal actions in games {games[:10].tolist()}: {actions[games[:10]].tolist()}")
        observation = np.empty((b, self._observation_size), dtype=np.int8)
        mask = np.empty((b, self.num_actions), dtype=np.int8)
        final = np.empty((b, self._observation_size), dtype=np.int8)
        rewards = np.empty((b, 2), dtype=np.float32)
        terminated = np.empty(b, dtype=bool)
        winner = np.empty(b, dtype=np.int8)
        mover = np.empty(b, dtype=np.int8)
        out = (observation, mask, final, rewards, terminated, winner, mover)
        self.kernels.step_games(*self.state, actions, active, bool(auto_reset), observer, out)
        mask.flags.writeable = False
        self._mask = mask
        shape = (b, *self.observation_shape)
        return BatchStep(observation.reshape(shape), mask, rewards, terminated, winner, mover, final.reshape(shape))

    def _check_active(self, active: Any) -> NDArray[np.bool_]:
        """``active`` must be a boolean mask of the B games (a list of indices is a common slip)."""
        active = np.asarray(active)
        if active.dtype != np.bool_ or active.shape != (self.batch_size,):
            raise ValueError(
                f"active must be a boolean array of shape ({self.batch_size},); got {active.dtype} {active.shape}"
                " (to pick games by index, build a mask: m = np.zeros(B, bool); m[indices] = True)"
            )
        return np.ascontiguousarray(active)

    def _check_colours(self, name: str, colours: Any, allow_none: bool = False) -> NDArray[np.int8]:
        colours = np.asarray(colours)
        low = -1 if allow_none else 0
        if (
            colours.shape != (self.batch_size,)
            or not np.issubdtype(colours.dtype, np.integer)
            or ((colours < low) | (colours > 1)).any()
        ):
            allowed = "-1 (the player to move), 0 or 1" if allow_none else "0/1"
            shown = colours[:8].tolist() if colours.ndim else colours.tolist()
            raise ValueError(
                f"{name} must be an integer array of colours {allowed} with shape ({self.batch_size},); "
                f"got {colours.dtype} {colours.shape} {shown}"
            )
        return colours.astype(np.int8)

    def potential(self, colours: NDArray[np.int8]) -> NDArray[np.float32]:
        """A heuristic value of each game for ``colours`` in [-1, 1] (for reward shaping); 0 by default."""
        return np.zeros(self.batch_size, dtype=np.float32)

    def nbytes_per_game(self) -> float:
        """Bytes of game state held per game (the arrays of the state, not masks or buffers)."""
        return sum(array.nbytes for array in self.state) / self.batch_size

    def nbytes_written_per_game_step(self) -> int:
        """Bytes a step writes per game into the arrays it returns (observation, mask, final
        observation, rewards, flags) plus the state arrays."""
        return 2 * self._observation_size + self.num_actions + 8 + 3 + int(self.nbytes_per_game())
