"""League training (``polarzoo.baselines.training.league_training``): PFSP's weights, the main
agent's opponent mixture and the settings' checks (a whole league, resumed and continued, runs on
the test-only fourth game in ``tests/test_a_fourth_game.py``)."""

from __future__ import annotations

import pytest

from polarzoo.baselines.training.league_training import PFSP_FLOOR, LeagueConfig, main_opponents, pfsp_weights


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
        ({"exploiters_per_round": 0}, "--exploiters-per-round"),
        ({"average_last": 0}, "--average-last must be from 1 to --rounds"),
        ({"rounds": 2, "average_last": 3}, "--average-last must be from 1 to --rounds \\(2\\)"),
    ],
)
def test_bad_settings_are_refused(values: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LeagueConfig(env="fire_and_ice_v0", **values).check()


def test_the_main_agent_keeps_the_games_seat_weights_and_an_exploiter_plays_every_seat(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Floe's kit trains White three episodes in four; an exploiter alternates seats."""
    import json

    from polarzoo.baselines.training import league_training

    monkeypatch.setattr(league_training, "train", lambda *args, **kwargs: None)  # the configs only
    config = LeagueConfig(env="go_with_the_floe_v0")
    for name, exploiter in (("main", False), ("exploiter", True)):
        league_training.phase(config, tmp_path / name, "pretrained", {"heuristic": 1.0}, 2048, 0, "", exploiter=exploiter)
    main = json.loads((tmp_path / "main" / "config.json").read_text())
    exploiter_config = json.loads((tmp_path / "exploiter" / "config.json").read_text())
    assert main["learner_seat"] == {"white": 3, "black": 1} and exploiter_config["learner_seat"] == "alternate"
    assert main["bc_games"] == 0 and main["init_model"] == "pretrained" and main["opponents"] == {"heuristic": 1.0}


@pytest.mark.parametrize(
    "content",
    ["[1, 2]", '{"config": {}, "rounds": [{"round": 2}]}', '{"rounds": []}', "not json"],
    ids=["a list", "rounds out of order", "no config", "not json"],
)
def test_a_folder_whose_record_is_not_a_league_is_refused_in_one_line(
    tmp_path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from polarzoo.baselines.training.league_training import main

    (tmp_path / "league.json").write_text(content)
    with pytest.raises(SystemExit) as stop:
        main(["--env", "fire_and_ice_v0", "--out", str(tmp_path)])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and ("league record" in error or "not a league training" in error)
    assert "Traceback" not in error and (tmp_path / "league.json").read_text() == content  # left as it was


def test_a_starting_model_of_another_game_is_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    from polarzoo.baselines.agents import pretrained_path
    from polarzoo.baselines.training.league_training import main

    with pytest.raises(SystemExit) as stop:
        main(["--env", "fire_and_ice_v0", "--init", str(pretrained_path("go_with_the_floe_v0")), "--out", str(tmp_path / "l")])
    error = capsys.readouterr().err
    assert stop.value.code == 2 and "--init" in error and "does not fit" in error and "Traceback" not in error
    assert not (tmp_path / "l" / "round1" / "exploiter" / "model.zip").exists()  # nothing trained


def test_a_missing_starting_model_is_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from polarzoo.baselines.training.league_training import main

    with pytest.raises(SystemExit) as stop:
        main(["--env", "fire_and_ice_v0", "--init", str(tmp_path / "missing.zip"), "--out", str(tmp_path / "l")])
    assert stop.value.code == 2 and "no such model file" in capsys.readouterr().err
