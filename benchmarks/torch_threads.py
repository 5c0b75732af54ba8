"""Training speed with 1 and 2 torch threads, on an idle machine and beside a busy core.

    python -m benchmarks.torch_threads --json docs/results/torch_threads.json

For each game, the training command with its default config and a short budget
(``--total-timesteps``, evaluations off) runs with ``--torch-threads 1`` and ``2``, first alone,
then beside a process that keeps one core busy (a pure-Python loop).  Reported: timesteps per
second from the run's ``training.json``.  The thread count changes the floating-point sums of
the update, so a run's weights depend on it: the default must not follow the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BUDGETS = {"fire_and_ice_v0": 8192, "go_with_the_floe_v0": 8192, "thin_ice_v0": 4096}


def train_fps(env_id: str, threads: int, timesteps: int, runs: Path) -> float:
    name = f"{env_id}-{threads}-{len(list(runs.iterdir())) if runs.exists() else 0}"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "polarzoo.baselines.train",
            "--env",
            env_id,
            "--total-timesteps",
            str(timesteps),
            "--eval-every",
            "0",
            "--no-final-eval",
            "--torch-threads",
            str(threads),
            "--runs",
            str(runs),
            "--run-name",
            name,
            "--no-progress",
        ],
        check=True,
        capture_output=True,
    )
    return float(json.loads((runs / name / "training.json").read_text())["fps"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", nargs="+", default=list(BUDGETS))
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        runs = Path(folder)
        for load in ("idle", "one core busy"):
            burner = None
            if load != "idle":
                burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                for env_id in args.envs:
                    fps = {threads: train_fps(env_id, threads, BUDGETS[env_id], runs) for threads in (1, 2)}
                    rows.append({"env": env_id, "load": load, "timesteps": BUDGETS[env_id], "fps_1": fps[1], "fps_2": fps[2]})
                    print(f"| {env_id} | {load} | {fps[1]:.0f} | {fps[2]:.0f} | {fps[2] / fps[1]:.2f} |", flush=True)
            finally:
                if burner is not None:
                    burner.kill()
    if args.json:
        Path(args.json).write_text(json.dumps({"cores": os.cpu_count(), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
