"""baselines.export: a self-contained copy loads and plays; a missing input is one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import sb3_zip_of, scaled

pytest.importorskip("sb3_contrib")

from polarzoo.baselines.agents import pretrained_path  # noqa: E402


def test_export_writes_weights_only_that_play_the_same(tmp_path: Path) -> None:
    """An SB3 zip -> a .safetensors of the same weights (the same digest as the shipped file)."""
    from polarzoo.baselines.policies.weights import load_policy, policy_digest

    source = sb3_zip_of("fire_and_ice_v0", tmp_path / "model.zip")
    out = tmp_path / "copy.safetensors"
    result = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.export", str(source), str(out)],
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )
    assert result.returncode == 0, result.stderr
    assert policy_digest(out) == policy_digest(source) == policy_digest(pretrained_path("fire_and_ice_v0"))
    assert load_policy(out).action_space.n == 2402 and b"SingleAgentEnv" not in out.read_bytes()


def test_export_to_a_zip_needs_trust(tmp_path: Path) -> None:
    """Writing an SB3 zip loads the source with SB3 (its pickles run): only with --trust-pickles."""
    source = sb3_zip_of("fire_and_ice_v0", tmp_path / "model.zip")
    refused = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.export", str(source), str(tmp_path / "o.zip")],
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )
    assert refused.returncode == 2 and "--trust-pickles" in refused.stderr and not (tmp_path / "o.zip").exists()
    result = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.export", str(source), str(tmp_path / "o.zip"), "--trust-pickles"],
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )
    assert result.returncode == 0, result.stderr
    data = zipfile.ZipFile(tmp_path / "o.zip").read("data").decode()
    assert "SingleAgentEnv" not in data and json.loads(data)["tensorboard_log"] is None


def test_export_missing_model_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.export", str(tmp_path / "none.zip"), str(tmp_path / "o.zip")],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert result.returncode == 2 and "no such model file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "o.zip").exists()
