"""A missing optional dependency is one line naming the extra that brings it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from polarzoo.envs._common.extras import MissingExtra, require
from tests.helpers import scaled


def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)  # importing it now fails, as when it is not installed
    with pytest.raises(MissingExtra, match=r'Thin Ice\'s physics needs mujoco: pip install "polarzoo\[physics\]"'):
        require("mujoco", "Thin Ice's physics")
    assert require("json", "x").dumps(1) == "1"


@pytest.mark.parametrize(
    "blocked, code, words",
    [
        ("mujoco", "from polarzoo.envs import thin_ice_v0; thin_ice_v0.env().reset(seed=0)", 'pip install "polarzoo[physics]"'),
        (
            "sb3_contrib",
            "from polarzoo.baselines.agents import make_agent; make_agent('pretrained', 'fire_and_ice_v0')",
            'pip install "polarzoo[train]"',
        ),
    ],
)
def test_without_the_extra(blocked: str, code: str, words: str) -> None:
    """In a fresh interpreter where the module cannot be imported."""
    script = f"import sys; sys.modules[{blocked!r}] = None\n{code}"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=scaled(120))
    assert result.returncode != 0 and words in result.stderr.splitlines()[-1], result.stderr[-2000:]


def test_train_help_without_pyyaml() -> None:
    script = (
        "import sys; sys.modules['yaml'] = None; sys.argv = ['train', '--help']\n"
        "from polarzoo.baselines.training import ppo_cli as train; train.main()"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=scaled(120))
    assert result.returncode == 0 and "--total-timesteps" in result.stdout, result.stderr[-2000:]
