"""Compiled (numba) pieces shared by the games' batch kernels: the per-game bookkeeping of a
batch step (flags, winner, rewards), so each game's ``step_games`` only plays its own rules."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def clear_step(g, out):
    """Game ``g`` did not act or did not end this step (so far); ``out``: a step kernel's outputs
    ``(observation, mask, final_observation, rewards, terminated, winner, mover)``."""
    rewards, terminated, winner_out, mover_out = out[3], out[4], out[5], out[6]
    terminated[g] = False
    winner_out[g] = -1
    mover_out[g] = -1
    rewards[g, 0] = 0.0
    rewards[g, 1] = 0.0


@njit(cache=True, nogil=True)
def record_end(g, winner, out):
    """Game ``g`` just ended with ``winner``: +1 / -1 to the two colours."""
    rewards, terminated, winner_out = out[3], out[4], out[5]
    terminated[g] = True
    winner_out[g] = winner
    rewards[g, winner] = 1.0
    rewards[g, 1 - winner] = -1.0
