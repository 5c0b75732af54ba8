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
from polarzoo.baselines.training import ppo  # noqa: E402
from tests.helpers import TIMEOUT_SCALE, scaled  # noqa: E402

GAME = "fire_and_ice_v0"
#: what differs between two runs of the same spec: the time they took
TIMING = ("train_seconds", "train_seconds_this_session", "evaluation_seconds_this_session")


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
    assert RunSpec("thin_ice_v0-multiplayer", "ppo-board", 1, "short") in runs
    assert len(runs) == 2 * (3 * 3 - 1 + 2) and runs[0].seed == 0 and runs[-1].seed == 1
    for game in protocol.GAMES:
        assert set(protocol.BUDGETS["short"][game]) >= {"ppo"}


@pytest.mark.parametrize("game", [game for game in protocol.GAMES if game not in protocol.TRACKS])
@pytest.mark.parametrize("algorithm", ["ppo-mlp", "ppo-board"])
def test_the_protocol_trains_as_the_published_runs_did(game: str, algorithm: str) -> None:
    """The protocol's PPO config is the one the committed runs were trained with, whatever the
    main job's defaults (hyperparams.yaml) became since."""
    published = Path(__file__).resolve().parents[1] / "docs" / "results" / "benchmark" / "short" / game / algorithm / "seed0"
    if not (published / "train" / "config.json").exists():
        pytest.skip(f"no published {game} {algorithm} run")
    published_config = json.loads((published / "train" / "config.json").read_text())
    # keys added to the config after the runs, at the value that trains as the code before them did
    assert protocol.ppo_config(game, algorithm, "short") == {**ppo.ADDED_KEYS, **published_config}


@pytest.mark.slow
def test_tiny_benchmark_end_to_end_survives_kill_9(leagues: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench"
    command = [
        sys.executable,
        "-m",
        "polarzoo.baselines.benchmark",
        "run",
        "--games",
        GAME,
        "--algorithms",
        "ppo-mlp",
        "ppo-board",
        "--seeds",
        "0",
        "1",
        "--budget",
        "tiny",
        "--out",
        str(out),
        "--leagues",
        str(leagues),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    first = out / "tiny" / GAME / "ppo-mlp" / "seed0" / "result.json"
    deadline = time.monotonic() + 300 * TIMEOUT_SCALE
    while not first.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert first.exists(), process.stderr.read() if process.poll() is not None else "no run finished in time"
    # Into the next run's training: killed as soon as it has written its first checkpoint (a
    # fixed wait let a fast machine finish the whole tiny run first).
    second = out / "tiny" / GAME / "ppo-board" / "seed0"
    while (
        not (second / "train" / "checkpoints" / "latest.safetensors").exists()
        and process.poll() is None
        and time.monotonic() < deadline
    ):
        time.sleep(0.01)
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
        straight / "tiny" / GAME / "ppo-board" / "seed0" / "result.json"
    )
    summary = json.loads((out / "tiny" / "aggregate.json").read_text())
    assert set(summary["iqm"]["rating"][GAME]) == {"ppo-mlp", "ppo-board"}
    assert all(entry[3] == 2 for entry in summary["iqm"]["rating"][GAME].values())  # 2 seeds each
    assert set(summary["probability_of_improvement"][GAME]) == {"ppo-mlp > ppo-board", "ppo-board > ppo-mlp"}
    # every PPO run is measured against a best response fine-tuned from its model (the tiny budget's
    # 15% of its training); the aggregate carries the column
    record = json.loads((out / "tiny" / GAME / "ppo-mlp" / "seed1" / "result.json").read_text())
    trained = json.loads((out / "tiny" / GAME / "ppo-mlp" / "seed1" / "train" / "training.json").read_text())
    assert record["exploit_timesteps"] == round(0.15 * trained["timesteps"]) and 0 <= record["exploitability"] <= 1
    assert (out / "tiny" / GAME / "ppo-mlp" / "seed1" / "exploit" / "br" / "model.zip").is_file()
    assert set(summary["iqm"]["exploitability"][GAME]) == {"ppo-mlp", "ppo-board"}
    assert "**exploitability (a best response's wins" in (out / "tiny" / "aggregate.md").read_text()
    for name in ("aggregate.md", "profiles.png", "curves.png"):
        assert (out / "tiny" / name).exists(), name
    # every part of the killed run's training counted (its checkpoint carries the seconds before)
    assert "Training time of the 4 runs that record it" in (out / "tiny" / "aggregate.md").read_text()
    killed = json.loads((out / "tiny" / GAME / "ppo-board" / "seed0" / "train" / "training.json").read_text())
    assert killed["seconds"] >= killed["seconds_this_part"] and killed["seconds_from"] == 0


@pytest.mark.slow
def test_the_ray_path_on_a_local_instance(leagues: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from polarzoo.baselines.benchmark.runner import run_all

    try:
        try:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        except Exception as error:  # noqa: BLE001 (Ray's own start-up deadline, on a loaded machine)
            pytest.skip(f"a local Ray instance did not start here: {type(error).__name__}: {str(error)[:200]}")
        specs = schedule([GAME], ["ppo-mlp"], [0], "tiny")
        results = run_all(specs, tmp_path / "ray", address="local", leagues=str(leagues), log=lambda _: None)
    finally:
        ray.shutdown()
    assert len(results) == 1
    local = tmp_path / "local"
    execute(specs[0], str(local), str(leagues))
    assert _result(specs[0].folder(tmp_path / "ray") / "result.json") == _result(specs[0].folder(local) / "result.json")


def test_cli_refuses_a_missing_league_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.benchmark",
            "run",
            "--games",
            GAME,
            "--leagues",
            str(tmp_path),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert result.returncode == 2 and "not a readable league file" in result.stderr and "Traceback" not in result.stderr


def test_a_new_league_version_rates_finished_runs_again_without_training(leagues: Path, tmp_path: Path) -> None:
    """A run rated against league v1, then a v2 with one member more: the same command rates its
    model again (no training; the v1 games it still needs kept) and ends where a fresh rating
    against v2 ends; runs whose model is not here keep their rating, and the aggregate says so."""
    import shutil

    from polarzoo.baselines.benchmark.aggregate import mixed_leagues, summarize
    from polarzoo.baselines.benchmark.runner import rerate_due

    newer = tmp_path / "leagues2"
    build(
        GAME,
        ["random", "mcts:4", "mcts:8", "heuristic"],
        games=4,
        out=newer / "build",
        version=2,
        bootstrap=20,
        show_progress=False,
    )
    (newer / f"{GAME}.json").write_text((newer / "build" / "league.json").read_text())
    spec = RunSpec(GAME, "ppo-mlp", 0, "tiny")
    out = tmp_path / "bench"
    first = execute(spec, str(out), str(leagues))
    assert first["league_version"] == 1 and not rerate_due(spec, out, str(leagues))
    trained = (spec.folder(out) / "train" / "training.json").stat().st_mtime_ns
    fresh = tmp_path / "fresh"  # the same model, never rated: rated against v2 from nothing
    shutil.copytree(spec.folder(out) / "train", spec.folder(fresh) / "train")
    shutil.copy(spec.folder(out) / "result.json", spec.folder(fresh) / "result.json")
    assert rerate_due(spec, out, str(newer))
    again = execute(spec, str(out), str(newer))
    assert again["league_version"] == 2 and not rerate_due(spec, out, str(newer))
    assert (spec.folder(out) / "train" / "training.json").stat().st_mtime_ns == trained  # not trained again
    opponents = {
        entry["opponent"] for entry in json.loads((spec.folder(out) / "rating" / "rating.json").read_text())["per_opponent"]
    }
    assert "mcts8" in opponents
    assert _result(spec.folder(fresh) / "result.json")["league_version"] == 1
    assert {k: v for k, v in execute(spec, str(fresh), str(newer)).items() if k not in TIMING} == {
        k: v for k, v in again.items() if k not in TIMING
    }
    # without its model a run keeps its old rating; the aggregate warns about the mix
    (spec.folder(fresh) / "train" / "model.zip").unlink()
    (spec.folder(fresh) / "result.json").write_text(json.dumps(first))
    assert not rerate_due(spec, fresh, str(newer)) and execute(spec, str(fresh), str(newer)) == first
    assert mixed_leagues(summarize([again, {**first, "seed": 1}])) and not mixed_leagues(summarize([again]))


def test_ctrl_c_in_a_runs_training_is_the_benchmarks_own_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run's trainer ends a Ctrl-C with SystemExit(130) after its checkpoint: the benchmark says
    what it keeps and that its own command continues (not the trainer's --resume)."""
    from polarzoo.baselines.benchmark import runner

    def interrupted(*args: object, **kwargs: object) -> None:
        raise SystemExit(130)

    monkeypatch.setattr(runner, "run_all", interrupted)
    with pytest.raises(SystemExit) as stop:
        runner.main(
            [
                "run",
                "--games",
                "fire_and_ice_v0",
                "--algorithms",
                "ppo-board",
                "--seeds",
                "0",
                "--budget",
                "tiny",
                "--out",
                str(tmp_path / "bench"),
            ]
        )
    err = capsys.readouterr().err
    assert stop.value.code == 130 and "the same command continues" in err and "--resume" not in err


def test_the_aggregate_depends_on_the_runs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """rliable's bootstrap draws from NumPy's global generator whatever its random_state: the
    aggregate seeds it (and puts the caller's state back), so the same runs give the same
    intervals in every process."""
    import numpy as np

    from polarzoo.baselines.benchmark import aggregate
    from polarzoo.baselines.benchmark.aggregate import load_results, summarize

    monkeypatch.setattr(aggregate, "REPS", 250)  # the published tables use 5,000
    published = Path(__file__).resolve().parents[1] / "docs" / "results" / "benchmark"
    results = load_results(published, "short")
    if not results:
        pytest.skip("no published runs")
    answers = []
    for state in (1, 2):
        np.random.seed(state)
        answers.append(summarize(results))
        assert np.random.randint(1 << 30) == np.random.RandomState(state).randint(1 << 30)  # the caller's stream, untouched
    assert answers[0] == answers[1]


def test_a_run_killed_during_its_first_checkpoint_starts_afresh(tmp_path: Path) -> None:
    """A kill between the model's rename and its state's write leaves ``latest.safetensors`` alone: there is
    nothing to resume, so the run trains from the start (it tried to resume and failed)."""
    from polarzoo.baselines.benchmark.runner import _has_checkpoint

    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "latest.safetensors").write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
    assert not _has_checkpoint(tmp_path)
    assert not _has_checkpoint(tmp_path / "missing")


def test_a_second_benchmark_run_on_one_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two `benchmark run` processes on one folder would write the same records twice: the
    second is one line naming the first (an OS file lock, freed when the first ends, even by kill -9)."""
    import fcntl

    from tests.test_cli_errors import run_main

    out = tmp_path / "bench"
    out.mkdir()
    with open(out / ".lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("pid 4242\n")
        held.flush()
        args = [
            "run",
            "--games",
            "fire_and_ice_v0",
            "--algorithms",
            "ppo-mlp",
            "--seeds",
            "0",
            "--budget",
            "tiny",
            "--out",
            str(out),
        ]
        result = run_main(capsys, "polarzoo.baselines.benchmark", *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "another `benchmark run` is already writing there (pid 4242)" in errors[0]
    assert not (out / "tiny").exists()


def test_an_unreachable_ray_address_is_one_line_at_once() -> None:
    import time

    from polarzoo.baselines.benchmark.runner import ray_address_problem

    started = time.perf_counter()
    assert "nothing answers there" in (ray_address_problem("127.0.0.1:1", timeout=2) or "")
    assert "nothing answers there" in (ray_address_problem("ray://127.0.0.1:1", timeout=2) or "")
    assert time.perf_counter() - started < 30
    assert "not a Ray address" in (ray_address_problem("my-cluster") or "")
    assert ray_address_problem("auto") is None and ray_address_problem("local") is None


def test_exploitability_by_the_models_seat_comes_from_the_best_responses_record(tmp_path: Path) -> None:
    """A two-player run's exploitability by the seat its model held (the best response held the
    other): what the Floe's bound reads (Black, where the game is won).  A result written before
    the column existed takes it from its best response's kept ``exploit.json``."""
    from polarzoo.baselines.benchmark.aggregate import exploitability_by_seat, load_results, markdown, summarize

    record = {"players": 2, "by_seat": {"black": {"win_rate": 1.0}, "white": {"win_rate": 0.08}}}
    assert exploitability_by_seat(record) == {"white": 1.0, "black": 0.08}
    assert exploitability_by_seat({"players": 3, "by_seat": {"0": {"win_rate": 0.5}}}) == {}
    crafted = {"players": 2, "by_seat": {"black": {"win_rate": "all"}, "white": []}}  # not a record: no column
    assert exploitability_by_seat(crafted) == exploitability_by_seat({"players": 2, "by_seat": [1, 2]}) == {}
    for seed, white_wins in enumerate((0.08, 0.1, 0.0)):
        run = tmp_path / "short" / "go_with_the_floe_v0" / "ppo-board" / f"seed{seed}"
        (run / "exploit").mkdir(parents=True)
        result = {"game": "go_with_the_floe_v0", "algorithm": "ppo-board", "seed": seed, "rating": 1450.0}
        result |= {"rating_ci95": [1400.0, 1500.0], "win_rate": {"random": 0.6}, "exploitability": (1 + white_wins) / 2}
        (run / "result.json").write_text(json.dumps(result))
        by_seat = {"black": {"win_rate": 1.0}, "white": {"win_rate": white_wins}}
        (run / "exploit" / "exploit.json").write_text(json.dumps({"players": 2, "by_seat": by_seat}))
    results = load_results(tmp_path, "short")
    assert [r["exploitability_as"]["black"] for r in results] == [0.08, 0.1, 0.0]
    summary = summarize(results)
    assert summary["iqm"]["exploitability:black"]["go_with_the_floe_v0"]["ppo-board"][0] == pytest.approx(
        0.06
    )  # 3 seeds: the mean
    assert summary["iqm"]["exploitability:white"]["go_with_the_floe_v0"]["ppo-board"][0] == 1.0
    assert "**exploitability of the run's model as black (the best response in the other seat)**" in markdown(summary)


def test_the_aggregate_says_when_a_cell_has_fewer_seeds_than_the_protocol() -> None:
    from polarzoo.baselines.benchmark.aggregate import markdown

    summary = {
        "iqm": {"rating": {"thin_ice_v0": {"ppo-board": [1500.0, 1500.0, 1500.0, 1], "ppo-mlp": [1400.0, 1350.0, 1450.0, 5]}}},
        "probability_of_improvement": {},
        "runs": 6,
    }
    text = markdown(summary)
    assert "| thin_ice_v0 | ppo-board | 1 of 5* | 1500 (one seed: no interval) |" in text
    assert "| thin_ice_v0 | ppo-mlp | 5 | 1400 [1350, 1450] |" in text
    assert "fewer seeds than the protocol's 5" in text


@pytest.mark.slow
def test_the_multiplayer_track_trains_on_every_table_and_scores_each(tmp_path: Path, monkeypatch) -> None:
    """Thin Ice's multi-player track on the tiny budget: trained on tables of 2-6 players (the MLP
    too: its observations are padded to six, in training and in play), scored at 2 players as
    every run and at each of the track's counts (first place and mean points against the
    heuristics, the league rating at that count); the aggregate has a table per count.  Scored at
    3 and 6 players here (the protocol's 3-6 cost four times the games)."""
    from polarzoo.baselines.benchmark import aggregate as aggregate_module
    from polarzoo.baselines.benchmark.aggregate import aggregate, summarize

    # The tables' shape is under test, not their intervals: 5,000 resamples a cell took 13 s of its 80.
    monkeypatch.setattr(aggregate_module, "REPS", 250)
    game, env_id, algorithm = "thin_ice_v0-multiplayer", "thin_ice_v0", "ppo-mlp"
    track = protocol.TRACKS[game]
    assert track.train_players == (2, 3, 4, 5, 6) and track.eval_players == (3, 4, 5, 6)
    monkeypatch.setitem(protocol.TRACKS, game, protocol.Track(env_id, track.train_players, (3, 6)))
    leagues = tmp_path / "leagues"
    members = ["random", "heuristic:1", "heuristic:2", "heuristic:3", "heuristic"]  # 6-player games need 5
    build(env_id, members, games=1, out=leagues / "build", bootstrap=20, show_progress=False)
    (leagues / f"{env_id}.json").write_text((leagues / "build" / "league.json").read_text())
    spec = RunSpec(game, algorithm, 0, "tiny")
    out = tmp_path / "bench"
    result = execute(spec, str(out), str(leagues))
    config = json.loads((spec.folder(out) / "train" / "config.json").read_text())
    assert config["env"] == env_id and config["env_kwargs"] == {"num_players": [2, 3, 4, 5, 6]}
    assert set(result["win_rate"]) == {"random", "heuristic"}  # the 2-player scores every run has
    assert set(result["by_players"]) == {"3", "6"}
    for players, scores in result["by_players"].items():
        assert scores["games"] == int(players)  # one game a rotation on the tiny budget
        low, high = scores["first_place_ci95"]
        assert 0.0 <= low <= scores["first_place"] <= high <= 1.0
        assert scores["rating_games"] >= 1 and scores["opponents"] == f"{int(players) - 1} x heuristic"
        lines = (spec.folder(out) / f"eval-{players}p" / "games.jsonl").read_text().splitlines()
        assert len(lines) == int(players) and all(len(json.loads(line)["seats"]) == int(players) for line in lines)
        rated = json.loads((spec.folder(out) / f"rating-{players}p" / "games.jsonl").read_text().splitlines()[0])
        assert len(rated["seats"]) == int(players)
    assert execute(spec, str(out), str(leagues)) == result  # finished: kept as it is
    summary = summarize([result])
    assert summary["iqm"]["players:6:first_place"][game][algorithm][3] == 1
    assert {"players:3:rating", "players:6:mean_points"} <= set(summary["iqm"])
    aggregate(out, "tiny")
    text = (out / "tiny" / "aggregate.md").read_text()
    assert "**first place at 6 players against 5 heuristics**" in text and "**league rating at 3 players**" in text


def test_a_damaged_result_is_said_and_the_run_finished_again_without_training(
    leagues: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``result.json`` that is not JSON (or not a run's result) is one warning line: the
    aggregate leaves that run out, and ``benchmark run`` finishes it again from its folder (its
    model kept, not trained again), ending with the result it had."""
    from polarzoo.baselines.benchmark.aggregate import load_results
    from polarzoo.baselines.benchmark.runner import run_all

    spec = RunSpec(GAME, "ppo-mlp", 0, "tiny")
    out = tmp_path / "bench"
    first = execute(spec, str(out), str(leagues))
    trained = (spec.folder(out) / "train" / "training.json").stat().st_mtime_ns
    for damage in ("{broken", '{"rating": 1500}'):
        (spec.folder(out) / "result.json").write_text(damage)
        assert load_results(out, "tiny") == []
        assert "result.json is damaged" in capsys.readouterr().err
        lines: list[str] = []
        again = run_all([spec], out, leagues=str(leagues), log=lines.append)
        assert any("is damaged" in line for line in lines) and "1 to run" in lines[1]
        assert {k: v for k, v in again[0].items() if k not in TIMING} == {k: v for k, v in first.items() if k not in TIMING}
        assert (spec.folder(out) / "train" / "training.json").stat().st_mtime_ns == trained  # not trained again
    (spec.folder(out) / "result.json").write_text("{broken")
    result = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.benchmark", "aggregate", "--out", str(out), "--budget", "tiny"],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "result.json is damaged" in result.stderr and "nothing to aggregate" in result.stderr


@pytest.mark.slow
def test_a_floe_run_is_scored_on_its_match_play_too(tmp_path: Path) -> None:
    """The Floe's kit names its match play: a run's result has its match win rate against the
    heuristic beside the single games', from matches (two games, sides swapped) kept apart from
    the single games in its games.jsonl; the aggregate tables it as its own opponent."""
    from polarzoo.baselines.benchmark.aggregate import summarize

    env_id = "go_with_the_floe_v0"
    leagues = tmp_path / "leagues"
    build(env_id, ["random", "heuristic"], games=2, out=leagues / "build", bootstrap=20, show_progress=False)
    (leagues / f"{env_id}.json").write_text((leagues / "build" / "league.json").read_text())
    spec = RunSpec(env_id, "ppo-mlp", 0, "tiny")
    result = execute(spec, str(tmp_path / "bench"), str(leagues))
    assert set(result["win_rate"]) == {"random", "heuristic", "heuristic-match"}
    games = [json.loads(line) for line in (spec.folder(tmp_path / "bench") / "eval" / "games.jsonl").read_text().splitlines()]
    matches = [g for g in games if g["opponent"] == "heuristic-match"]
    assert len(matches) == 2 and all(g["env_kwargs"] == {"match": True} for g in matches)
    assert all(not g.get("env_kwargs") for g in games if g["opponent"] == "heuristic")
    assert "win_rate:heuristic-match" in summarize([result])["iqm"]
