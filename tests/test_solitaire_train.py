"""baselines.solitaire_train: labels are proven winning captures; the CLI trains and saves a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from polarzoo.baselines.training.solitaire import BudgetSolver, demonstrations, winning_captures
from polarzoo.envs.fire_and_ice import solitaire_rules
from polarzoo.envs.fire_and_ice.solitaire_env import FireAndIceSolitaireEnv
from polarzoo.envs.fire_and_ice.solitaire_solver import is_solvable, solve


def test_labelled_captures_are_winning_and_the_solvers_move_is_among_them() -> None:
    env = FireAndIceSolitaireEnv()
    env.reset(seed=7)
    state = env.state
    solver = BudgetSolver(10_000)
    for action in solve(state).solution[:6]:  # the first positions (28 pegs) cost most to check: start a little in
        state = solitaire_rules.apply(state, action)
    for _ in range(14):  # walk the solver's line; the late positions are cheap to check exhaustively
        line = solve(state).solution
        wins = winning_captures(solver, state)
        assert line[0] in wins
        legal = np.flatnonzero(solitaire_rules.legal_action_mask(state))
        for action in legal[:8]:
            assert (action in wins) == is_solvable(solitaire_rules.apply(state, int(action))) or action not in wins
        for action in wins:
            assert is_solvable(solitaire_rules.apply(state, int(action)))
        state = solitaire_rules.apply(state, line[0])


def test_demonstrations_shapes() -> None:
    observations, legal, winning = demonstrations(range(3), np.random.default_rng(0))
    assert len(observations) == len(legal) == len(winning) == 3 * 27
    assert all((w <= l).all() and w.any() for w, l in zip(winning, legal))
    assert observations[0].shape == (98,)


def test_cli_trains_a_loadable_model(tmp_path) -> None:
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "run"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.solitaire_train",
            "--deals",
            "2",
            "--rounds",
            "1",
            "--dagger-deals",
            "1",
            "--epochs",
            "1",
            "--dim",
            "8",
            "--blocks",
            "1",
            "--eval-deals",
            "1",
            "--out",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert f"writing to {out}" in result.stdout
    report = json.loads((out / "train.json").read_text())
    assert [r["round"] for r in report["rounds"]] == [0, 1]
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(out / "model.zip", device="cpu")
    assert model.policy.board == "fire_and_ice_solitaire"
    bad = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.solitaire_train", "--deals", "0"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "--deals must be at least 1" in bad.stderr


@pytest.mark.slow
def test_solitaire_eval_training_leaves_nothing_in_the_temp_folder(tmp_path) -> None:
    """SB3 makes an empty ``SB3-<time>`` folder in the temp folder on each learn() without a logger."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SB3_LOGDIR"} | {"TMPDIR": str(temp)}
    out = subprocess.run(
        [sys.executable, "-m", "polarzoo.baselines.solitaire_eval", "--timesteps", "64", "--deals", "1"]
        + ["--out", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "s" / "model.safetensors").is_file()
    assert [p.name for p in temp.iterdir() if p.name.startswith("SB3-")] == []
