"""Ray RLlib: the observation adapter (always), and one tiny self-play PPO iteration per
two-player game through the CLI (only where the ``rllib`` extra is installed; CI runs this file
in its own venv)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from polarzoo.envs import ENVIRONMENTS
from polarzoo.wrappers.rllib import RLlibObservation
from tests.helpers import scaled


@pytest.mark.parametrize("env_id", sorted(ENVIRONMENTS))
def test_observation_adapter(env_id: str) -> None:
    kwargs = {"num_players": 2, "grid": 3} if env_id == "thin_ice_v0" else {}
    env = RLlibObservation(ENVIRONMENTS[env_id].env(**kwargs))
    env.reset(seed=0)
    agent = env.agent_selection
    observation = env.observe(agent)
    space = env.observation_space(agent)
    assert set(observation) == {"observations", "action_mask"}
    assert space.contains(observation)
    assert observation["observations"].dtype == np.float32 and observation["action_mask"].dtype == np.float32
    raw = env.unwrapped.observe(agent)
    assert (observation["action_mask"] == raw["action_mask"]).all()


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0"])
def test_one_tiny_iteration_through_the_cli(env_id: str, tmp_path) -> None:
    pytest.importorskip("ray.rllib")
    out = tmp_path / "run"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.rllib_train",
            "--env",
            env_id,
            "--iterations",
            "1",
            "--batch-size",
            "128",
            "--minibatch-size",
            "64",
            "--epochs",
            "1",
            "--dim",
            "8",
            "--blocks",
            "1",
            "--eval-games",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=scaled(600),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "iteration 1:" in result.stdout and "vs random" in result.stdout
    report = json.loads((out / "eval.json").read_text())
    assert report["iterations"][0]["env_steps"] >= 128
    # typed: numbers stay numbers, the folder a string, no error
    assert report["config"]["batch_size"] == 128 and report["config"]["address"] is None
    assert report["config"]["out"] == str(out) and report["error"] is None
    assert sum(report["vs_random"]["wins"].values()) <= 2
    assert (out / "checkpoint").is_dir()


def test_cli_rejects_bad_arguments() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.rllib_train", "--env", "fire_and_ice_v0", "--iterations", "0"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "--iterations must be at least 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_ctrl_c_keeps_the_checkpoint_and_exits_130(tmp_path) -> None:
    pytest.importorskip("ray.rllib")
    import signal

    out = tmp_path / "run"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.rllib_train",
            "--env",
            "fire_and_ice_v0",
            "--iterations",
            "200",
            "--batch-size",
            "128",
            "--minibatch-size",
            "64",
            "--epochs",
            "1",
            "--dim",
            "8",
            "--blocks",
            "1",
            "--eval-games",
            "1",
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines = []
    for line in process.stdout:  # the second iteration ends: the first one's checkpoint is complete
        lines.append(line)
        if line.startswith("iteration 2:"):
            break
    process.send_signal(signal.SIGINT)
    out_text, err = process.communicate(timeout=scaled(300))
    assert process.returncode == 130, "".join(lines) + out_text + err[-3000:]
    assert "interrupted" in out_text and (out / "checkpoint").is_dir()
    report = json.loads((out / "eval.json").read_text())
    assert report["interrupted"] is True and report["vs_random"] == {} and report["iterations"]
    assert not (out / "checkpoint.tmp").exists() or (out / "checkpoint").is_dir()
