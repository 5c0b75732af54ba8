"""Batch cores: B games stepped at once by compiled (numba) kernels, one pass per game per step.

* :class:`~polarzoo.envs.batch.fire_and_ice.FireAndIceBatch`
* :class:`~polarzoo.envs.batch.go_with_the_floe.GoWithTheFloeBatch`

The kernels live beside each game's rules (``polarzoo.envs.<game>.kernels``; the single envs
use the same ones for their masks and observations) and agree exactly with the readable rules
and the numpy encodings (lockstep tests in ``tests/test_batch.py``).  Observations and masks
have the AEC envs' layouts, seen by the player to move.  Compiled code is cached on disk
(numba ``cache=True``): the first use after installing compiles for a few seconds.
"""

from polarzoo.envs.batch.core import BatchCore, BatchStep, sample_legal_actions
from polarzoo.envs.batch.fire_and_ice import FireAndIceBatch
from polarzoo.envs.batch.go_with_the_floe import GoWithTheFloeBatch

BATCH_CORES = {"fire_and_ice_v0": FireAndIceBatch, "go_with_the_floe_v0": GoWithTheFloeBatch}

__all__ = ["BATCH_CORES", "BatchCore", "BatchStep", "sample_legal_actions", "FireAndIceBatch", "GoWithTheFloeBatch"]
