"""``benchmarks.learning_ab``: two arms of finished training runs compared (final models against
the references, the training return by window)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")
learning_ab = pytest.importorskip("benchmarks.learning_ab")  # the repository's benchmarks/, run from its root


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from polarzoo.baselines.training import ppo

    folder = tmp_path_factory.mktemp("runs")
    made = []
    for seed in (0, 1):
        config = ppo.load_config(
            "fire_and_ice_v0",
            {
                "n_envs": 2,
                "n_steps": 64,
                "batch_size": 64,
                "n_epochs": 1,
                "eval_every": 0,
                "total_timesteps": 256,
                "torch_threads": 1,
                "vec_env": "dummy",
                "bc_games": 0,
            },
        )
        run = folder / f"s{seed}"
        run.mkdir()
        (run / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
        made.append(ppo.train(config, run, seed=seed, progress_bar=False, final_eval=False))
    return made


def test_windows_average_the_curve_up_to_the_end() -> None:
    curve = [(100, 1.0), (150, 3.0), (250, -1.0), (420, 0.5)]
    assert learning_ab.windowed(curve, 200, 450) == [2.0, -1.0, 0.5]
    assert learning_ab.windowed(curve, 100, 400) == [None, 2.0, -1.0, None]


def test_two_arms_of_runs_compared(runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert len(learning_ab.training_curve(runs[0])) >= 2  # one point per rollout, from the TensorBoard log
    out = tmp_path / "ab"
    learning_ab.main(
        ["--a", str(runs[0]), "--b", str(runs[1]), "--names", "one", "two", "--games", "1", "--window", "128", "--out", str(out)]
    )
    record = json.loads((out / "learning_ab.json").read_text())
    assert list(record["arms"]) == ["one", "two"]
    for entries in record["arms"].values():
        (entry,) = entries
        assert set(entry["results"]) == {"random", "heuristic"}
        assert all(result["games"] == 2 for result in entry["results"].values())  # one game per seat
        assert len(entry["curve"]) == 2  # 256 timesteps in windows of 128
    table = (out / "learning_ab.md").read_text()
    assert "| one | s0 |" in table and "| two | s1 |" in table and "| 128-256 |" in table
    assert (out / "learning_ab.png").stat().st_size > 0
    assert str(out) in capsys.readouterr().out
    # Run again (another arm beside the same runs): the models' games are read back, not played.
    kept = sorted((out / "evaluated").glob("*.json"))
    assert len(kept) == 2
    first = json.loads(kept[0].read_text())
    first["random"]["marker"] = 99  # a replay would overwrite the file
    kept[0].write_text(json.dumps(first))
    learning_ab.main(["--a", str(runs[0]), "--b", str(runs[1]), "--games", "1", "--window", "128", "--out", str(out)])
    again = json.loads((out / "learning_ab.json").read_text())
    assert 99 in [entry["results"]["random"].get("marker") for entries in again["arms"].values() for entry in entries]


def test_a_folder_that_is_not_a_finished_run_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        learning_ab.main(["--a", str(tmp_path), "--b", str(tmp_path)])
    assert exit_info.value.code == 2
    assert f"{tmp_path}: not a finished training run" in capsys.readouterr().err


def test_bad_numbers_are_refused_in_one_line(runs: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        learning_ab.main(["--a", str(runs[0]), "--b", str(runs[1]), "--games", "0"])
    assert exit_info.value.code == 2
    assert "--games and --window must be at least 1" in capsys.readouterr().err


def test_the_arms_compared_with_the_runs_as_samples() -> None:
    pytest.importorskip("scipy")
    # Three runs against three, every A above every B: of the 20 ways to split the six runs, this
    # split and its mirror are the most extreme, so the exact two-sided p is 2 / 20.
    separated = learning_ab.compare([0.70, 0.60, 0.65], [0.40, 0.45, 0.42])
    assert separated["difference"] == pytest.approx(0.65 - 0.42333333)
    assert separated["p_value"] == pytest.approx(0.1) and separated["exact"]
    low, high = separated["ci95"]
    assert 0 < low < separated["difference"] < high
    assert learning_ab.compare([0.70, 0.60, 0.65], [0.40, 0.45, 0.42]) == separated  # fixed seeds
    mixed = learning_ab.compare([0.5, 0.7, 0.3], [0.6, 0.4, 0.5])
    assert mixed["p_value"] > 0.5 and mixed["ci95"][0] < 0 < mixed["ci95"][1]
    assert learning_ab.compare([0.5, 0.5], [0.5, 0.5])["p_value"] == 1.0
    lone = learning_ab.compare([0.6], [0.4, 0.5])
    assert lone["difference"] == pytest.approx(0.15) and lone["p_value"] is None and lone["ci95"] is None


def _eval_json(heuristic_seat_wins: tuple[int, int]) -> str:
    def result(opponent: str, seat_wins: tuple[int, int]) -> dict:
        wins = sum(seat_wins)
        return {
            "agent": "trained",
            "opponent": opponent,
            "games": 20,
            "wins": wins,
            "draws": 0,
            "losses": 20 - wins,
            "win_rate": wins / 20,
            "by_seat": {f"player_{i}": {"wins": w, "draws": 0, "losses": 10 - w} for i, w in enumerate(seat_wins)},
        }

    return json.dumps(
        {
            "results": [
                result("random", (9, 10)),
                result("heuristic", heuristic_seat_wins),
                {"agent": "heuristic", "opponent": "random", "games": 20, "wins": 15, "win_rate": 0.75},
            ]
        }
    )


def test_own_evaluations_compared_seat_by_seat(runs: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    import shutil

    copies = []
    for number, seat_wins in enumerate([(8, 7), (9, 6), (2, 7), (3, 8)]):
        copy = tmp_path / f"run{number}"
        shutil.copytree(runs[number % 2], copy)
        (copy / "eval.json").write_text(_eval_json(seat_wins))
        copies.append(copy)
    out = tmp_path / "ab"
    learning_ab.main(
        [
            "--a",
            *map(str, copies[:2]),
            "--b",
            *map(str, copies[2:]),
            "--names",
            "lock",
            "async",
            "--own-evals",
            "--window",
            "128",
            "--out",
            str(out),
        ]
    )
    assert not (out / "evaluated").exists()  # nothing played
    record = json.loads((out / "learning_ab.json").read_text())
    assert record["own_evals"] and [e["results"]["heuristic"]["wins"] for e in record["arms"]["lock"]] == [15, 15]
    comparison = record["comparison"]
    assert set(comparison) == {"vs random", "vs heuristic", "vs heuristic as player_0", "vs heuristic as player_1"}
    assert comparison["vs heuristic as player_0"]["difference"] == pytest.approx((0.8 + 0.9 - 0.2 - 0.3) / 2)
    assert comparison["vs random"]["difference"] == 0 and comparison["vs random"]["p_value"] == 1.0
    table = (out / "learning_ab.md").read_text()
    assert "| lock | run0 | 19/20" in table and "| 8/10 | 7/10 |" in table
    assert "different games" not in table  # every eval.json here has the same (missing) settings
    assert "| vs heuristic as player_0 | 85.0% | 25.0% | +60.0% [" in table
    # A run without its final evaluation is named in one line.
    (copies[3] / "eval.json").unlink()
    with pytest.raises(SystemExit) as exit_info:
        learning_ab.main(["--a", str(copies[0]), "--b", str(copies[3]), "--own-evals", "--out", str(out)])
    assert exit_info.value.code == 2
