"""baselines/benchmark: the protocol end to end on the tiny budget (2 seeds x 2 algorithms), a
run killed with kill -9 and the same command again (finished runs kept, the rest the same as a
run never interrupted), the aggregate's files, and the Ray path on a local instance."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("choix")
pytest.importorskip("rliable")
pytest.importorskip("sb3_contrib")

from polarzoo.baselines.benchmark import protocol  # noqa: E402
from polarzoo.baselines.benchmark.runner import RunSpec, execute, schedule  # noqa: E402
from polarzoo.baselines.evaluation.league import build  # noqa: E402
from tests.helpers import TIMEOUT_SCALE  # noqa: E402

GAME = "fire_and_ice_v0"
#: what differs between two runs of the same spec: the time they took
TIMING = ("train_seconds", "train_seconds_this_session")


@pytest.fixture(scope="module")
def leagues(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("leagues")
    build(GAME, ["random", "mcts:4", "heuristic"], games=4, out=folder / "build", bootstrap=20, show_progress=False)
    (folder / f"{GAME}.json").write_text((folder / "build" / "league.json").read_text())
    return folder


def _result(path: Path) -> dict:
    return {k: v for k, v in json.loads(path.read_text()).items() if k not in TIMING}


def test_the_schedule_follows_the_protocol() -> None:
    runs = schedule(list(protocol.GAMES), sorted(protocol.ALGORITHMS), [0, 1], "short")
    assert RunSpec("thin_ice_v0", "az-jax", 0, "short") not in runs  # AlphaZero needs a JAX twin
    assert len(runs) == 2 * (3 * 3 - 1) and runs[0].seed == 0 and runs[-1].seed == 1
    for game in protocol.GAMES:
        assert set(protocol.BUDGETS["short"][game]) >= {"ppo"}


@pytest.mark.slow
def test_tiny_benchmark_end_to_end_survives_kill_9(leagues: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    command = [sys.executable, "-m", "polarzoo.baselines.benchmark", "run", "--games", GAME, "--algorithms", "ppo-mlp",
               "ppo-board", "--seeds", "0", "1", "--budget", "tiny", "--out", str(out), "--leagues", str(leagues)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = out / "tiny" / GAME / "ppo-mlp" / "seed0" / "result.json"
    deadline = time.monotonic() + 300 * TIMEOUT_SCALE
    while not first.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert first.exists(), process.stderr.read() if process.poll() is not None else "no run finished in time"
    time.sleep(2.0)  # into the next run's training
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    kept = first.stat().st_mtime_ns
    again = subprocess.run(command, capture_output=True, text=True, timeout=600 * TIMEOUT_SCALE)
    assert again.returncode == 0, again.stderr
    assert "1 finished before, 3 to run" in again.stdout
    assert first.stat().st_mtime_ns == kept  # a finished run is never redone
    results = sorted((out / "tiny").glob("*/*/seed*/result.json"))
    assert len(results) == 4
    # the run that was killed ends as a run never interrupted does
    straight = tmp_path / "straight"
    execute(RunSpec(GAME, "ppo-board", 0, "tiny"), str(straight), str(leagues))
    assert _result(out / "tiny" / GAME / "ppo-board" / "seed0" / "result.json") == _result(
        straight / "tiny" / GAME / "ppo-board" / "seed0" / "result.json")
    summary = json.loads((out / "tiny" / "aggregate.json").read_text())
    assert set(summary["iqm"]["rating"][GAME]) == {"ppo-mlp", "ppo-board"}
    assert all(entry[3] == 2 for entry in summary["iqm"]["rating"][GAME].values())  # 2 seeds each
    assert set(summary["probability_of_improvement"][GAME]) == {"ppo-mlp > ppo-board", "ppo-board > ppo-mlp"}
    for name in ("aggregate.md", "profiles.png", "curves.png"):
        assert (out / "tiny" / name).exists(), name


@pytest.mark.slow
def test_the_ray_path_on_a_local_instance(leagues: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from polarzoo.baselines.benchmark.runner import run_all

    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        specs = schedule([GAME], ["ppo-mlp"], [0], "tiny")
        results = run_all(specs, tmp_path / "ray", address="local", leagues=str(leagues), log=lambda _: None)
    finally:
        ray.shutdown()
    assert len(results) == 1
    local = tmp_path / "local"
    execute(specs[0], str(local), str(leagues))
    assert _result(specs[0].folder(tmp_path / "ray") / "result.json") == _result(specs[0].folder(local) / "result.json")


def test_cli_refuses_a_missing_league_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "polarzoo.baselines.benchmark", "run", "--games", GAME, "--leagues",
                             str(tmp_path), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "not a readable league file" in result.stderr and "Traceback" not in result.stderr
