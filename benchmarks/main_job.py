"""The main job, timed phase by phase: ``python -m polarzoo.baselines.train --env fire_and_ice_v0``
(the README's first command) for several seeds, each in its own process, one after the other.

    python -m benchmarks.main_job --seeds 0 1 2 3 4 --json docs/results/main_job.json
    python -m benchmarks.main_job --seeds 7 --total-timesteps 60000      # a shorter budget
    python -m benchmarks.main_job --config trial.yaml                      # a config trial (train's --config)

For each seed it reports the wall time of the whole command and of its phases (start-up, the
teacher's demonstrations, the cloning epochs, PPO, the final evaluation), the final evaluation
against random and the heuristic, and the **time to each milestone**: the training seconds (cloning
plus PPO, evaluations left out: the run's ``timing.csv``) at the first evaluation that beat random ``--random-bar`` and the
heuristic ``--heuristic-bar`` of its games.  To see the milestones the runs evaluate more often
than the default config (``--eval-every``, ``--eval-games`` per seat); the time those evaluations
take is reported apart and left out of ``main job``, which is the command's wall time without
them.  The machine's load is sampled every 10 s and reported beside the times.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class LoadSampler:
    """The 1-minute load average every ``every`` seconds, in a thread, while a job runs."""

    def __init__(self, every: float = 10.0) -> None:
        self.every, self._stop = every, threading.Event()
        self.samples: list[float] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        samples = self.samples or [os.getloadavg()[0]]
        return {"mean": round(statistics.fmean(samples), 2), "max": round(max(samples), 2)}


def milestones(
    rows: list[dict[str, str]], seconds_at: dict[int, float], bc_seconds: float, random_bar: float, heuristic_bar: float
) -> dict[str, Any]:
    """The first evaluation at or above each bar (and both), with its timesteps and training
    seconds (cloning + PPO up to it, evaluations left out); ``None`` where none reached it."""
    by_step: dict[int, dict[str, dict[str, str]]] = {}
    for row in rows:
        by_step.setdefault(int(row["timesteps"]), {})[row["opponent"]] = row

    def first(test: Any) -> dict[str, Any] | None:
        for step in sorted(by_step):
            found = by_step[step]
            if test(found):
                return {"timesteps": step, "train_seconds": round(bc_seconds + seconds_at.get(step, float("nan")), 1)}
        return None

    def rate(found: dict[str, dict[str, str]], opponent: str) -> float:
        return float(found[opponent]["win_rate"]) if opponent in found else -1.0

    return {
        "random": first(lambda f: rate(f, "random") >= random_bar),
        "heuristic": first(lambda f: rate(f, "heuristic") >= heuristic_bar),
        "both": first(lambda f: rate(f, "random") >= random_bar and rate(f, "heuristic") >= heuristic_bar),
    }


def final_rates(run: Path) -> dict[str, str]:
    """``wins/games`` of the trained model against each reference in the final evaluation."""
    summary = json.loads((run / "eval.json").read_text())
    rates = {}
    for entry in summary["results"]:
        names = (entry.get("agent"), entry.get("opponent"))
        if names[0] == "trained" and names[1] in ("random", "heuristic"):
            rates[names[1]] = f"{entry['wins']}/{entry['games']}"
    return rates


def run_seed(seed: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    name = f"seed{seed}"
    command = [
        sys.executable, "-m", "polarzoo.baselines.train", "--env", args.env, "--seed", str(seed),
        "--runs", str(out), "--run-name", name, "--eval-every", str(args.eval_every),
        "--eval-games", str(args.eval_games), "--final-eval-games", str(args.final_eval_games),
        "--no-progress", "--log-every", "60",
    ]  # fmt: skip
    if args.total_timesteps:
        command += ["--total-timesteps", str(args.total_timesteps)]
    if args.config:
        command += ["--config", str(args.config)]
    log = out / f"{name}.log"
    print(f"seed {seed}: {' '.join(command[1:])} (log {log})", flush=True)
    started = time.perf_counter()
    with LoadSampler() as load, log.open("w") as handle:
        code = subprocess.call(command, stdout=handle, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"seed {seed}: the training command exited with {code}; see {log}")
    run = out / name
    bc = json.loads((run / "behaviour_cloning.json").read_text()) if (run / "behaviour_cloning.json").exists() else {}
    ppo = json.loads((run / "training.json").read_text())
    with (run / "evaluations.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    with (run / "timing.csv").open(newline="") as handle:  # the last line of a timestep counts
        seconds_at = {int(row["timesteps"]): float(row["train_seconds"]) for row in csv.DictReader(handle)}
    evals_at = sorted({int(row["timesteps"]) for row in rows})
    ppo_seconds, eval_seconds = float(ppo["seconds"]), float(ppo.get("evaluation_seconds", 0.0))
    bc_seconds = float(bc.get("seconds", 0.0))
    demo_seconds = float(bc.get("demonstration_seconds", 0.0))
    phases = {
        "demonstrations": round(demo_seconds, 1),
        "cloning epochs": round(bc_seconds - demo_seconds, 1),
        "ppo (evaluations out)": round(ppo_seconds - eval_seconds, 1),
        "periodic evaluations (benchmark's)": round(eval_seconds, 1),
    }
    phases["final evaluation and start-up"] = round(wall - bc_seconds - ppo_seconds, 1)
    return {
        "seed": seed,
        "wall_seconds": round(wall, 1),
        "main_job_seconds": round(wall - eval_seconds, 1),
        "phases": phases,
        "timesteps": ppo["timesteps"],
        "ppo_timesteps_per_second": round(ppo["timesteps"] / max(ppo_seconds - eval_seconds, 1e-9), 1),
        "final": final_rates(run),
        "milestones": milestones(rows, seconds_at, bc_seconds, args.random_bar, args.heuristic_bar),
        "evaluated_at": evals_at,
        "load": load.summary(),
    }


def clock(seconds: float | None) -> str:
    """``3 min 05 s`` (whole seconds, rounded before the minutes are taken: 179.6 s is 3 min 00 s)."""
    if seconds is None:
        return "-"
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60:02d} s"


def markdown(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        f"| seed | main job | cloning (demos + epochs) | PPO | final eval + start-up | timesteps/s | vs random | vs heuristic "
        f"| to >= {args.heuristic_bar:.0%} vs heuristic and {args.random_bar:.0%} vs random | load (mean, max) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in results:
        p, both = r["phases"], r["milestones"]["both"]
        reached = f"{clock(both['train_seconds'])} ({both['timesteps']:,} timesteps)" if both else "not reached"
        lines.append(
            f"| {r['seed']} | {clock(r['main_job_seconds'])} | {p['demonstrations']:.0f} + {p['cloning epochs']:.0f} s "
            f"| {clock(p['ppo (evaluations out)'])} | {p['final evaluation and start-up']:.0f} s | {r['ppo_timesteps_per_second']:.0f} "
            f"| {r['final'].get('random', '-')} | {r['final'].get('heuristic', '-')} | {reached} "
            f"| {r['load']['mean']}, {r['load']['max']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="fire_and_ice_v0", help="the game (default: fire_and_ice_v0, the main job)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="training seeds (default: 0 1 2 3 4)")
    parser.add_argument("--total-timesteps", type=int, default=0, help="0 = the config's budget (default: 0)")
    parser.add_argument("--config", type=Path, help="a hyperparameter YAML layered over the kit's (the train CLI's --config)")
    parser.add_argument("--eval-every", type=int, default=25_000, help="timesteps between evaluations (default: 25000)")
    parser.add_argument("--eval-games", type=int, default=50, help="games per seat and reference (default: 50)")
    parser.add_argument("--final-eval-games", type=int, default=50, help="the final evaluation's games per seat (default: 50)")
    parser.add_argument("--random-bar", type=float, default=1.0, help="the milestone against random (default: 1.0)")
    parser.add_argument("--heuristic-bar", type=float, default=0.95, help="the milestone against the heuristic (default: 0.95)")
    parser.add_argument("--out", type=Path, default=Path("runs/main_job"), help="run folders (default: runs/main_job)")
    parser.add_argument("--json", type=Path, help="write the results here (a JSON file, and the table beside it as .md)")
    args = parser.parse_args(argv)
    if args.config is not None and not args.config.is_file():
        parser.error(f"--config {args.config}: no such file")
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"run folders: {args.out}/seed<N>/", flush=True)
    results = []
    for seed in args.seeds:
        results.append(run_seed(seed, args, args.out))
        print(markdown(results[-1:], args).splitlines()[-1], flush=True)
        if args.json:  # after every seed: a long benchmark keeps what it measured
            record = {
                "command": "python -m benchmarks.main_job " + " ".join(argv if argv is not None else sys.argv[1:]),
                "machine": f"{_cpu_name()}, {os.cpu_count()} cores",
                "results": results,
            }
            args.json.write_text(json.dumps(record, indent=2) + "\n")
            args.json.with_suffix(".md").write_text(markdown(results, args) + "\n")
    print("\n" + markdown(results, args))


if __name__ == "__main__":
    main()
