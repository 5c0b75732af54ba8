"""Subprocess smoke runs of every CLI with tiny budgets."""

from __future__ import annotations

import os
import subprocess
import sys
import time
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


@pytest.mark.slow
def test_thin_ice_benchmark_cli() -> None:
    out = run("-m", "benchmarks.thin_ice_physics", "--piles", "1")
    assert "placements per second" in out and "RSS" in out


@pytest.mark.slow
def test_thin_ice_training_share_cli(tmp_path: Path) -> None:
    """A short Thin Ice training with every mj_step timed: the shares inside and outside add up."""
    import json

    pytest.importorskip("mujoco")
    out = run("-m", "benchmarks.thin_ice_training_share", "--timesteps", "256", "--json", str(tmp_path / "share.json"))
    result = json.loads((tmp_path / "share.json").read_text())
    assert "outside it" in out and result["mj_steps"] > 0
    assert abs(result["share_in_mj_step"] + result["share_outside_mj_step"] - 1) < 1e-9 and 0 < result["share_in_mj_step"] < 1


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


@pytest.mark.slow
def test_training_fps_benchmark_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import training_fps  # in this process: two interpreter start-ups less

    training_fps.main(["--timesteps", "256", "--envs", "go_with_the_floe_v0"])
    out = capsys.readouterr().out
    assert "BatchVecEnv" in out and "SubprocVecEnv" in out
    training_fps.main(["--policies", "--timesteps", "256", "--envs", "fire_and_ice_v0"])
    out = capsys.readouterr().out
    assert "| fire_and_ice_v0 | board |" in out and "| fire_and_ice_v0 | mlp |" in out


@pytest.mark.slow
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


@pytest.mark.slow
def test_solitaire_eval_cli(tmp_path: Path) -> None:
    out = run("-m", "polarzoo.baselines.solitaire_eval", "--timesteps", "256", "--deals", "2", "--out", str(tmp_path))
    assert "| solver | 2 | 2 |" in out and (tmp_path / "solitaire.json").exists() and (tmp_path / "model.zip").exists()


@pytest.mark.slow
def test_thin_ice_cores_cli(tmp_path: Path) -> None:
    """A short default Thin Ice training at 3 players: the env workers' CPU time is counted."""
    import json

    pytest.importorskip("mujoco")
    out = run(
        "-m",
        "benchmarks.thin_ice_cores",
        "--players",
        "3",
        "--rollouts",
        "async",
        "--timesteps",
        "512",
        "--json",
        str(tmp_path / "c.json"),
    )
    (row,) = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert "| 3 | async |" in out and row["players"] == 3 and row["n_envs"] == 4
    assert row["cpu_seconds_env_workers"] > 0 and row["cpu_seconds_trainer"] > 0
    assert row["busy_cores"] == pytest.approx(
        (row["cpu_seconds_trainer"] + row["cpu_seconds_env_workers"]) / row["wall_seconds"], abs=0.01
    )


def test_thin_ice_cores_counts_a_child_process_and_refuses_a_bad_table() -> None:
    from benchmarks.thin_ice_cores import process_tree_ticks

    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc (Linux)")
    # a child that burns CPU for a moment is in the tree, with its ticks
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\ninput()"],
        stdin=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + scaled(30)
        while process_tree_ticks(os.getpid()).get(child.pid, 0) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process_tree_ticks(os.getpid()).get(child.pid, 0) >= 20
    finally:
        child.communicate(b"\n", timeout=scaled(30))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.thin_ice_cores", "--players", "7"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2 and "Thin Ice seats 2 to 6 players, got 7" in done.stderr and "Traceback" not in done.stderr
    budget = subprocess.run(
        [sys.executable, "-m", "benchmarks.thin_ice_cores", "--timesteps", "0"], capture_output=True, text=True, cwd=ROOT
    )
    assert (
        budget.returncode == 2 and "--timesteps must be at least 1, got 0" in budget.stderr and "Traceback" not in budget.stderr
    )


def test_thin_ice_training_share_refuses_a_budget_below_one() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.thin_ice_training_share", "--timesteps", "0"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 2 and "--timesteps must be at least 1" in done.stderr and "Traceback" not in done.stderr


def test_main_job_clock_rounds_before_it_takes_the_minutes() -> None:
    from benchmarks.main_job import clock

    assert [clock(s) for s in (179.6, 179.4, 59.5, 305.0, None)] == ["3 min 00 s", "2 min 59 s", "1 min 00 s", "5 min 05 s", "-"]


def test_main_job_refuses_a_missing_config_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import main_job

    with pytest.raises(SystemExit) as exit_info:
        main_job.main(["--config", str(tmp_path / "trial.yaml"), "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "trial.yaml: no such file" in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_update_step_benchmark_cli(tmp_path: Path) -> None:
    import json

    out = run("-m", "benchmarks.update_step", "--envs", "fire_and_ice_v0", "--steps", "1", "--json", str(tmp_path / "step.json"))
    assert "fire_and_ice_v0: float32" in out and "bfloat16" in out
    record = json.loads((tmp_path / "step.json").read_text())["results"]["fire_and_ice_v0"]
    assert record["float32"] > 0 and record["bfloat16"] > 0 and record["ratio"] > 0
    # a step of the kit's network is about 1.3 GFLOP (256 rows, forward and backward)
    assert 0.5 < record["gflop_a_step"] < 5 and "GFLOP/s float32" in out
    assert json.loads((tmp_path / "step.json").read_text())["results"]["matmul_gflop_per_second"] > 0
    bad = subprocess.run(
        [sys.executable, "-m", "benchmarks.update_step", "--steps", "0"], capture_output=True, text=True, cwd=ROOT
    )
    assert bad.returncode == 2 and "--steps must be at least 1" in bad.stderr
    unknown = subprocess.run(
        [sys.executable, "-m", "benchmarks.update_step", "--envs", "chess"], capture_output=True, text=True, cwd=ROOT
    )
    assert unknown.returncode == 2 and "invalid choice: 'chess'" in unknown.stderr and "Traceback" not in unknown.stderr


def test_update_step_compile_refuses_thin_ice() -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks.update_step", "--compile"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "--compile compares Fire & Ice's and the Floe's trunks" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_update_step_compiles_the_trunk(tmp_path: Path) -> None:
    """The eager and the torch.compile'd trunk are both timed (Inductor's cache in tmp_path)."""
    import json
    import shutil

    if shutil.which("g++") is None and shutil.which("c++") is None:
        pytest.skip("torch.compile on a CPU needs a C++ compiler")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.update_step",
            "--envs",
            "go_with_the_floe_v0",
            "--compile",
            "--steps",
            "1",
            "--json",
            str(tmp_path / "c.json"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")},
        timeout=scaled(600),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((tmp_path / "c.json").read_text())["results"]["go_with_the_floe_v0"]
    assert record["eager"] > 0 and record["compiled"] > 0 and record["warm_up_seconds"]["compiled"] > 0


def test_jax_envs_refuses_a_game_pgx_lacks() -> None:
    pytest.importorskip("pgx")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.jax_envs", "--pgx-games", "othello", "chess9"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert "--pgx-games: pgx" in done.stderr and "no game 'chess9'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_accelerator_checks_script_smoke(tmp_path: Path) -> None:
    """The prepared GPU script, shrunk (SMOKE=1), runs end to end on a CPU and leaves the 8 files
    a device run brings back, the benchmark with a column per pgx game."""
    for module in ("jax", "pgx", "mctx", "optax"):
        pytest.importorskip(module)
    environ = {**os.environ, "SMOKE": "1", "OUT": str(tmp_path), "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", "benchmarks/accelerator_checks.sh"], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=scaled(300)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    files = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file())
    expected = ["az.log", "az/config.json", "az/evaluations.csv", "az/model.json", "az/model.npz", "device.txt"]
    assert files == sorted([*expected, "jax_envs_benchmark.md", "tests.log"])
    table = (tmp_path / "jax_envs_benchmark.md").read_text()
    assert "twin / connect_four" in table and "twin / othello" in table and "mismatches 0" in table
    assert "tests collected" in (tmp_path / "tests.log").read_text()
