"""Pretrained models ship in the package, are small, and load from any working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from polarzoo.baselines.agents import SOLITAIRE_PRETRAINED, pretrained_path
from polarzoo.baselines.kits import games_with

#: every shipped board policy: each kit's and the solitaire's (a Gymnasium env, no kit)
SHIPPED = {
    **{env_id: pretrained_path(env_id) for env_id in games_with("pretrained")},
    "polarzoo/FireAndIceSolitaire-v0": SOLITAIRE_PRETRAINED,
}

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


@pytest.mark.parametrize("env_id", sorted(SHIPPED))
def test_pretrained_file_is_small_and_weights_only(env_id: str) -> None:
    """A safetensors file: a JSON header (the settings) and raw tensors; nothing in it runs."""
    import json

    path = SHIPPED[env_id]
    assert path.stat().st_size <= 5_000_000 and path.suffix == ".safetensors"
    raw = path.read_bytes()
    header = json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])
    settings = json.loads(header["__metadata__"]["settings"])
    assert settings["policy_class"] == "BoardPolicy" and settings["env"] == env_id.removesuffix(" (league)")
    assert all(set(entry) == {"dtype", "shape", "data_offsets"} for name, entry in header.items() if name != "__metadata__")


def greedy_moves(act: Any, env_id: str, positions: int, seed: int = 0) -> list[int]:
    """The greedy move of ``act(env, agent)`` in ``positions`` positions of random play (seeded)."""
    from polarzoo.envs import ENVIRONMENTS

    env = ENVIRONMENTS[env_id].raw_env(**({"num_players": 3} if env_id == "thin_ice_v0" else {}))
    rng = np.random.default_rng(seed)
    moves: list[int] = []
    game = 0
    while len(moves) < positions:
        env.reset(seed=seed + game)
        game += 1
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            moves.append(int(act(env, agent)))
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            if len(moves) == positions:
                break
    return moves


#: positions per game where the converted models must play the SB3 zips' moves
GOLDEN_POSITIONS = {"fire_and_ice_v0": 2000, "go_with_the_floe_v0": 2000, "thin_ice_v0": 300}
GOLDEN = Path(__file__).parent / "playthroughs" / "pretrained_greedy_moves.json"


@pytest.mark.parametrize("env_id", sorted(GOLDEN_POSITIONS))
def test_the_weight_only_models_play_the_zips_moves(env_id: str) -> None:
    """The shipped models, converted from their runs' SB3 zips to weight-only files, play the zips'
    greedy moves (recorded from the zips with MaskablePPO.load by ``python tests/test_pretrained.py
    ZIP_FOLDER [ENV_ID ...]``, each zip named ``<env_id>.zip``) in thousands of positions."""
    if env_id == "thin_ice_v0":
        pytest.importorskip("mujoco")
    import json

    from polarzoo.baselines.agents import PolicyAgent

    agent = PolicyAgent(pretrained_path(env_id))
    rng = np.random.default_rng(0)
    assert (
        greedy_moves(lambda env, who: agent.act(env, who, rng), env_id, GOLDEN_POSITIONS[env_id])
        == json.loads(GOLDEN.read_text())[env_id]
    )


if __name__ == "__main__":  # record the zips' moves: python tests/test_pretrained.py FOLDER_WITH_THE_ZIPS [ENV_ID ...]
    import json

    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.agents import PolicyAgent

    # only the named envs' moves are recorded again (a new model for one game), the others kept
    unknown = sorted(set(sys.argv[2:]) - set(GOLDEN_POSITIONS))
    if len(sys.argv) < 2 or unknown:
        sys.exit(f"usage: python tests/test_pretrained.py ZIP_FOLDER [ENV_ID ...]; unknown env ids: {unknown or 'none'}")
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    for env_id, count in GOLDEN_POSITIONS.items():
        if sys.argv[2:] and env_id not in sys.argv[2:]:
            continue
        if not Path(sys.argv[1], f"{env_id}.zip").is_file():
            sys.exit(f"{sys.argv[1]}/{env_id}.zip: no such file (name the envs whose zips the folder holds)")
        old = PolicyAgent(sys.argv[1] + f"/{env_id}.zip", model=MaskablePPO.load(sys.argv[1] + f"/{env_id}.zip", device="cpu"))
        rng = np.random.default_rng(0)
        golden[env_id] = greedy_moves(lambda env, who: old.act(env, who, rng), env_id, count)  # noqa: B023 (called here)
        print(env_id, len(golden[env_id]))
    GOLDEN.write_text(json.dumps(golden) + "\n")


@pytest.mark.parametrize("env_id", ["fire_and_ice_v0", "go_with_the_floe_v0", "thin_ice_v0"])
@pytest.mark.slow
def test_make_agent_pretrained_from_another_working_directory(env_id: str, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", SCRIPT, env_id], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok pretrained")


def test_solitaire_eval_loads_the_pretrained_model(tmp_path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.solitaire_eval",
            "--model",
            "pretrained",
            "--deals",
            "2",
            "--out",
            str(tmp_path / "s"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "| trained | 2 |" in out.stdout


@pytest.mark.parametrize("spec", ["search:2", "vsearch:2"])
def test_thin_ice_search_plays_with_the_pretrained_policy(tmp_path, spec: str) -> None:
    """From another folder (the installed package's model), a whole legal game; the value search
    in 3 players too (its critic is asked about any number of players)."""
    pytest.importorskip("mujoco")
    code = (
        "from polarzoo.baselines.agents import make_agent; from polarzoo.baselines.evaluation.tournament import play_game; "
        f"a = make_agent('{spec}', 'thin_ice_v0'); r = make_agent('random', 'thin_ice_v0'); "
        "print('ok', a.name, play_game('thin_ice_v0', [a, r], seed=5).illegal, "
        "play_game('thin_ice_v0', [r, a, r], seed=6, env_kwargs={'num_players': 3}).illegal)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f"ok {spec} [0, 0] [0, 0, 0]")


def test_the_thin_ice_policy_plays_three_and_six_players() -> None:
    """One network for any number of players: the shipped model in 3- and 6-player games on a
    small grid (its input does not depend on the count)."""
    pytest.importorskip("mujoco")
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.evaluation.tournament import play_game

    pretrained, heuristic = make_agent("pretrained", "thin_ice_v0"), make_agent("heuristic", "thin_ice_v0")
    for players in (3, 6):
        record = play_game(
            "thin_ice_v0", [pretrained] + [heuristic] * (players - 1), seed=1, env_kwargs={"num_players": players, "grid": 7}
        )
        assert record.illegal == [0] * players and len(record.result["points"]) == players


def test_the_shipped_policy_states_its_own_training_for_best_responses() -> None:
    """Fire & Ice's ``pretrained`` (the main job, then league training): its own training, the
    main job's and the league's main agent's, is what ``league exploit`` sets a budget against;
    it is the one file that ``pretrained`` and ``az:N`` play from, and it beats the heuristic."""
    from polarzoo.baselines.agents import make_agent
    from polarzoo.baselines.agents.registry import model_files
    from polarzoo.baselines.evaluation.tournament import play_game
    from polarzoo.baselines.training.exploit import agent_training_timesteps

    assert agent_training_timesteps("pretrained", "fire_and_ice_v0") == 251_904 + 10 * 24_576
    assert (
        model_files("pretrained", "fire_and_ice_v0")
        == model_files("az:4", "fire_and_ice_v0")
        == [pretrained_path("fire_and_ice_v0")]
    )
    agent = make_agent("pretrained", "fire_and_ice_v0").check_fits("fire_and_ice_v0")
    record = play_game("fire_and_ice_v0", [agent, make_agent("heuristic", "fire_and_ice_v0")], seed=0)
    assert record.scores[0] > record.scores[1]
