"""The replay module (``polarzoo.baselines.play.replay``) and what it reads: records of
``games.jsonl`` that keep the env's seed and every action, played again position by position
into exactly the env's own positions; damaged or foreign records refused with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from polarzoo.baselines.play import replay as replays
from polarzoo.baselines.play.board import position
from polarzoo.envs import ENVIRONMENTS
from tests.helpers import scaled  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0"])
def test_replayed_positions_are_the_envs(env_id: str) -> None:
    record = replays.record_game(env_id, ["random", "heuristic"], seed=3, opening_plies=2)
    data = replays.replay(record)
    assert len(data["frames"]) == len(record["actions"]) + 1
    env = ENVIRONMENTS[env_id].raw_env()
    env.reset(seed=3)
    for ply, action in enumerate(record["actions"], 1):
        notation = env.action_to_notation(action)  # Go with the Floe's depends on the position: a capture is "x"
        env.step(action)
        frame = data["frames"][ply]
        assert frame["svg"] == position(env)["svg"], ply
        assert frame["notation"] == notation
    assert "wins" in data["result"] or "draw" in data["result"]


def test_thin_ice_replay_has_pictures_and_piles() -> None:
    record = replays.record_game("thin_ice_v0", ["random"], seed=1, env_kwargs={"num_players": 3})
    assert len(record["seats"]) == 3 and record["env_kwargs"] == {"num_players": 3}
    urls = []
    data = replays.replay(record, picture=lambda env, ply: urls.append(ply) or f"{ply}.png")
    assert urls == list(range(len(record["actions"]) + 1))
    assert [p["agent"] for p in data["frames"][0]["players"]] == ["player_0", "player_1", "player_2"]
    last = data["frames"][-1]["players"]
    assert all(p["points"] is not None for p in last)  # the game ended: points for every pile
    assert any(p["out"] in ("T", "A", "N") for p in last) or data["result"]


def test_evaluate_records_replay(tmp_path: Path) -> None:
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.evaluation.evaluate import evaluate

    evaluate(
        "go_with_the_floe_v0",
        [],
        2,
        tmp_path,
        seed=5,
        agents=[make_agent("heuristic", "go_with_the_floe_v0"), make_agent("random", "go_with_the_floe_v0")],
        show_progress=False,
    )
    records = replays.read_records((tmp_path / "games.jsonl").read_text())
    assert len(records) == 4 and all("actions" in r and "env_seed" in r for r in records)
    for record in records:
        data = replays.replay(record)
        outcome = data["result"]
        seat = record["agent_seat"]
        mover = data["seats"][seat]
        assert (f"{mover} wins" in outcome) == (record["result"] == "win"), (record, outcome)


def test_refusals() -> None:
    with pytest.raises(replays.ReplayError, match="no game records"):
        replays.read_records("\n\n")
    with pytest.raises(replays.ReplayError, match=":2: not JSON"):
        replays.read_records('{"env": "fire_and_ice_v0"}\n{oops\n')
    with pytest.raises(replays.ReplayError, match="not a game record"):
        replays.read_records("[1, 2]\n")
    old = {"env": "fire_and_ice_v0", "seed": 0, "agent": "a", "opponent": "b", "agent_seat": 0, "game": 0, "result": "win"}
    with pytest.raises(replays.ReplayError, match="no moves"):
        replays.replay(old)
    with pytest.raises(replays.ReplayError, match="does not name its env"):
        replays.replay({"seats": ["a", "b"], "env_seed": 0, "actions": []})
    with pytest.raises(replays.ReplayError, match="no replay viewer"):
        replays.replay({"env": "fire_and_ice_solitaire_v0", "env_seed": 0, "actions": []})
    record = replays.record_game("fire_and_ice_v0", ["random"], seed=0)
    foreign = dict(record, actions=[record["actions"][0], record["actions"][0]])
    with pytest.raises(replays.ReplayError, match="illegal"):
        replays.replay(foreign)
    with pytest.raises(replays.ReplayError, match="ended before"):
        replays.replay(dict(record, actions=record["actions"] + [0]))
    with pytest.raises(replays.ReplayError, match="damaged"):
        replays.replay(dict(record, actions=[1.5]))


def test_export_cli(tmp_path: Path) -> None:
    games = tmp_path / "games.jsonl"
    record = replays.record_game("fire_and_ice_v0", ["heuristic", "random"], seed=2)
    games.write_text(json.dumps(record) + "\n")
    run = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.play.replay", "export", str(games), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=scaled(300),
    )
    assert run.returncode == 0, run.stderr
    data = json.loads((tmp_path / "out" / "fire_and_ice_v0.json").read_text())
    assert len(data["frames"]) == len(record["actions"]) + 1
    bad = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.play.replay", "export", str(games), "--game", "4"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=scaled(300),
    )
    assert bad.returncode == 2 and "has 1 records" in bad.stderr and "Traceback" not in bad.stderr


def test_documentation_replays_are_current() -> None:
    """The env pages' recorded games still replay to the positions they show (an env change that
    moves a position must re-record them: docs/replays/README.md)."""
    for env_id in ("fire_and_ice_v0", "go_with_the_floe_v0"):
        data = json.loads((ROOT / "docs" / "replays" / f"{env_id}.json").read_text())
        env = ENVIRONMENTS[env_id].raw_env()
        env.reset(seed=0)
        for frame in data["frames"][1:]:
            env.step(env.notation_to_action(frame["notation"]))
            assert frame["svg"] == position(env)["svg"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["record", "--agents", "grandmaster"], "unknown agent spec"),
        (["record", "--env", "fire_and_ice_v0", "--players", "3"], "--players is for thin_ice_v0 only"),
        (["export", "/nonexistent/games.jsonl"], "cannot read /nonexistent/games.jsonl"),
        (["record", "--agents", "random", "--out", "/proc/polarzoo"], "cannot write the replay to /proc/polarzoo"),
    ],
)
def test_replay_cli_mistakes_are_one_line(args: list[str], words: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.play.replay", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=scaled(300),
    )
    assert run.returncode != 0 and words in run.stderr and "Traceback" not in run.stderr, run.stderr
