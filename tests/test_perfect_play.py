"""``polarzoo-perfect``: sizes, proofs and accuracy written to a run folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polarzoo.baselines.evaluation import perfect_play
from polarzoo.baselines.evaluation.perfect_play import judge_game
from polarzoo.envs.go_with_the_floe import rules
from polarzoo.envs.go_with_the_floe.solver import FloeSolver


def test_judge_counts_a_thrown_away_win_as_a_mistake() -> None:
    solver = FloeSolver(16)
    start = rules.initial_state()
    winning = solver.solve(start).move
    # a first move after which White wins with perfect play, if there is one; else every move keeps it
    # (a budget per search: a first move that keeps the win can take long to prove)
    losing = [
        int(a) for a in rules.legal_actions(start) if solver.solve(rules.apply(start, int(a)), node_limit=20_000).value == 1
    ]
    kept = judge_game("go_with_the_floe_v0", [winning], [0], solver, 20_000, 49)
    assert (kept["won"], kept["kept"], kept["mistakes"]) == (1, 1, 0)
    if losing:
        lost = judge_game("go_with_the_floe_v0", [losing[0]], [0], solver, 20_000, 49)
        assert (lost["won"], lost["kept"], lost["mistakes"]) == (1, 0, 1)
    # White's moves are not judged when only Black's seat is asked for
    assert judge_game("go_with_the_floe_v0", [winning], [1], solver, 20_000, 49)["moves"] == 0
    reply = int(rules.legal_actions(rules.apply(start, winning))[0])
    assert judge_game("go_with_the_floe_v0", [winning, reply], [1], solver, 20_000, 49)["moves"] == 1
    # the opening's random plies are nobody's moves
    assert judge_game("go_with_the_floe_v0", [winning, reply], [0, 1], solver, 20_000, 49, opening=2)["moves"] == 0


def test_accuracy_writes_its_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    perfect_play.main(
        ["accuracy", "--env", "go_with_the_floe_v0", "--agents", "random", "heuristic", "--games", "2",
         "--node-limit", "20000", "--table-bits", "16", "--runs", str(tmp_path), "--run-name", "acc", "--no-progress"]
    )  # fmt: skip
    result = json.loads((tmp_path / "acc" / "accuracy.json").read_text())
    assert set(result["agents"]) == {"random", "heuristic"}
    assert len((tmp_path / "acc" / "games.jsonl").read_text().splitlines()) == 4
    for row in result["agents"].values():
        assert row["kept"] + row["mistakes"] + row["move_undecided"] == row["won"]
        assert row["won"] + row["lost"] + row["undecided"] == row["in_reach"] <= row["moves"]
    assert "| `heuristic` |" in (tmp_path / "acc" / "accuracy.md").read_text()


def test_size_and_solve_runs(tmp_path: Path) -> None:
    perfect_play.main(["size", "--plies", "2", "--games", "100", "--runs", str(tmp_path), "--run-name", "size"])
    size = json.loads((tmp_path / "size" / "size.json").read_text())
    assert size["paths"] == [1, 16, 256]
    perfect_play.main(
        [
            "solve",
            "--plies",
            "1",
            "--table-bits",
            "16",
            "--node-limit",
            "20000",
            "--runs",
            str(tmp_path),
            "--run-name",
            "solve",
            "--no-progress",
        ]
    )
    solved = json.loads((tmp_path / "solve" / "solve.json").read_text())
    assert solved["start"] == {"winner": "black", "depth": 5}
    assert solved["openings"][0]["positions"] == 16 and len(solved["openings"][0]["first_moves"]) == 16


@pytest.mark.parametrize(
    "argv, message",
    [
        (["accuracy", "--env", "go_with_the_floe_v0", "--agents", "random", "--games", "3"], "even"),
        (["accuracy", "--env", "go_with_the_floe_v0", "--agents", "nonsense"], "unknown agent spec"),
        (["solve", "--plies", "0"], "--plies"),
        (["solve", "--table-bits", "40"], "--table-bits"),
        (["accuracy", "--env", "fire_and_ice_v0", "--agents", "random", "--max-empty", "-1"], "--max-empty"),
        (["match", "--max-depth", "0"], "--max-depth"),
        (["match", "--node-limit", "0"], "--node-limit"),
    ],
)
def test_bad_values_are_one_line(tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        perfect_play.main([*argv, "--runs", str(tmp_path)])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
