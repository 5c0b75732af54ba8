"""Global random state kept across calls that reseed it."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np


@contextmanager
def global_random_state_kept() -> Iterator[None]:
    """Python's, NumPy's and (when imported) torch's global generators are as they were after the
    block.  Stable-Baselines3's ``load`` reseeds all three with the saved model's seed: without
    this, loading an opponent in the middle of a training run restarted the learner's random
    streams at the same point after every snapshot (the same sampling noise and minibatch order
    each time), and loading an agent reset a user's own seeded generators."""
    python_state, numpy_state = random.getstate(), np.random.get_state()
    torch = sys.modules.get("torch")
    torch_state = torch.get_rng_state() if torch is not None else None
    try:
        yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
        if torch is not None and torch_state is not None:
            torch.set_rng_state(torch_state)
