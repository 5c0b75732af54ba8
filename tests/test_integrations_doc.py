"""Runs every Python snippet of docs/integrations.md, so the page stays true.  A snippet whose
library is not installed here is skipped (RLlib's runs in CI's RLlib venv)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import scaled

PAGE = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
#: snippet -> the module it needs ("ray.rllib": Ray core alone, as the benchmark extra installs it, is not enough)
NEEDS = {"sb3_contrib": "sb3_contrib", "supersuit": "supersuit", "tianshou": "tianshou", "torchrl": "torchrl", "ray": "ray.rllib"}


def _installed(module: str) -> bool:
    """Whether ``module`` imports here (a package can be found yet lack what it imports)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _title(snippet: str) -> str:
    for module in NEEDS:
        if f"import {module}" in snippet or f"from {module}" in snippet:
            return module
    return "pettingzoo"


def test_the_page_has_a_snippet_per_library() -> None:
    assert {_title(s) for s in SNIPPETS} == {"sb3_contrib", "pettingzoo", "supersuit", "tianshou", "torchrl", "ray"}


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[_title(s) for s in SNIPPETS])
@pytest.mark.slow
def test_snippet_runs(snippet: str, tmp_path: Path) -> None:
    module = NEEDS.get(_title(snippet))
    if module and not _installed(module):
        pytest.skip(f"{module} is not installed here")
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=scaled(600))
    assert result.returncode == 0, result.stderr[-3000:]
    label = {"sb3_contrib": "sb3:", "pettingzoo": "registry:", "ray": "rllib:"}.get(_title(snippet), f"{_title(snippet)}:")
    assert label in result.stdout, result.stdout
