"""League training (``polarzoo.baselines.training.league_training``): PFSP's weights, the main
agent's opponent mixture, and a whole league run on the test-only fourth game (tic-tac-toe): its
record, its resumption, and the one-line refusal of other settings in the same folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from polarzoo.baselines.training.league_training import PFSP_FLOOR, LeagueConfig, main_opponents, pfsp_weights
from polarzoo.envs import register_game, unregister_game
from tests.games.tic_tac_toe import GAME

ENV_ID = GAME.id


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    register_game(GAME)
    yield
    unregister_game(ENV_ID)


def test_pfsp_weights_favour_the_exploiters_that_win() -> None:
    weights = pfsp_weights([0.9, 0.3, 0.0], power=2.0)
    assert sum(weights) == pytest.approx(1.0)
    assert weights[0] > weights[1] > weights[2] > 0  # the strongest first; none forgotten
    assert weights[2] == pytest.approx(PFSP_FLOOR * weights[0])
    assert weights[0] / weights[1] == pytest.approx((0.9 / 0.3) ** 2)
    assert pfsp_weights([0.0, 0.0], power=2.0) == [0.5, 0.5]  # nothing wins: equal
    assert pfsp_weights([0.5, 0.2], power=0.0) == [0.5, 0.5]  # power 0: plain fictitious play


def test_the_main_agents_opponents_are_the_shares_asked() -> None:
    config = LeagueConfig(env="fire_and_ice_v0", exploiter_share=0.5, past_share=0.2, heuristic_share=0.25)
    mixture = main_opponents(config, ["model:/e1", "model:/e2"], [0.5, 0.5], ["model:/m0"])
    assert sum(mixture.values()) == pytest.approx(1.0)
    assert mixture == {"heuristic": 0.25, "model:/e1": 0.25, "model:/e2": 0.25, "model:/m0": 0.2, "random": 0.05}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"rounds": 0}, "--rounds"),
        ({"exploiter_share": 0.7, "past_share": 0.3, "heuristic_share": 0.3}, "sum to at most 1"),
        ({"pfsp_power": -1.0}, "--pfsp-power"),
    ],
)
def test_bad_settings_are_refused(values: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LeagueConfig(env=ENV_ID, **values).check()


def test_a_league_trains_its_main_agent_and_continues_where_it_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
