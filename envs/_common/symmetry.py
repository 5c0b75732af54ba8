"""What every game's symmetry module shares: applying a permutation of actions."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def permute_actions(values: NDArray, action_map: NDArray[np.intp]) -> NDArray:
    """``values[..., a]`` moved to ``[..., action_map[a]]`` (a mask, logits, visit counts)."""
    out = np.empty_like(values)
    out[..., action_map] = values
    return out
