"""``benchmarks.floe_white``: the policy helped by the endgame search in batched games (the search
itself is tested in test_floe_search.py)."""

from __future__ import annotations

import numpy as np
import pytest

floe_white = pytest.importorskip("benchmarks.floe_white")  # the repository's benchmarks/, run from its root


class _IllegalPolicy:
    """Answers action 0 (A1, off the board: never legal) for every game."""

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.zeros(len(masks), dtype=np.int64)


def test_heuristic_first_phase_plays_every_white_move_and_repeats() -> None:
    from polarzoo.envs.batch import GoWithTheFloeBatch

    # The batch core raises on an illegal action, so finishing means no policy move was played.
    results = [
        floe_white.play_with_search(_IllegalPolicy(), GoWithTheFloeBatch(6), np.random.default_rng(5), 1, "heuristic")
        for _ in range(2)
    ]
    assert results[0].dtype == bool and results[0].shape == (6,)
    np.testing.assert_array_equal(results[0], results[1])
    with pytest.raises(ValueError, match="first_phase"):
        floe_white.play_with_search(_IllegalPolicy(), GoWithTheFloeBatch(1), np.random.default_rng(0), 1, "greedy")
    with pytest.raises(ValueError, match="illegal actions"):  # the policy's first phase does play the policy
        floe_white.play_with_search(_IllegalPolicy(), GoWithTheFloeBatch(1), np.random.default_rng(0), 1, "policy")
