"""polarzoo.envs._common.safe_pickle: a checkpoint pickle builds polarzoo's and NumPy's objects,
and one that names other callables is refused before anything runs; a crafted training
checkpoint makes ``--resume`` one line, not code."""

from __future__ import annotations

import builtins
import functools
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from polarzoo.envs._common.safe_pickle import UnsafePickle, restricted_loads
from tests.helpers import scaled

ROOT = Path(__file__).resolve().parents[1]


class Reduce:
    def __init__(self, *value: Any) -> None:
        self.value = value

    def __reduce__(self) -> tuple[Any, ...]:
        return self.value


@pytest.mark.parametrize(
    "payload",
    [
        (os.system, ("true",)),
        (builtins.eval, ("1",)),
        (builtins.exec, ("x = 1",)),
        (subprocess.call, (["true"],)),
        (functools.partial, (print, 1)),
        (builtins.open, ("/tmp/never", "w")),
        (builtins.__import__, ("os",)),
        (pickle.loads, (b"N.",)),
    ],
)
def test_callables_outside_the_list_are_refused(payload: tuple[Any, ...]) -> None:
    with pytest.raises(UnsafePickle, match="refused"):
        restricted_loads(pickle.dumps(Reduce(*payload)))


def test_the_files_that_write_are_not_reachable() -> None:
    """Functions of polarzoo that write files (the weight-only writer, atomic writes) are refused."""
    from polarzoo.baselines.cli.runs import atomic_write

    with pytest.raises(UnsafePickle):
        restricted_loads(pickle.dumps(Reduce(atomic_write, (Path("/tmp/x"), "y"))))
    from polarzoo.baselines.policies.weights import save_policy

    with pytest.raises(UnsafePickle):
        restricted_loads(pickle.dumps(Reduce(save_policy, (None, "/tmp/x"))))


def test_env_stacks_and_generators_round_trip() -> None:
    pytest.importorskip("stable_baselines3")
    from polarzoo.wrappers import SingleAgentEnv

    env = SingleAgentEnv("go_with_the_floe_v0")
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    data = {"env": env, "rng": np.random.default_rng(5), "array": np.arange(6).reshape(2, 3), "set": {1, 2}}
    back = restricted_loads(pickle.dumps(data))
    assert np.array_equal(back["env"].action_masks(), env.action_masks())
    assert back["rng"].random() == np.random.default_rng(5).random() and back["set"] == {1, 2}


def test_a_crafted_training_checkpoint_is_one_line(tmp_path: Path) -> None:
    """``train --resume`` of a run folder whose exact.pkl would run code: refused in one line."""
    pytest.importorskip("sb3_contrib")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.train",
            "--env",
            "fire_and_ice_v0",
            "--quick",
            "--runs",
            str(tmp_path),
            "--run-name",
            "r",
            "--total-timesteps",
            "128",
            "--no-final-eval",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert run.returncode == 0, run.stderr
    folder = next(p for p in tmp_path.iterdir() if (p / "checkpoints").is_dir())
    marker = tmp_path / "ran"
    (folder / "checkpoints" / "exact.pkl").write_bytes(pickle.dumps({"timesteps": 0, "x": Reduce(open, (str(marker), "w"))}))
    resumed = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.train", "--resume", str(folder), "--total-timesteps", "256"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert resumed.returncode == 2 and "refused" in resumed.stderr and "Traceback" not in resumed.stderr, resumed.stderr
    assert not marker.exists()
