"""A fourth game is one folder and its registration: tic-tac-toe (``tests/games/tic_tac_toe``,
written to the same rules interface as the shipped games and registered through the same facts)
passes PettingZoo's API test and is played by ``evaluate``, rated in a small league, played in the
terminal and in the web app (its API and, with Chromium, by clicks), and shown in the replay
viewer; ``train``, ``league exploit``, league training and a tiny benchmark take it from its kit;
with no file outside its folder naming it."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test

from polarzoo.envs import ENVIRONMENTS, GAMES, register_game, unregister_game
from tests.games.tic_tac_toe import GAME
from tests.games.tic_tac_toe import env as tic_tac_toe

ROOT = Path(__file__).resolve().parents[1]
ENV_ID = GAME.id


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    register_game(GAME)
    yield
    unregister_game(ENV_ID)


def test_nothing_outside_its_folder_names_it() -> None:
    tracked = subprocess.run(
        [
            "git",
            "grep",
            "-l",
            "tic_tac_toe",
            "--",
            ".",
            ":!tests/games",
            ":!tests/test_a_fourth_game.py",
            ":!CHANGELOG.md",
            ":!docs",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if tracked.returncode not in (0, 1):
        pytest.skip("not a git checkout")
    assert tracked.stdout.split() == []


def test_it_is_registered_like_the_others() -> None:
    assert GAMES[ENV_ID] is GAME and ENVIRONMENTS[ENV_ID] is tic_tac_toe
    with pytest.raises(ValueError, match="already registered"):
        register_game(GAME.__class__(**{**GAME.__dict__, "title": "another"}))


def test_pettingzoo_api() -> None:
    api_test(tic_tac_toe.env(), num_cycles=200)


def test_evaluate_plays_it(tmp_path: Path) -> None:
    from polarzoo.baselines.evaluation.evaluate_cli import main

    main(["--env", ENV_ID, "--agents", "random", "mcts:60", "--games", "6", "--out", str(tmp_path), "--no-progress"])
    result = json.loads((tmp_path / "eval.json").read_text())
    assert result["env"] == ENV_ID
    games = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert len(games) == 12 and all(g["env"] == ENV_ID and g["actions"] for g in games)


def test_a_small_league_rates_it(tmp_path: Path) -> None:
    from polarzoo.baselines.evaluation.league_cli import main

    main(
        [
            "build",
            "--env",
            ENV_ID,
            "--members",
            "random",
            "mcts:10",
            "mcts:200",
            "--games",
            "8",
            "--bootstrap",
            "50",
            "--out",
            str(tmp_path / "league"),
            "--no-progress",
        ]
    )
    league = json.loads((tmp_path / "league" / "league.json").read_text())
    ratings = league["ratings"]
    assert league["env"] == ENV_ID and ratings["mcts200"] > ratings["random"]
    main(
        [
            "rate",
            "--env",
            ENV_ID,
            "--agent",
            "mcts:50",
            "--league",
            str(tmp_path / "league" / "league.json"),
            "--max-games",
            "12",
            "--min-rounds",
            "2",
            "--out",
            str(tmp_path / "rate"),
        ]
    )
    rating = json.loads((tmp_path / "rate" / "rating.json").read_text())
    assert rating["env"] == ENV_ID and np.isfinite(rating["rating"])


def test_a_person_plays_it_in_the_terminal() -> None:
    from polarzoo.baselines.play.terminal import HumanGame

    lines: list[str] = []
    inputs = iter(["b2", "b2", "undo", "b2"])  # a move, the same cell again (taken), undo, the move again

    def read(prompt: str) -> str | None:
        text = next(inputs, None)
        if text is not None:
            return text
        mask = game.env.legal_action_mask()
        return game.env.action_to_notation(int(np.flatnonzero(mask)[0]))

    game = HumanGame(ENV_ID, "x", "random", 3, {}, read=read, write=lines.append)
    assert game.run() == 0
    text = "\n".join(lines)
    assert "e.g. b2" in text and "illegal: b2 is taken" in text and "undone" in text
    assert lines[-1] in ("x wins", "o wins", "draw")


def test_the_web_app_plays_it() -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from polarzoo.baselines.play.web import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as client:
        info = client.get("/api/info").json()
        assert info["games"][ENV_ID]["title"] == "Tic-tac-toe"
        game = client.post("/api/games", json={"env": ENV_ID, "seat": "x", "opponent": "mcts:50"}).json()
        assert game["svg"].startswith("<svg") and {m["to"] for m in game["legal"]} == set(range(9))
        assert all("from" not in m for m in game["legal"])
        game = client.post(f"/api/games/{game['id']}/move", json={"notation": "b2", "ply": 0}).json()
        taken = client.post(f"/api/games/{game['id']}/move", json={"action": 4, "ply": len(game["moves"])})
        assert taken.status_code == 400 and "b2 is taken" in taken.json()["error"]
        game = client.post(f"/api/games/{game['id']}/undo", json={"ply": len(game["moves"])}).json()
        assert game["moves"] == [] and not game["can_undo"]
        while not game["over"]:
            move = game["legal"][0]
            game = client.post(f"/api/games/{game['id']}/move", json={"action": move["action"], "ply": len(game["moves"])}).json()
        assert game["result"] in ("x wins", "o wins", "draw")


def test_the_replay_viewer_shows_it(tmp_path: Path) -> None:
    from polarzoo.baselines.play import replay as replays

    record = replays.record_game(ENV_ID, ["mcts:30", "random"], seed=5)
    shown = replays.replay(record)
    env = tic_tac_toe.raw_env()
    env.reset(seed=5)
    for frame, action in zip(shown["frames"][1:], record["actions"]):
        env.step(action)
        assert frame["svg"] == env.describe()["svg"] and frame["notation"] == env.action_to_notation(action)
    path = replays.export(record, tmp_path, "ttt")
    assert json.loads(path.read_text())["env"] == ENV_ID


def test_window_and_piles_facts_are_read_not_assumed() -> None:
    from polarzoo.baselines.play.window import window_games

    assert ENV_ID not in window_games()  # its facts say no window: the terminal and the page play it


@pytest.mark.skipif(sys.platform != "linux", reason="the browser test runs where CI does")
def test_a_whole_game_by_clicks_in_the_browser(tmp_path: Path) -> None:
    """The page itself: placements are clicked on their cells (the page knows no game by name)."""
    from tests import test_web

    if test_web.CHROMIUM is None:
        pytest.skip("no Chromium (Debian: apt-get install chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    uvicorn = pytest.importorskip("uvicorn")
    import threading
    import time

    from polarzoo.baselines.play.web import create_app

    port = test_web.free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=test_web.CHROMIUM, args=flags)
            page = browser.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            test_web.start(page, f"http://127.0.0.1:{port}", ENV_ID, "x", opponent="random")
            for _ in range(9):
                test_web.settle(page)
                if page.inner_text("#result").strip():
                    break
                page.locator("g.cell.target").first.click()
            test_web.settle(page)
            assert page.inner_text("#result").strip() in ("x wins", "o wins", "draw")
            game: dict[str, Any] = page.evaluate("window.polarzoo.game")
            assert game["over"] and not errors
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_the_add_a_game_page_is_this_game() -> None:
    """docs/add_a_game.md's example is this game: its GameInfo block builds the same facts, and its
    registration block registers it (the page stays true as the interface changes)."""
    import re

    page = (ROOT / "docs" / "add_a_game.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    facts = next(block for block in blocks if "GAME = GameInfo(" in block)
    namespace: dict[str, Any] = {}
    exec(compile(facts, "docs/add_a_game.md", "exec"), namespace)  # the page's own code
    assert namespace["GAME"] == GAME
    registration = next(block for block in blocks if "register_game(GAME)" in block)
    exec(compile(registration, "docs/add_a_game.md", "exec"), {})  # registered already: the same facts are accepted
    assert GAMES[ENV_ID] == GAME
    entry = re.search(r'\[project.entry-points."polarzoo.games"\]\n(\w+) = "([\w.]+):GAME"', page)
    assert entry is not None


def test_train_learns_it_from_its_kit(tmp_path: Path) -> None:
    """``train`` takes the game's settings and heuristic from its kit (``GameInfo.kit``): the
    opponents, the budget, the network and the final evaluation against random and the heuristic."""
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.training.config import load_config
    from polarzoo.baselines.training.ppo_cli import main

    config = load_config(ENV_ID)
    assert config["policy"] == "mlp" and config["total_timesteps"] == 4_096  # the kit's, over TrainConfig's
    main(["--env", ENV_ID, "--runs", str(tmp_path), "--run-name", "run", "--seed", "1", "--no-progress"])
    rows = {
        row["opponent"]: row
        for row in json.loads((tmp_path / "run" / "eval.json").read_text())["results"]
        if row["agent"] == "trained"
    }
    assert set(rows) == {"random", "heuristic"}
    assert rows["random"]["wins"] > rows["random"]["losses"]  # 4,096 timesteps learn to beat random play


def test_league_exploit_trains_best_responses_to_its_heuristic(tmp_path: Path) -> None:
    """``league exploit`` with the kit's budget and openings, two seeds pooled."""
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.training.exploit import main

    out = tmp_path / "x"
    main(
        [
            "--env",
            ENV_ID,
            "--agent",
            "heuristic",
            "--games",
            "4",
            "--no-rate",
            "--seeds",
            "0",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    for seed in (0, 1):
        result = json.loads((out / f"seed{seed}" / "exploit.json").read_text())
        assert result["timesteps"] == 2_048 and result["opening_plies"] == 1 and result["seed"] == seed  # the kit's
        assert result["compute"]["agent_timesteps"] is None  # a heuristic has no training record
    summary = json.loads((out / "exploit.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["overall"]["games"] == 16
    assert summary["overall"]["wins"] == sum(row["wins"] for row in summary["per_seed"])
    assert summary["opening_plies"] == 1 and all(1 <= row["distinct_games"] <= 8 for row in summary["per_seed"])
    assert "games opened by 1 random ply" in (out / "exploit.md").read_text()


def test_a_tiny_benchmark_runs_it_on_its_kits_budget(tmp_path: Path) -> None:
    """The benchmark takes a game the published protocol does not name from its kit's budgets
    (``Kit.benchmark``) and rates the run against the game's own league (``--leagues``)."""
    pytest.importorskip("sb3_contrib")
    import shutil

    from polarzoo.baselines.benchmark.runner import main as benchmark
    from polarzoo.baselines.evaluation.league_cli import main as league

    league(["build", "--env", ENV_ID, "--members", "random", "heuristic", "mcts:30", "--games", "6", "--bootstrap", "30",
            "--out", str(tmp_path / "league"), "--no-progress"])  # fmt: skip
    (tmp_path / "leagues").mkdir()
    shutil.copy(tmp_path / "league" / "league.json", tmp_path / "leagues" / f"{ENV_ID}.json")
    benchmark(["run", "--games", ENV_ID, "--algorithms", "ppo-mlp", "--seeds", "0", "--budget", "tiny",
               "--out", str(tmp_path / "bench"), "--leagues", str(tmp_path / "leagues")])  # fmt: skip
    result = json.loads((tmp_path / "bench" / "tiny" / ENV_ID / "ppo-mlp" / "seed0" / "result.json").read_text())
    assert result["game"] == ENV_ID and np.isfinite(result["rating"]) and set(result["win_rate"]) == {"random", "heuristic"}
    # a budget its kit does not declare: one line before any training
    with pytest.raises(SystemExit) as stop:
        benchmark(["run", "--games", ENV_ID, "--algorithms", "ppo-mlp", "--seeds", "0", "--budget", "short",
                   "--out", str(tmp_path / "bench2"), "--leagues", str(tmp_path / "leagues")])  # fmt: skip
    assert stop.value.code == 2 and not (tmp_path / "bench2" / "short").exists()


def test_league_training_trains_it_and_continues_where_it_stopped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two rounds on tic-tac-toe from a briefly trained start: each round's exploiter, measurements
    and main agent are recorded; the same command again redoes nothing; other settings in the same
    folder are one line; more rounds go on from the last main agent."""
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.training.league_training import main
    from polarzoo.baselines.training.ppo_cli import main as train_main

    train_main(["--env", ENV_ID, "--runs", str(tmp_path), "--run-name", "start", "--total-timesteps", "512",
                "--no-final-eval", "--eval-every", "0", "--no-progress"])  # fmt: skip
    start = tmp_path / "start" / "model.zip"
    out = tmp_path / "league"
    argv = ["--env", ENV_ID, "--init", str(start), "--rounds", "2", "--exploiter-timesteps", "256", "--main-timesteps",
            "256", "--measure-games", "2", "--eval-games", "2", "--out", str(out)]  # fmt: skip
    main(argv)
    record = json.loads((out / "league.json").read_text())
    assert [r["round"] for r in record["rounds"]] == [1, 2]
    second = record["rounds"][1]
    assert len(second["measured"]) == 2  # both exploiters measured against main 1
    assert second["exploitability"] == second["measured"][-1]
    # the second main agent trains against both exploiters, main 0 and main 1, the heuristic and random
    assert sum(second["opponents"].values()) == pytest.approx(1.0)
    assert set(second["opponents"]) == {
        "heuristic",
        "random",
        "model:round1/exploiter/model.zip",
        "model:round2/exploiter/model.zip",
        f"model:{start.resolve()}",
        "model:round1/main/model.zip",
    }
    training = json.loads((out / "training.json").read_text())
    assert training["main_timesteps"] == 512 and training["league_timesteps"] == training["timesteps"] + 512
    assert (out / "model.safetensors").is_file() and (out / "progress.csv").read_text().count("\n") == 3

    capsys.readouterr()
    main(argv)  # finished: nothing is trained again
    assert "trained" not in capsys.readouterr().out
    assert json.loads((out / "league.json").read_text()) == record

    with pytest.raises(SystemExit) as error:
        main([*argv[:-2], "--pfsp-power", "1", "--out", str(out)])
    assert error.value.code == 2
    assert "other settings (pfsp_power)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*argv[:5], "1", *argv[6:]])  # fewer rounds than it holds
    assert "holds 2 rounds already" in capsys.readouterr().err

    main([*argv[:5], "3", *argv[6:]])  # more rounds: the league goes on from main 2
    record = json.loads((out / "league.json").read_text())
    assert [r["round"] for r in record["rounds"]] == [1, 2, 3] and record["config"]["rounds"] == 3
    assert record["rounds"][2]["opponents"]["model:round2/main/model.zip"] > 0

    # the result as the mean of the last two main agents' weights: nothing is trained again
    main([*argv[:5], "3", *argv[6:], "--average-last", "2"])
    assert json.loads((out / "training.json").read_text())["averaged_rounds"] == [2, 3]

    def weights(path: Path) -> dict:
        with zipfile.ZipFile(path) as archive:
            return torch.load(io.BytesIO(archive.read("policy.pth")), weights_only=True)

    import torch

    mean, two, three = (weights(p) for p in (out / "model.zip", out / "round2/main/model.zip", out / "round3/main/model.zip"))
    assert all(torch.equal(mean[k], (two[k] + three[k]) / 2) for k in mean if mean[k].is_floating_point())
    assert [r["round"] for r in json.loads((out / "league.json").read_text())["rounds"]] == [1, 2, 3]
    with pytest.raises(SystemExit):
        main([*argv[:5], "3", *argv[6:], "--average-last", "4"])
    assert "--average-last must be from 1 to --rounds (3), got 4" in capsys.readouterr().err


def test_league_training_with_several_exploiters_a_round(tmp_path: Path) -> None:
    """Two exploiters a round, each on its own seed: both join the league, both are measured, the
    round's exploitability is the better one's; a league saved before the setting existed continues."""
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.training.league_training import main
    from polarzoo.baselines.training.ppo_cli import main as train_main

    train_main(["--env", ENV_ID, "--runs", str(tmp_path), "--run-name", "start", "--total-timesteps", "256",
                "--no-final-eval", "--eval-every", "0", "--no-progress"])  # fmt: skip
    out = tmp_path / "league"
    argv = ["--env", ENV_ID, "--init", str(tmp_path / "start" / "model.zip"), "--rounds", "1", "--exploiter-timesteps",
            "256", "--exploiters-per-round", "2", "--main-timesteps", "256", "--measure-games", "2", "--eval-games", "2",
            "--out", str(out)]  # fmt: skip
    main(argv)
    first = json.loads((out / "league.json").read_text())["rounds"][0]
    assert first["exploiter"]["model"] == "round1/exploiter/model.zip"
    assert [e["model"] for e in first["more_exploiters"]] == ["round1/exploiter2/model.zip"]
    assert len(first["measured"]) == 2 and first["exploitability"] == max(first["measured"])
    assert {"model:round1/exploiter/model.zip", "model:round1/exploiter2/model.zip"} <= set(first["opponents"])
    training = json.loads((out / "training.json").read_text())
    assert training["league_timesteps"] == training["timesteps"] + 512

    single = tmp_path / "single"  # a one-exploiter league whose record predates the setting
    one = [*argv[:-2], "--out", str(single)]
    one[one.index("--exploiters-per-round") + 1] = "1"
    main(one)
    record = json.loads((single / "league.json").read_text())
    del record["config"]["exploiters_per_round"]
    (single / "league.json").write_text(json.dumps(record))
    main([*one[:5], "2", *one[6:]])
    assert [r["round"] for r in json.loads((single / "league.json").read_text())["rounds"]] == [1, 2]
