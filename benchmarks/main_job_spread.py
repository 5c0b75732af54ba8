"""The main job's spread: ``python -m polarzoo.baselines.train --env fire_and_ice_v0`` with its
defaults over seeds and torch thread counts, each run's own final evaluation in one table.

    python -m benchmarks.main_job_spread --runs runs/main-job                 # 5 seeds x 1 and 2 threads
    python -m benchmarks.main_job_spread --runs runs/main-job --report-only   # the table of what finished

Runs go one after another (a run with more threads than free cores measures nothing about
time but trains the same model: a run depends on its seed and thread count, not on the load),
each in its own folder ``RUNS/s<seed>-t<threads>``; a finished run (its ``eval.json``) is kept, a
started one continues with ``--resume``.  Writes ``RUNS/spread.md`` and ``RUNS/spread.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path


def run_name(seed: int, threads: int) -> str:
    return f"s{seed}-t{threads}"


def train(runs: Path, env: str, seed: int, threads: int, extra: list[str] = ()) -> int:
    folder = runs / run_name(seed, threads)
    if (folder / "eval.json").exists():
        return 0
    if (folder / "config.yaml").exists():
        command = ["--resume", str(folder)]
    else:
        command = [
            "--env",
            env,
            "--seed",
            str(seed),
            "--torch-threads",
            str(threads),
            "--runs",
            str(runs),
            "--run-name",
            run_name(seed, threads),
            *extra,
        ]
    with (runs / f"{run_name(seed, threads)}.log").open("a") as log:
        return subprocess.run(
            [sys.executable, "-m", "polarzoo.baselines.train", *command, "--no-progress"], stdout=log, stderr=subprocess.STDOUT
        ).returncode


def row(folder: Path) -> dict | None:
    """One finished run: its win rates against random and the heuristic (its final evaluation)
    and its training time."""
    try:
        evaluation = json.loads((folder / "eval.json").read_text())
    except (OSError, ValueError):
        return None
    rates = {r["opponent"]: r for r in evaluation["results"] if r["agent"] == "trained"}
    training = json.loads((folder / "training.json").read_text()) if (folder / "training.json").exists() else {}
    return {
        "run": folder.name,
        **{f"vs_{name}": [r["wins"], r["games"], r["win_rate_ci95"]] for name, r in rates.items()},
        "train_seconds": training.get("seconds"),
    }


def report(runs: Path, seeds: list[int], threads: list[int]) -> str:
    rows = [r for s in seeds for t in threads if (r := row(runs / run_name(s, t)))]
    lines = ["| run (seed, torch threads) | vs random | vs heuristic [95% Wilson] |", "|---|---:|---|"]
    for r in rows:
        wins, games, _ = r["vs_random"]
        h_wins, h_games, (low, high) = r["vs_heuristic"]
        lines.append(f"| {r['run']} | {wins}/{games} | {h_wins}/{h_games} [{low:.0%}, {high:.0%}] |")
    if rows:
        heuristic = [r["vs_heuristic"][0] / r["vs_heuristic"][1] for r in rows]
        lines += [
            "",
            f"{len(rows)} of {len(seeds) * len(threads)} runs finished; against the heuristic: "
            f"{min(heuristic):.0%} to {max(heuristic):.0%}; runs at or above 80%: {sum(h >= 0.8 for h in heuristic)}",
        ]
    (runs / "spread.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = "\n".join(lines) + "\n"
    (runs / "spread.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--runs", type=Path, default=Path("runs/main-job"), help="the runs' parent folder (default: runs/main-job)"
    )
    parser.add_argument("--env", default="fire_and_ice_v0", help="the game (default: fire_and_ice_v0)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="training seeds (default: 0 1 2 3 4)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="torch thread counts (default: 1 2)")
    parser.add_argument("--report-only", action="store_true", help="only the table of the runs that finished")
    parser.add_argument(
        "--train-args",
        default="",
        help="more arguments for each new run's train command, e.g. "
        "--train-args=--quick (a smoke run; the default: none, the main job itself)",
    )
    args = parser.parse_args(argv)
    if any(s < 0 for s in args.seeds) or any(t < 1 for t in args.threads):
        parser.error("--seeds must be >= 0 and --threads >= 1")
    args.runs.mkdir(parents=True, exist_ok=True)
    print(f"runs folder: {args.runs}", flush=True)
    if not args.report_only:
        try:
            for seed in args.seeds:
                for threads in args.threads:
                    code = train(args.runs, args.env, seed, threads, shlex.split(args.train_args))
                    print(
                        f"{run_name(seed, threads)}: {'finished' if code == 0 else f'failed (exit {code}), see its .log'}",
                        flush=True,
                    )
        except KeyboardInterrupt:
            print("\ninterrupted: the run under way kept its last checkpoint; the same command continues", file=sys.stderr)
            sys.exit(130)
    print(report(args.runs, args.seeds, args.threads))


if __name__ == "__main__":
    main()
