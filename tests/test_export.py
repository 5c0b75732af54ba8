"""baselines.export: a self-contained copy loads and plays; a missing input is one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import scaled

pytest.importorskip("sb3_contrib")

from polarzoo.baselines.agents import pretrained_path  # noqa: E402


def test_export_copy_loads_and_holds_no_run_references(tmp_path: Path) -> None:
    out = tmp_path / "copy.zip"
    result = subprocess.run([sys.executable, "-m", "polarzoo.baselines.export", str(pretrained_path("fire_and_ice_v0")),
                             str(out)], capture_output=True, text=True, timeout=scaled(300))
    assert result.returncode == 0, result.stderr
    data = zipfile.ZipFile(out).read("data").decode()
    assert "SingleAgentEnv" not in data and json.loads(data)["tensorboard_log"] is None
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(str(out), device="cpu").action_space.n == 2402


def test_export_missing_model_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "polarzoo.baselines.export", str(tmp_path / "none.zip"), str(tmp_path / "o.zip")],
                            capture_output=True, text=True, timeout=scaled(120))
    assert result.returncode == 2 and "no such model file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "o.zip").exists()
