"""A ``Discrete`` space whose ``sample()`` draws a legal action.

Single-agent envs here raise ``ValueError`` on an illegal action, and checkers such as
Gymnasium's and SB3's ``check_env`` step with ``action_space.sample()``.  Sampling from the
current legal mask (when no explicit mask is given) makes both hold, and is what a user who
calls ``env.action_space.sample()`` on a masked game wants anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` defaults to the mask returned by ``legal_mask_fn``."""

    def __init__(self, n: int, legal_mask_fn: Callable[[], NDArray[np.int8] | None], seed: Any = None) -> None:
        super().__init__(n, seed=seed)
        self.legal_mask_fn = legal_mask_fn

    def sample(self, mask: NDArray[np.int8] | None = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None:
            legal = self.legal_mask_fn()
            if legal is not None and legal.any():
                mask = legal.astype(np.int8, copy=False)
        if probability is not None:
            return super().sample(probability=probability)
        return super().sample(mask=mask)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, spaces.Discrete) and self.n == other.n and self.start == other.start

    __hash__ = spaces.Discrete.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (a saved SB3 model, a space sent from a subprocess) as a plain Discrete: the mask
        # function is a bound method of the env, and pickling it would drag the whole env (and its
        # opponents' saved models) into every model file.
        return (spaces.Discrete, (int(self.n), int(self.start)))

    def __deepcopy__(self, memo: dict[int, Any]) -> LegalDiscrete:
        import copy

        return LegalDiscrete(int(self.n), copy.deepcopy(self.legal_mask_fn, memo))
