"""Pretrained models ship in the package, are small, and load from any working directory."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from polarzoo.baselines.agents import PRETRAINED, pretrained_path

pytest.importorskip("sb3_contrib")

SCRIPT = """
import sys
import numpy as np
from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.evaluation.tournament import play_game
env_id = sys.argv[1]
agent, other = make_agent("pretrained", env_id), make_agent("random", env_id)
# every seat; Thin Ice also every player count (one network for 2-6 players)
counts = range(2, 7) if env_id == "thin_ice_v0" else [2]
for players in counts:
    for seat in range(players):
        lineup = [other] * seat + [agent] + [other] * (players - seat - 1)
        record = play_game(env_id, lineup, seed=3 + seat, env_kwargs={"num_players": players} if players > 2 else None)
        assert record.illegal == [0] * players, (players, seat, record.illegal)
print("ok", agent.name)
"""


@pytest.mark.parametrize("env_id", sorted(PRETRAINED))
def test_pretrained_file_is_small_and_self_contained(env_id: str) -> None:
    path = pretrained_path(env_id)
    assert path.stat().st_size <= 5_000_000
    import zipfile

    data = zipfile.ZipFile(path).read("data").decode()
    # No run folder, snapshot or env in the saved model: nothing else is loaded with it.
    assert "snapshot" not in data and "SingleAgentEnv" not in data


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"])
def test_make_agent_pretrained_from_another_working_directory(env_id: str, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", SCRIPT, env_id], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok pretrained")


def test_solitaire_eval_loads_the_pretrained_model(tmp_path) -> None:
    out = subprocess.run([sys.executable, "-m", "polarzoo.baselines.solitaire_eval", "--model", "pretrained", "--deals", "2",
                          "--out", str(tmp_path / "s")], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "| trained | 2 |" in out.stdout


@pytest.mark.parametrize("spec", ["search:2", "vsearch:2"])
def test_thin_ice_search_plays_with_the_pretrained_policy(tmp_path, spec: str) -> None:
    """From another folder (the installed package's model), a whole legal game; the value search
    in 3 players too (its critic is asked about any number of players)."""
    pytest.importorskip("mujoco")
    code = ("from polarzoo.baselines.agents import make_agent; from polarzoo.baselines.evaluation.tournament import play_game; "
            f"a = make_agent('{spec}', 'thin_ice_v0'); r = make_agent('random', 'thin_ice_v0'); "
            "print('ok', a.name, play_game('thin_ice_v0', [a, r], seed=5).illegal, "
            "play_game('thin_ice_v0', [r, a, r], seed=6, env_kwargs={'num_players': 3}).illegal)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f"ok {spec} [0, 0] [0, 0, 0]")


def test_the_two_player_thin_ice_policy_plays_three_and_six_players() -> None:
    """One network for any number of players: the shipped model (trained on 2) in bigger games,
    where SB3's predict() would refuse the observation's size."""
    pytest.importorskip("mujoco")
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.evaluation.tournament import play_game

    pretrained, heuristic = make_agent("pretrained", "thin_ice_v0"), make_agent("heuristic", "thin_ice_v0")
    for players in (3, 6):
        record = play_game("thin_ice_v0", [pretrained] + [heuristic] * (players - 1), seed=1,
                           env_kwargs={"num_players": players, "grid": 7})
        assert record.illegal == [0] * players and len(record.result["points"]) == players
