"""Subprocess smoke runs of every CLI with tiny budgets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import scaled

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, timeout: float = 300) -> str:
    result = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=scaled(timeout))
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_play_cli() -> None:
    for env_id in ("fire_and_ice_v0", "go_with_the_floe_v0"):
        out = run("-m", "polarzoo.baselines.play", "--env", env_id, "--seed", "1")
        assert "rewards:" in out


def test_solitaire_solver_cli(tmp_path: Path) -> None:
    out = run("-m", "polarzoo.baselines.solitaire_solver", "--deals", "5", "--no-progress", "--json", str(tmp_path / "s.json"))
    assert "| 5 |" in out and (tmp_path / "s.json").exists()
    out = run("-m", "polarzoo.baselines.solitaire_solver", "--seed", "7")
    assert "Solution (27 captures" in out and "27. " in out


def test_benchmark_cli() -> None:
    out = run("-m", "benchmarks.env_steps", "--trials", "1", "--steps", "200")
    assert "fire_and_ice_v0.env()" in out and "go_with_the_floe_v0.env()" in out


def test_batch_benchmark_cli() -> None:
    out = run("-m", "benchmarks.batch", "--trials", "1", "--seconds", "0.05", "--sizes", "1", "8")
    assert "| fire_and_ice_v0 | 8 |" in out and "| go_with_the_floe_v0 | 8 |" in out


def test_thin_ice_benchmark_cli() -> None:
    out = run("-m", "benchmarks.thin_ice_physics", "--piles", "1")
    assert "placements per second" in out and "RSS" in out


def test_move_time_benchmark_cli(tmp_path: Path) -> None:
    """Every move of the agent is timed (the opponent's are not), and a bad spec is one line."""
    import json

    out = run(
        "-m",
        "benchmarks.move_time",
        "--env",
        "fire_and_ice_v0",
        "--agents",
        "random",
        "mcts:20",
        "--opponent",
        "random",
        "--games",
        "2",
        "--json",
        str(tmp_path / "t.json"),
    )
    assert "| mcts:20 |" in out and "| random |" in out
    rows = json.loads((tmp_path / "t.json").read_text())["agents"]
    assert (
        rows["mcts:20"]["moves"] > 4
        and rows["mcts:20"]["median_ms"] > 0
        and rows["random"]["max_ms"] >= rows["random"]["median_ms"]
    )
    bad = subprocess.run(
        [sys.executable, "-m", "benchmarks.move_time", "--env", "fire_and_ice_v0", "--agents", "mcts:x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert bad.returncode != 0 and bad.stderr.strip().splitlines()[-1].startswith("mcts:x: mcts needs a positive whole number")


def test_training_fps_benchmark_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import training_fps  # in this process: two interpreter start-ups less

    training_fps.main(["--timesteps", "256", "--envs", "go_with_the_floe_v0"])
    out = capsys.readouterr().out
    assert "BatchVecEnv" in out and "SubprocVecEnv" in out
    training_fps.main(["--policies", "--timesteps", "256", "--envs", "fire_and_ice_v0"])
    out = capsys.readouterr().out
    assert "| fire_and_ice_v0 | board |" in out and "| fire_and_ice_v0 | mlp |" in out


def test_training_fps_default_run_and_its_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import training_fps

    training_fps.main(["--default-run", "go_with_the_floe_v0", "--timesteps", "64"])
    out = capsys.readouterr().out
    assert "round 1: this checkout:" in out and "| this checkout |" in out and "speed-up" not in out
    for argv, message in (
        (["--baseline", "HEAD"], "--baseline goes with --default-run"),
        (["--default-run", "go_with_the_floe_v0", "--rounds", "0"], "--rounds must be at least 1; got 0"),
        (["--timesteps", "0"], "--timesteps must be at least 1; got 0"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            training_fps.main(argv)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--baseline 'no-such-commit': not a commit of this repository"):
        training_fps.main(["--default-run", "go_with_the_floe_v0", "--baseline", "no-such-commit", "--timesteps", "64"])


def test_solitaire_eval_cli(tmp_path: Path) -> None:
    out = run("-m", "polarzoo.baselines.solitaire_eval", "--timesteps", "256", "--deals", "2", "--out", str(tmp_path))
    assert "| solver | 2 | 2 |" in out and (tmp_path / "solitaire.json").exists() and (tmp_path / "model.zip").exists()


def test_floe_white_benchmark_cli() -> None:
    out = run(
        "-m",
        "benchmarks.floe_white",
        "--games",
        "24",
        "--replays",
        "1",
        "--endgames",
        "2",
        "--depth",
        "1",
        "--bound-depth",
        "1",
        "--search-games",
        "4",
        "--first-phase",
        "heuristic",
    )
    assert "| 24 |" in out and "| all |" in out and "expectimax, 1 White move(s) deep" in out
    assert "| at most (undecided leaves won) |" in out and "before the first capture, at most |" in out
    assert "| 4 games |" in out and "White: heuristic + search" in out


def test_floe_white_curve_over_a_runs_snapshots(tmp_path: Path) -> None:
    import shutil

    from polarzoo.baselines.agents import pretrained_path

    (tmp_path / "snapshots").mkdir()
    for name in ("snapshots/snapshot_200.zip", "snapshots/snapshot_1000.zip", "model.zip"):
        shutil.copy(pretrained_path("go_with_the_floe_v0"), tmp_path / name)
    (tmp_path / "training.json").write_text('{"timesteps": 1024}')
    out = run("-m", "benchmarks.floe_white", "--curve", str(tmp_path), "--games", "16")
    rows = [line for line in out.splitlines() if line.startswith("| ") and ".zip" in line]
    assert [row.split(" | ")[0] for row in rows] == ["| 200", "| 1,000", "| 1,024"]  # by timestep, not by name
    assert len({row.split(" | ")[2] for row in rows}) == 1  # the same model on the same seeded games
    lines = (tmp_path / "white_curve.csv").read_text().splitlines()
    assert lines[0].startswith("timesteps,") and len(lines) == 4 and (tmp_path / "white_curve.png").stat().st_size > 0


def test_main_job_spread_runs_and_reports(tmp_path: Path) -> None:
    out = run(
        "-m",
        "benchmarks.main_job_spread",
        "--runs",
        str(tmp_path),
        "--seeds",
        "0",
        "--threads",
        "1",
        "--train-args=--quick",
        timeout=600,
    )
    assert "s0-t1: finished" in out and "| s0-t1 | " in out and "1 of 1 runs finished" in out
    assert (tmp_path / "s0-t1" / "eval.json").exists() and (tmp_path / "spread.md").read_text() in out
    again = run(
        "-m", "benchmarks.main_job_spread", "--runs", str(tmp_path), "--seeds", "0", "1", "--threads", "1", "--report-only"
    )
    assert "1 of 2 runs finished" in again


def test_main_job_spread_refuses_bad_seeds_and_threads_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.main_job_spread", "--runs", str(tmp_path), "--threads", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert result.returncode == 2 and "--seeds must be >= 0 and --threads >= 1" in result.stderr
    assert "Traceback" not in result.stderr and not list(tmp_path.iterdir())
