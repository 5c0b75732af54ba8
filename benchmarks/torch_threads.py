"""Training and evaluation speed with 1 and 2 torch threads, idle and beside a busy core.

    python -m benchmarks.torch_threads --json docs/results/torch_threads.json

Training: for each game, the training command with its default config and a short budget
(``--total-timesteps``, evaluations off) runs with ``--torch-threads 1`` and ``2``, first alone,
then beside a process that keeps one core busy (a pure-Python loop).  Reported: timesteps per
second from the run's ``training.json``.  The thread count changes the floating-point sums of
the update, so a run's weights depend on it: the default must not follow the load.

Evaluation: ``pretrained`` against the heuristic (``EVAL_GAMES`` a seat, one process) with 1 and 2
torch threads, games per second, and whether the two played the same games (a policy's forward
pass on one position gives the same numbers on any thread count).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import write_json
from benchmarks.training_fps import training_command

BUDGETS = {"fire_and_ice_v0": 8192, "go_with_the_floe_v0": 8192, "thin_ice_v0": 4096}
EVAL_GAMES = {"fire_and_ice_v0": 50, "go_with_the_floe_v0": 100, "thin_ice_v0": 10}


def train_fps(env_id: str, threads: int, timesteps: int, runs: Path) -> float:
    name = f"{env_id}-{threads}-{len(list(runs.iterdir())) if runs.exists() else 0}"
    subprocess.run(
        training_command(env_id, timesteps, runs, name, "--torch-threads", str(threads)),
        check=True,
        capture_output=True,
    )
    return float(json.loads((runs / name / "training.json").read_text())["fps"])


def eval_games_per_second(env_id: str, threads: int) -> tuple[float, str]:
    """Games per second of ``pretrained`` against the heuristic on ``threads`` torch threads (in
    a fresh process), and a digest of the games' records."""
    child = (
        "import hashlib, json, sys, time, torch\n"
        f"torch.set_num_threads({threads})\n"
        "from polarzoo.baselines.agents import make_agent\n"
        "from polarzoo.baselines.evaluation.tournament import head_to_head\n"
        f"env_id, games = {env_id!r}, {EVAL_GAMES[env_id]}\n"
        "first, second = make_agent('pretrained', env_id), make_agent('heuristic', env_id)\n"
        "head_to_head(env_id, first, second, 1, seed=99)  # imports, loads and compiles out of the timing\n"
        "records = []\n"
        "start = time.perf_counter()\n"
        "head_to_head(env_id, first, second, games, seed=0, on_game=records.append)\n"
        "seconds = time.perf_counter() - start\n"
        "digest = hashlib.sha256(json.dumps(records, sort_keys=True, default=str).encode()).hexdigest()[:16]\n"
        "print(json.dumps({'games_per_second': 2 * games / seconds, 'digest': digest}))\n"
    )
    out = subprocess.run([sys.executable, "-c", child], check=True, capture_output=True, text=True).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return float(row["games_per_second"]), str(row["digest"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=list(BUDGETS))
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    parser.add_argument("--no-training", action="store_true", help="time the evaluations only")
    args = parser.parse_args()
    rows: list[dict] = []
    evaluations: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        runs = Path(folder)
        for load in ("idle", "one core busy"):
            burner = None
            if load != "idle":
                burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                for env_id in args.envs:
                    if not args.no_training:
                        fps = {threads: train_fps(env_id, threads, BUDGETS[env_id], runs) for threads in (1, 2)}
                        rows.append({"env": env_id, "load": load, "timesteps": BUDGETS[env_id], "fps_1": fps[1], "fps_2": fps[2]})
                        print(f"| {env_id} | {load} | {fps[1]:.0f} | {fps[2]:.0f} | {fps[2] / fps[1]:.2f} |", flush=True)
                    played = {threads: eval_games_per_second(env_id, threads) for threads in (1, 2)}
                    same = played[1][1] == played[2][1]
                    evaluations.append(
                        {
                            "env": env_id,
                            "load": load,
                            "games": 2 * EVAL_GAMES[env_id],
                            "games_per_second_1": played[1][0],
                            "games_per_second_2": played[2][0],
                            "same_games": same,
                        }
                    )
                    print(
                        f"| {env_id} evaluation | {load} | {played[1][0]:.2f} | {played[2][0]:.2f} | "
                        f"{played[2][0] / played[1][0]:.2f} | same games: {same} |",
                        flush=True,
                    )
            finally:
                if burner is not None:
                    burner.kill()
    if args.json:
        if args.no_training and Path(args.json).is_file():  # keep the training rows measured before
            rows = json.loads(Path(args.json).read_text()).get("rows", [])
        write_json(args.json, {"cores": os.cpu_count(), "rows": rows, "evaluation": evaluations})


if __name__ == "__main__":
    main()
