"""``benchmarks.rollout_seats``: two collectors' rollouts of one frozen policy compared seat by seat."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
pytest.importorskip("scipy")
rollout_seats = pytest.importorskip("benchmarks.rollout_seats")  # the repository's benchmarks/, run from its root


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from polarzoo.baselines.training import ppo

    config = ppo.load_config(
        "fire_and_ice_v0",
        {
            "n_envs": 2,
            "n_steps": 32,
            "batch_size": 64,
            "n_epochs": 1,
            "eval_every": 0,
            "total_timesteps": 64,
            "torch_threads": 1,
            "vec_env": "subproc",
            "bc_games": 0,
            "snapshot_every": 32,
        },
    )
    folder = tmp_path_factory.mktemp("runs") / "s0"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    return ppo.train(config, folder, seed=0, progress_bar=False, final_eval=False)


def test_equal_and_different_first_actions_and_returns() -> None:
    same = {"first_actions": Counter({0: 30, 1: 20, 2: 10, 7: 1}), "returns": [1.0, -1.0, 1.0, 0.0]}
    assert rollout_seats.compare_seat(same, same)["first_action_p"] == pytest.approx(1.0)
    assert rollout_seats.compare_seat(same, same)["first_action_classes"] == 4  # 7 is rare: pooled, still a class
    other = {"first_actions": Counter({0: 5, 1: 20, 2: 45}), "returns": [-1.0, -1.0, -0.5, -1.0]}
    test = rollout_seats.compare_seat(same, other)
    assert test["first_action_p"] < 1e-6 and test["returns_p"] < 0.1


def test_two_collectors_compared_per_seat(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "seats"
    rollout_seats.main(["--run", str(run), "--rollouts", "2", "--out", str(out)])
    record = json.loads((out / "rollout_seats.json").read_text())
    assert list(record["collectors"]) == ["lockstep", "async"]
    assert set(record["seats"]) == {"fire", "ice"}  # "alternate": the learner plays both
    for seats in record["collectors"].values():
        starts = sum(sum(seat["first_actions"].values()) for seat in seats.values())
        assert starts >= 2  # every env starts an episode in its first rollout
    for test in record["tests"].values():
        assert 0.0 <= test["first_action_p"] <= 1.0
    table = (out / "rollout_seats.md").read_text()
    assert "| fire | lockstep |" in table and "| ice | async |" in table and "chi-square p" in table
    # A collector's rollouts depend on the seed only: the same numbers again.
    again = rollout_seats.collect(run, "async", 2, 1)
    assert {seat: sorted(v["returns"]) for seat, v in again.items()} == {
        seat: sorted(v["returns"]) for seat, v in record["collectors"]["async"].items()
    }


def test_a_folder_that_is_not_a_run_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        rollout_seats.main(["--run", str(tmp_path)])
    assert exit_info.value.code == 2
    assert f"{tmp_path}: not a finished training run" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        rollout_seats.main(["--run", str(tmp_path), "--rollouts", "0"])
    assert exit_info.value.code == 2
    assert "--rollouts must be at least 1" in capsys.readouterr().err
