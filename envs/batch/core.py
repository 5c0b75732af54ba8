"""The shared step logic of the batch cores (validation, automatic reset, results)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


def sample_legal_actions(mask: NDArray[np.int8], rng: np.random.Generator) -> NDArray[np.int64]:
    """One uniformly random legal action per row of ``mask`` (0 for a row with none)."""
    rows, columns = np.nonzero(mask)  # row-major: each row's legal actions are contiguous
    counts = np.bincount(rows, minlength=len(mask))
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    picks = starts + (rng.random(len(mask)) * np.maximum(counts, 1)).astype(np.int64)
    if columns.size == 0:
        return np.zeros(len(mask), dtype=np.int64)
    return np.where(counts > 0, columns[np.minimum(picks, columns.size - 1)], 0).astype(np.int64)


@dataclass
class BatchStep:
    """Result of :meth:`BatchCore.step` (arrays over the B games).

    ``observation`` and ``action_mask`` are for the player to move *after* the automatic reset
    of finished games; ``final_observation`` is the finished game's last position seen by the
    player who made the final move, or by the ``observer`` given to ``step`` (rows of games that
    did not end hold zeros).
    """

    observation: NDArray
    action_mask: NDArray[np.int8]
    rewards: NDArray[np.float32]  # (B, 2) per colour
    terminated: NDArray[np.bool_]
    winner: NDArray[np.int8]  # the finished game's winner colour, -1 where none ended
    mover: NDArray[np.int8]  # colour that acted in each game this step (-1 if inactive)
    final_observation: NDArray


class BatchCore:
    """B independent games.  Subclasses implement the game-specific array operations."""

    num_actions: int
    observation_shape: tuple[int, ...]

    def __init__(self, batch_size: int, seed: int | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}")
        self.batch_size = int(batch_size)
        self.rng = np.random.default_rng(seed)
        self._all = np.arange(self.batch_size)
        self.reset()

    # ---- hooks ------------------------------------------------------------------------------
    def _reset_rows(self, rows: NDArray[np.intp]) -> None:
        raise NotImplementedError

    def legal_action_mask(self) -> NDArray[np.int8]:
        raise NotImplementedError

    def _apply(self, rows: NDArray[np.intp], actions: NDArray[np.int64]) -> None:
        raise NotImplementedError

    def observe(self, colours: NDArray[np.int8] | None = None) -> NDArray:
        raise NotImplementedError

    to_move: NDArray[np.int8]
    winner: NDArray[np.int8]

    # ---- API --------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> tuple[NDArray, NDArray[np.int8]]:
        """Start all B games; returns (observations, masks) for the players to move."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._reset_rows(self._all)
        self._mask = self.legal_action_mask()
        return self.observe(), self._mask.copy()

    @property
    def mask(self) -> NDArray[np.int8]:
        return self._mask

    def step(
        self, actions: NDArray, active: NDArray[np.bool_] | None = None, auto_reset: bool = True,
        observer: NDArray[np.int8] | None = None,
    ) -> BatchStep:
        """Play ``actions[i]`` in every game ``i`` (only where ``active``); finished games restart.

        ``final_observation`` of a finished game is seen by ``observer[i]`` (default: the mover).
        """
        actions = np.asarray(actions)
        if actions.shape != (self.batch_size,) or not np.issubdtype(actions.dtype, np.integer):
            raise TypeError(f"actions must be an integer array of shape ({self.batch_size},); got {actions.dtype} {actions.shape}")
        rows = self._all if active is None else np.flatnonzero(self._check_active(active))
        if observer is not None:
            observer = np.asarray(observer)
            if observer.shape != (self.batch_size,) or not np.issubdtype(observer.dtype, np.integer) \
                    or ((observer < 0) | (observer > 1)).any():
                raise ValueError(f"observer must be an integer array of colours 0/1 with shape ({self.batch_size},); "
                                 f"got {observer.dtype} {observer.shape} {observer[:8].tolist() if observer.ndim else observer}")
        chosen = actions[rows].astype(np.int64)
        if ((chosen < 0) | (chosen >= self.num_actions)).any() or not self._mask[rows, chosen].all():
            bad = rows[(chosen < 0) | (chosen >= self.num_actions) | ~self._mask[rows, np.clip(chosen, 0, self.num_actions - 1)].astype(bool)]
            raise ValueError(f"illegal actions in games {bad[:10].tolist()}: {actions[bad[:10]].tolist()}")
        mover = np.full(self.batch_size, -1, dtype=np.int8)
        mover[rows] = self.to_move[rows]
        self._apply(rows, chosen)
        terminated = np.zeros(self.batch_size, dtype=bool)
        terminated[rows] = self.winner[rows] >= 0
        winner = np.where(terminated, self.winner, -1).astype(np.int8)
        rewards = np.zeros((self.batch_size, 2), dtype=np.float32)
        done = np.flatnonzero(terminated)
        rewards[done, winner[done]] = 1.0
        rewards[done, 1 - winner[done]] = -1.0
        final = np.zeros((self.batch_size, *self.observation_shape), dtype=self._observation_dtype)
        if done.size:
            final[done] = self.observe(mover if observer is None else np.asarray(observer, dtype=np.int8))[done]
            if auto_reset:
                self._reset_rows(done)
        self._mask = self.legal_action_mask()
        return BatchStep(self.observe(), self._mask.copy(), rewards, terminated, winner, mover, final)

    _observation_dtype = np.int8

    def _check_active(self, active: NDArray) -> NDArray[np.bool_]:
        """``active`` must be a boolean mask of the B games (a list of indices is a common slip)."""
        active = np.asarray(active)
        if active.dtype != np.bool_ or active.shape != (self.batch_size,):
            raise ValueError(f"active must be a boolean array of shape ({self.batch_size},); got {active.dtype} {active.shape}"
                             " (to pick games by index, build a mask: m = np.zeros(B, bool); m[indices] = True)")
        return active

    def potential(self, colours: NDArray[np.int8]) -> NDArray[np.float32]:
        """A heuristic value of each game for ``colours`` in [-1, 1] (for reward shaping); 0 by default."""
        return np.zeros(self.batch_size, dtype=np.float32)

    def nbytes_per_game(self) -> float:
        """Bytes of game state held per game (the arrays of the state, not masks or buffers)."""
        return sum(getattr(self, name).nbytes for name in self.state_arrays) / self.batch_size

    state_arrays: tuple[str, ...] = ()
