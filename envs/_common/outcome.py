"""Outcome helpers shared by the rules cores and what measures them (pure numpy)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray


def zero_sum_returns(winner: int) -> NDArray[np.float32]:
    """Per-colour returns of a two-player game: +1 for ``winner``, -1 for the other, zeros if -1."""
    result = np.zeros(2, dtype=np.float32)
    if winner >= 0:
        result[winner] = 1.0
        result[1 - winner] = -1.0
    return result


def wilson_interval(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (``(0, 1)`` for no trials)."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))
