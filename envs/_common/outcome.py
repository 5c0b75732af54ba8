"""Outcome helpers shared by the two-player rules cores (pure numpy)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def zero_sum_returns(winner: int) -> NDArray[np.float32]:
    """Per-colour returns of a two-player game: +1 for ``winner``, -1 for the other, zeros if -1."""
    result = np.zeros(2, dtype=np.float32)
    if winner >= 0:
        result[winner] = 1.0
        result[1 - winner] = -1.0
    return result
