"""``envs/_common/seeding.py``: loading a saved model leaves the caller's global generators as they were."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from polarzoo.envs._common.seeding import global_random_state_kept

PRETRAINED = Path(__file__).resolve().parents[1] / "baselines" / "pretrained"


def _draws() -> tuple:
    import torch

    return random.random(), float(np.random.rand()), float(torch.rand(1))


def _seed(value: int) -> None:
    import torch

    random.seed(value)
    np.random.seed(value)
    torch.manual_seed(value)


def test_the_block_may_reseed_the_generators_are_put_back() -> None:
    pytest.importorskip("torch")
    _seed(7)
    expected = _draws()
    _seed(7)
    with global_random_state_kept():
        _seed(0)
        _draws()
    assert _draws() == expected
    _seed(7)
    with pytest.raises(RuntimeError), global_random_state_kept():  # also when the block fails
        _seed(1)
        raise RuntimeError("a failed load")
    assert _draws() == expected


def test_loading_an_agent_does_not_reseed_the_callers_generators() -> None:
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.agents import PolicyAgent

    for seed in (123, 456):  # SB3's load alone leaves the same state after both
        _seed(seed)
        expected = _draws()
        _seed(seed)
        PolicyAgent(PRETRAINED / "fire_and_ice_v0.safetensors")
        assert _draws() == expected
