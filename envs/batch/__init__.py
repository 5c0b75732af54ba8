"""Batched numpy rules cores: B games stepped at once, no per-game Python loop in the hot path.

* :class:`~polarzoo.envs.batch.fire_and_ice.FireAndIceBatch`
* :class:`~polarzoo.envs.batch.go_with_the_floe.GoWithTheFloeBatch`

Both agree exactly with the single-game rules cores (lockstep tests in
``tests/test_batch.py``) and expose the same observation and mask layouts as the AEC envs,
seen by the player to move.
"""

from polarzoo.envs.batch.core import BatchCore, BatchStep, sample_legal_actions
from polarzoo.envs.batch.fire_and_ice import FireAndIceBatch
from polarzoo.envs.batch.go_with_the_floe import GoWithTheFloeBatch

BATCH_CORES = {"fire_and_ice_v0": FireAndIceBatch, "go_with_the_floe_v0": GoWithTheFloeBatch}

__all__ = ["BATCH_CORES", "BatchCore", "BatchStep", "sample_legal_actions", "FireAndIceBatch", "GoWithTheFloeBatch"]
