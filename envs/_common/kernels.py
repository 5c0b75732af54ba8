"""Compiled (numba) pieces shared by the games' batch kernels: the per-game bookkeeping of a
batch step (flags, winner, rewards), so each game's ``step_games`` only plays its own rules."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def clear_step(g, terminated, winner_out, mover_out, rewards):
    """Game ``g`` did not act or did not end this step (so far)."""
    terminated[g] = False
    winner_out[g] = -1
    mover_out[g] = -1
    rewards[g, 0] = 0.0
    rewards[g, 1] = 0.0


@njit(cache=True, nogil=True)
def record_end(g, winner, terminated, winner_out, rewards):
    """Game ``g`` just ended with ``winner``: +1 / -1 to the two colours."""
    terminated[g] = True
    winner_out[g] = winner
    rewards[g, winner] = 1.0
    rewards[g, 1 - winner] = -1.0
