"""Does a training change learn as well?  Two sets of finished training runs (two arms, one run
per seed), compared at equal timesteps.

    python -m benchmarks.learning_ab --a runs/ab-new-s0 runs/ab-new-s1 --b runs/ab-old-s0 runs/ab-old-s1 \\
        --names "8 envs x 128" "4 envs x 256" --games 100 --out runs/learning-ab

Two measurements per run:

1. **Its final model against the reference agents** (``random``, ``heuristic``), greedy,
   ``--games`` seeded games per seat (seeds from 30,000: not the games of the run's own final
   evaluation), with 95% Wilson intervals; per arm the mean over its runs (the seeds are what
   varies most) and the per-seed values.
2. **Its training return against the opponent mixture** (SB3's ``rollout/ep_rew_mean``, the mean
   return of the last 100 episodes, from the run's TensorBoard log), averaged over windows of
   ``--window`` timesteps: the whole curve, not only its end (the mixture holds the run's own
   snapshots, so this is a measure of the two arms side by side, not of strength).

Written into ``--out``: ``learning_ab.json`` (everything), ``learning_ab.md`` (the tables) and
``learning_ab.png`` (the curves, one colour per arm), and ``evaluated/``: each model's games,
kept under its file's hash, so a comparison run again (interrupted, or with another arm beside
the same runs) plays only the models it has not seen.  Nothing is trained here; the runs come
from ``python -m polarzoo.baselines.train`` with their seeds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REFERENCES = ("random", "heuristic")


def training_curve(run: Path, tag: str = "rollout/ep_rew_mean") -> list[tuple[int, float]]:
    """(timesteps, value) of ``tag`` in the run's TensorBoard logs (every part of a resumed run)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    points: dict[int, float] = {}
    for events in sorted((run / "tb").rglob("events.out.tfevents.*")):
        accumulator = EventAccumulator(str(events), size_guidance={"scalars": 0})
        accumulator.Reload()
        if tag in accumulator.Tags().get("scalars", []):
            points.update({int(event.step): float(event.value) for event in accumulator.Scalars(tag)})
    return sorted(points.items())


def windowed(curve: list[tuple[int, float]], window: int, end: int) -> list[float | None]:
    """The mean of the curve's values in each window [k * window, (k + 1) * window) up to ``end``."""
    means: list[float | None] = []
    for start in range(0, end, window):
        values = [value for step, value in curve if start <= step < start + window]
        means.append(sum(values) / len(values) if values else None)
    return means


def final_model_results(run: Path, env_id: str, games: int, seed: int, cache: Path | None = None) -> dict[str, dict[str, Any]]:
    """The run's final model against each reference, ``games`` per seat from ``seed``; kept in
    ``cache`` (a folder) under the model file's hash and the settings, so that a comparison that
    was interrupted, or one with another arm beside the same runs, does not play them again."""
    import hashlib

    from polarzoo.baselines.agents import PolicyAgent, make_agent
    from polarzoo.baselines.evaluation.tournament import head_to_head

    model = run / "model.zip"
    kept = None
    if cache is not None:
        digest = hashlib.sha256(model.read_bytes()).hexdigest()[:20]
        kept = cache / f"{env_id}-{digest}-{games}g-{seed}.json"
        if kept.exists():
            try:
                results = json.loads(kept.read_text())
                if set(results) == set(REFERENCES):
                    return results
            except ValueError:
                pass  # a file cut short: play again
    learner = PolicyAgent(model, name=run.name)
    results = {}
    for spec in REFERENCES:
        result = head_to_head(env_id, learner, make_agent(spec, env_id), games, seed=seed)
        results[spec] = result.as_dict()
    if kept is not None:
        from polarzoo.baselines.cli.runs import atomic_write

        kept.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(kept, json.dumps(results, indent=2) + "\n")
    return results


def _rate(wins: int, games: int) -> str:
    from polarzoo.baselines.evaluation.tournament import wilson_interval

    low, high = wilson_interval(wins, games)
    return f"{wins}/{games} = {wins / games:.1%} [{low:.1%}, {high:.1%}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning_ab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", nargs="+", type=Path, required=True, help="the first arm's run folders")
    parser.add_argument("--b", nargs="+", type=Path, required=True, help="the second arm's run folders")
    parser.add_argument("--names", nargs=2, default=["A", "B"], help="the arms' names (default: A B)")
    parser.add_argument("--games", type=int, default=100, help="games per seat against each reference agent (default: 100)")
    parser.add_argument("--seed", type=int, default=30_000, help="the first game's seed (default: 30000)")
    parser.add_argument("--window", type=int, default=20_000, help="timesteps per window of the training curve (default: 20000)")
    parser.add_argument("--out", type=Path, default=Path("runs/learning-ab"), help="output folder (default: runs/learning-ab)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.window < 1:
        parser.error("--games and --window must be at least 1")
    runs = [*args.a, *args.b]
    for run in runs:
        if not (run / "model.zip").is_file() or not (run / "config.yaml").is_file():
            parser.error(f"{run}: not a finished training run (no model.zip or config.yaml)")
    import yaml

    configs = {run: yaml.safe_load((run / "config.yaml").read_text()) for run in runs}
    envs = {config["env"] for config in configs.values()}
    if len(envs) != 1:
        parser.error(f"the runs train different envs: {sorted(envs)}")
    env_id = envs.pop()
    timesteps = {int(json.loads((run / "training.json").read_text())["timesteps"]) for run in runs if (run / "training.json").exists()}
    end = max(timesteps) if timesteps else max(step for run in runs for step, _ in training_curve(run) or [(0, 0.0)])
    if len(timesteps) > 1:
        print(f"note: the runs end at different timesteps {sorted(timesteps)}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"output folder: {args.out}", flush=True)

    record: dict[str, Any] = {"env": env_id, "games_per_seat": args.games, "seed": args.seed, "window": args.window, "arms": {}}
    lines = []
    for name, arm in zip(args.names, (args.a, args.b)):
        entries = []
        for run in arm:
            print(f"{name}: {run}: {2 * args.games} games against each of {', '.join(REFERENCES)}", flush=True)
            curve = training_curve(run)
            entries.append({"run": str(run), "results": final_model_results(run, env_id, args.games, args.seed, args.out / "evaluated"),
                            "curve": windowed(curve, args.window, end)})
        record["arms"][name] = entries
    lines.append(f"{env_id}: each run's final model, {args.games} games per seat (seeds from {args.seed}), greedy\n")
    lines.append("| arm | run | " + " | ".join(f"vs {spec}" for spec in REFERENCES) + " |")
    lines.append("|---|---|" + "---|" * len(REFERENCES))
    for name, entries in record["arms"].items():
        for entry in entries:
            cells = [_rate(entry["results"][spec]["wins"], entry["results"][spec]["games"]) for spec in REFERENCES]
            lines.append(f"| {name} | {Path(entry['run']).name} | " + " | ".join(cells) + " |")
    lines.append("\n| arm | runs | " + " | ".join(f"mean vs {spec} (per run)" for spec in REFERENCES) + " |")
    lines.append("|---|---:|" + "---|" * len(REFERENCES))
    for name, entries in record["arms"].items():
        cells = []
        for spec in REFERENCES:
            rates = [entry["results"][spec]["win_rate"] for entry in entries]
            cells.append(f"{sum(rates) / len(rates):.1%} (" + ", ".join(f"{rate:.0%}" for rate in rates) + ")")
        lines.append(f"| {name} | {len(entries)} | " + " | ".join(cells) + " |")
    windows = range(0, end, args.window)
    lines.append("\nTraining return against the opponent mixture (`rollout/ep_rew_mean`), mean per window, averaged over the arm's runs\n")
    lines.append("| timesteps | " + " | ".join(record["arms"]) + " |")
    lines.append("|---|" + "---:|" * len(record["arms"]))
    for index, start in enumerate(windows):
        cells = []
        for entries in record["arms"].values():
            values = [entry["curve"][index] for entry in entries if entry["curve"][index] is not None]
            cells.append(f"{sum(values) / len(values):+.3f}" if values else "-")
        lines.append(f"| {start:,}-{min(start + args.window, end):,} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print("\n" + table)
    (args.out / "learning_ab.json").write_text(json.dumps(record, indent=2) + "\n")
    (args.out / "learning_ab.md").write_text(table + "\n")
    _plot(record, windows, end, args.out / "learning_ab.png")
    print(f"\nwritten: {args.out / 'learning_ab.md'}, learning_ab.json, learning_ab.png")


def _plot(record: dict[str, Any], windows: range, end: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 3.6))
    for colour, (name, entries) in zip(("tab:blue", "tab:orange"), record["arms"].items()):
        for number, entry in enumerate(entries):
            points = [((start + min(start + windows.step, end)) / 2, value) for start, value in zip(windows, entry["curve"])
                      if value is not None]
            if points:
                axis.plot(*zip(*points), color=colour, alpha=0.8, marker="o", markersize=3, label=name if number == 0 else None)
    axis.set_xlabel("timesteps")
    axis.set_ylabel("training return (last 100 episodes)")
    axis.set_title(f"{record['env']}: one line per run")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    main()
