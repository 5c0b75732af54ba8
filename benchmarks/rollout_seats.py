"""Do two rollout collectors give the same rollouts?  One trained policy, no updates, each seat apart.

    python -m benchmarks.rollout_seats --run runs/ab-old-s0 --rollouts 8 --out runs/rollout-seats

A learning A/B of two collectors (``rollouts: lockstep`` against ``async``) is noisy: three seeds
an arm, and Thin Ice's first seat either learns an opening that beats the heuristic or not.  This
asks the question underneath, for the policy of a finished run (its ``model.zip``, the run's own
config and, as the self-play opponents, its last snapshots): with the weights frozen, does each
collector sample the same games?  Per collector and per learner seat (``info["learner"]``):
episodes, the mean return with a 95% interval, and the learner's first action of each episode;
then, per seat, a chi-square test of the first actions (actions seen fewer than 5 times in all
pooled into one class) and Welch's t-test of the returns (scipy).  A collector that changed what
is learned from would show here in a few minutes, where the learning A/B needs hours.

Writes ``OUT/rollout_seats.json`` and ``OUT/rollout_seats.md``; each collector's rollouts use the
same env seeds (``--seed``).  Since session 23 the async collector draws the lock step's random
numbers in the lock step's shapes, so these two collectors give the same rollouts; the check stays
for collectors that sample otherwise (another policy's distribution, another vectorisation).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from polarzoo.envs._common.extras import require

COLLECTORS = ("lockstep", "async")


def collect(run: Path, collector: str, rollouts: int, seed: int) -> dict[str, dict[str, Any]]:
    """Per learner seat: ``returns`` (one per finished episode) and ``first_actions`` (the
    learner's first action of each episode that started in the rollouts)."""
    import torch
    import yaml
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from polarzoo.baselines.training import ppo
    from polarzoo.baselines.training.rollouts import AsyncRolloutPPO

    config = {**ppo.saved_run_config(yaml.safe_load((run / "config.yaml").read_text())), "rollouts": collector}
    torch.set_num_threads(1)
    # The pool the run ended with: its newest snapshots (named by their timestep).
    snapshots = sorted((run / "snapshots").glob("snapshot_*.zip"), key=lambda p: int(p.stem.rsplit("_", 1)[-1]))
    snapshots = snapshots[-int(config["max_snapshots"]) :]
    venv = ppo.make_vec_env(config, [str(p) for p in snapshots], seed)
    algorithm = AsyncRolloutPPO if collector == "async" else MaskablePPO
    policy, policy_kwargs = ppo.policy_and_kwargs(config)
    model = algorithm(
        policy,
        venv,
        n_steps=config["n_steps"],
        batch_size=config["batch_size"],
        policy_kwargs=policy_kwargs,
        seed=seed,
        device="cpu",
        verbose=0,
    )
    model.set_parameters(str(run / "model.zip"), exact_match=True, device="cpu")
    seats: dict[str, dict[str, Any]] = {}

    class Record(BaseCallback):
        """The seat and return of every step, in lock-step order (both collectors call it so)."""

        def __init__(self) -> None:
            super().__init__()
            self.steps: list[tuple[Any, Any]] = []

        def _on_step(self) -> bool:
            self.steps.append((list(self.locals["infos"]), list(self.locals["dones"])))
            return True

    record = Record()
    _, callback = model._setup_learn(10**12, callback=record)
    callback.on_training_start(locals(), globals())
    try:
        for number in range(rollouts):
            print(f"  {collector}: rollout {number + 1}/{rollouts}", flush=True)  # a line a rollout: logs show progress
            record.steps.clear()
            model.collect_rollouts(venv, callback, model.rollout_buffer, config["n_steps"])
            buffer = model.rollout_buffer
            for step, (infos, dones) in enumerate(record.steps):
                for index, (info, done) in enumerate(zip(infos, dones)):
                    seat = seats.setdefault(str(info.get("learner")), {"returns": [], "first_actions": Counter()})
                    if buffer.episode_starts[step, index]:
                        seat["first_actions"][int(buffer.actions[step, index, 0])] += 1
                    if done and "episode_return" in info:
                        seat["returns"].append(float(info["episode_return"]))
    finally:
        venv.close()
    return seats


def compare_seat(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Chi-square test of the first actions (rare ones pooled) and Welch's t-test of the returns."""
    import numpy as np

    stats = require("scipy.stats", "the rollout comparison")
    actions = sorted(set(a["first_actions"]) | set(b["first_actions"]))
    common = [x for x in actions if a["first_actions"].get(x, 0) + b["first_actions"].get(x, 0) >= 5]
    rare = [x for x in actions if x not in common]
    table = [
        [counts.get(x, 0) for x in common] + ([sum(counts.get(x, 0) for x in rare)] if rare else [])
        for counts in (a["first_actions"], b["first_actions"])
    ]
    table = [[row[k] for k in range(len(table[0])) if table[0][k] + table[1][k] > 0] for row in table]
    first_p = float(stats.chi2_contingency(np.array(table))[1]) if len(table[0]) > 1 else 1.0
    returns_p = None
    if len(a["returns"]) > 1 and len(b["returns"]) > 1:
        with warnings.catch_warnings():  # returns all alike (a short check): scipy warns, p is nan or exact
            warnings.simplefilter("ignore", RuntimeWarning)
            value = float(stats.ttest_ind(a["returns"], b["returns"], equal_var=False).pvalue)
        returns_p = None if math.isnan(value) else value
    return {"first_action_p": first_p, "first_action_classes": len(table[0]), "returns_p": returns_p}


def _mean_interval(values: list[float]) -> str:
    from polarzoo.baselines.evaluation.tournament import mean_interval

    if not values:
        return "-"
    mean, low, high = mean_interval(values)
    return f"{mean:+.3f}" if len(values) < 2 else f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def markdown(record: dict[str, Any]) -> str:
    names = list(record["collectors"])
    lines = [
        f"{record['env']}: the policy of `{record['run']}`, frozen; {record['rollouts']} rollouts of each collector "
        f"(env seed {record['seed']})",
        "",
        "| seat | collector | episodes | mean return [95% CI] | learner's first actions (most common) |",
        "|---|---|---:|---|---|",
    ]
    for seat in record["seats"]:
        for name in names:
            data = record["collectors"][name].get(seat, {"returns": [], "first_actions": {}})
            top = sorted(data["first_actions"].items(), key=lambda kv: -kv[1])[:6]
            lines.append(
                f"| {seat} | {name} | {len(data['returns'])} | {_mean_interval(data['returns'])} | "
                + ", ".join(f"{action}: {count}" for action, count in top)
                + " |"
            )
    lines += ["", "| seat | first actions: chi-square p | returns: Welch p |", "|---|---:|---:|"]
    for seat, test in record["tests"].items():
        returns_p = "-" if test["returns_p"] is None else f"{test['returns_p']:.3f}"
        lines.append(f"| {seat} | {test['first_action_p']:.3f} ({test['first_action_classes']} classes) | {returns_p} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.rollout_seats", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--run", type=Path, required=True, help="a finished training run (its model.zip, config.yaml, snapshots/)"
    )
    parser.add_argument("--rollouts", type=int, default=8, help="rollouts per collector (default: 8)")
    parser.add_argument("--seed", type=int, default=1, help="the envs' seed, the same for every collector (default: 1)")
    parser.add_argument(
        "--collectors",
        nargs=2,
        choices=COLLECTORS,
        default=list(COLLECTORS),
        help="the two collectors compared (default: lockstep async)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("runs/rollout-seats"), help="output folder (default: runs/rollout-seats)"
    )
    args = parser.parse_args(argv)
    if args.rollouts < 1:
        parser.error("--rollouts must be at least 1")
    if not (args.run / "model.zip").is_file() or not (args.run / "config.yaml").is_file():
        parser.error(f"{args.run}: not a finished training run (no model.zip or config.yaml)")
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"output folder: {args.out}", flush=True)
    import yaml

    record: dict[str, Any] = {
        "env": yaml.safe_load((args.run / "config.yaml").read_text())["env"],
        "run": str(args.run),
        "rollouts": args.rollouts,
        "seed": args.seed,
        "collectors": {},
    }
    for name in args.collectors:
        print(f"{name}: {args.rollouts} rollouts", flush=True)
        record["collectors"][name] = collect(args.run, name, args.rollouts, args.seed)
    record["seats"] = sorted({seat for seats in record["collectors"].values() for seat in seats})
    first, second = (record["collectors"][name] for name in args.collectors)
    record["tests"] = {
        seat: compare_seat(first[seat], second[seat]) for seat in record["seats"] if seat in first and seat in second
    }
    table = markdown(record)
    print("\n" + table)
    (args.out / "rollout_seats.json").write_text(json.dumps(record, indent=2) + "\n")
    (args.out / "rollout_seats.md").write_text(table + "\n")
    print(f"\nwritten: {args.out / 'rollout_seats.md'}, rollout_seats.json", file=sys.stderr)


if __name__ == "__main__":
    main()
