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

With ``--own-evals`` the first measurement is each run's own final evaluation (its ``eval.json``:
the games ``train`` played at its end) instead of new games: nothing is played.

The arms are then compared per measurement (against each reference, and against the heuristic
from each seat alone: a seat that learns less hides in the two-seat rate): the difference of the
arms' means (A - B) with a bootstrap 95% interval over the runs and the two-sided p-value of a
permutation test of the runs' labels (exact up to 20,000 relabellings, e.g. 8 runs against 8; scipy, fixed seeds).  The
runs are the samples, not the games: with three seeds an arm's between-seed spread, not the
games' binomial noise, decides (a permutation test of 3 runs against 3 cannot go below p = 0.1).

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

from polarzoo.envs._common.extras import require

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


def own_evaluation(run: Path) -> dict[str, dict[str, Any]]:
    """The run's own final evaluation (``eval.json``: its trained model against each reference)."""
    evaluation = json.loads((run / "eval.json").read_text())
    results = {r["opponent"]: r for r in evaluation["results"] if r.get("agent") == "trained"}
    missing = [spec for spec in REFERENCES if spec not in results]
    if missing:
        raise ValueError(f"{run / 'eval.json'}: no games against {', '.join(missing)}")
    return {spec: results[spec] for spec in REFERENCES}


def seat_rate(result: dict[str, Any], seat: str) -> float | None:
    """The win rate from one seat (None when the result has no games there)."""
    tally = (result.get("by_seat") or {}).get(seat)
    if not tally:
        return None
    games = tally["wins"] + tally["draws"] + tally["losses"]
    return tally["wins"] / games if games else None


def compare(a: list[float], b: list[float], resamples: int = 20_000) -> dict[str, Any]:
    """Arm A's runs against arm B's: means, A - B with a 95% percentile-bootstrap interval (the
    runs resampled within each arm) and the two-sided p-value of a permutation test of the runs'
    labels (exact when there are at most ``resamples`` relabellings).  Fixed seeds: the same runs
    give the same numbers."""
    import math

    import numpy as np

    stats = require("scipy.stats", "learning_ab's comparison of the arms")
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    difference = float(x.mean() - y.mean())
    out: dict[str, Any] = {
        "mean_a": float(x.mean()),
        "mean_b": float(y.mean()),
        "difference": difference,
        "runs": [len(x), len(y)],
        "ci95": None,
        "p_value": None,
    }
    if len(x) < 2 or len(y) < 2:
        return out  # one run an arm: nothing to resample

    def statistic(first: np.ndarray, second: np.ndarray, axis: int = -1) -> np.ndarray:
        return first.mean(axis=axis) - second.mean(axis=axis)

    exact = math.comb(len(x) + len(y), len(x)) <= resamples
    test = stats.permutation_test(
        (x, y),
        statistic,
        permutation_type="independent",
        alternative="two-sided",
        n_resamples=np.inf if exact else resamples,
        vectorized=True,
        rng=np.random.default_rng(0),
    )
    out["p_value"], out["exact"] = float(test.pvalue), exact
    if np.ptp(np.concatenate([x, y])) == 0:
        out["ci95"] = [difference, difference]
    else:
        with np.errstate(all="ignore"):  # a resample of equal values has no spread: harmless here
            boot = stats.bootstrap(
                (x, y), statistic, n_resamples=resamples, method="percentile", vectorized=True, rng=np.random.default_rng(0)
            )
        out["ci95"] = [float(boot.confidence_interval.low), float(boot.confidence_interval.high)]
    return out


def measurements(results: dict[str, dict[str, Any]], seats: list[str]) -> dict[str, float | None]:
    """A run's numbers that the arms are compared on: the win rate against each reference, and
    against the heuristic from each seat."""
    values: dict[str, float | None] = {f"vs {spec}": results[spec]["win_rate"] for spec in REFERENCES}
    for seat in seats:
        values[f"vs heuristic as {seat}"] = seat_rate(results["heuristic"], seat)
    return values


def _rate(wins: int, games: int) -> str:
    from polarzoo.baselines.evaluation.tournament import wilson_interval

    low, high = wilson_interval(wins, games)
    return f"{wins}/{games} = {wins / games:.1%} [{low:.1%}, {high:.1%}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.learning_ab", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--a", nargs="+", type=Path, required=True, help="the first arm's run folders")
    parser.add_argument("--b", nargs="+", type=Path, required=True, help="the second arm's run folders")
    parser.add_argument("--names", nargs=2, default=["A", "B"], help="the arms' names (default: A B)")
    parser.add_argument("--games", type=int, default=100, help="games per seat against each reference agent (default: 100)")
    parser.add_argument(
        "--own-evals",
        action="store_true",
        help="use each run's own final evaluation (its eval.json) instead of playing new games",
    )
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
        if args.own_evals and not (run / "eval.json").is_file():
            parser.error(f"{run}: no eval.json (the run's final evaluation); leave out --own-evals to play its games")
    import yaml

    configs = {run: yaml.safe_load((run / "config.yaml").read_text()) for run in runs}
    envs = {config["env"] for config in configs.values()}
    if len(envs) != 1:
        parser.error(f"the runs train different envs: {sorted(envs)}")
    env_id = envs.pop()
    timesteps = {
        int(json.loads((run / "training.json").read_text())["timesteps"]) for run in runs if (run / "training.json").exists()
    }
    end = max(timesteps) if timesteps else max(step for run in runs for step, _ in training_curve(run) or [(0, 0.0)])
    if len(timesteps) > 1:
        print(f"note: the runs end at different timesteps {sorted(timesteps)}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"output folder: {args.out}", flush=True)

    record: dict[str, Any] = {
        "env": env_id,
        "games_per_seat": None if args.own_evals else args.games,
        "seed": None if args.own_evals else args.seed,
        "own_evals": args.own_evals,
        "window": args.window,
        "arms": {},
    }
    lines = []
    for name, arm in zip(args.names, (args.a, args.b)):
        entries = []
        for run in arm:
            curve = training_curve(run)
            if args.own_evals:
                try:
                    results = own_evaluation(run)
                except (ValueError, KeyError) as error:
                    parser.error(f"{run}: its eval.json cannot be read ({error})")
            else:
                print(f"{name}: {run}: {2 * args.games} games against each of {', '.join(REFERENCES)}", flush=True)
                results = final_model_results(run, env_id, args.games, args.seed, args.out / "evaluated")
            entries.append({"run": str(run), "results": results, "curve": windowed(curve, args.window, end)})
        record["arms"][name] = entries
    every = [entry for entries in record["arms"].values() for entry in entries]
    seats = sorted({seat for entry in every for seat in (entry["results"]["heuristic"].get("by_seat") or {})})
    if args.own_evals:
        evaluations = [json.loads((run / "eval.json").read_text()) for run in runs]
        settings = sorted({(e.get("games_per_seat"), e.get("seed")) for e in evaluations}, key=str)
        described = "; ".join(f"{games} games per seat from seed {seed}" for games, seed in settings)
        lines.append(f"{env_id}: each run's own final evaluation (its eval.json: {described}), greedy\n")
        if len(settings) > 1:
            lines.append("**Note**: the runs were evaluated on different games; their rates compare less well.\n")
            print("note: the runs' own evaluations played different games: " + described, file=sys.stderr)
    else:
        lines.append(f"{env_id}: each run's final model, {args.games} games per seat (seeds from {args.seed}), greedy\n")
    lines.append(
        "| arm | run | "
        + " | ".join(f"vs {spec}" for spec in REFERENCES)
        + "".join(f" | wins vs heuristic as {seat}" for seat in seats)
        + " |"
    )
    lines.append("|---|---|" + "---|" * len(REFERENCES) + "---:|" * len(seats))
    for name, entries in record["arms"].items():
        for entry in entries:
            cells = [_rate(entry["results"][spec]["wins"], entry["results"][spec]["games"]) for spec in REFERENCES]
            for seat in seats:
                tally = (entry["results"]["heuristic"].get("by_seat") or {}).get(seat)
                cells.append(f"{tally['wins']}/{tally['wins'] + tally['draws'] + tally['losses']}" if tally else "-")
            lines.append(f"| {name} | {Path(entry['run']).name} | " + " | ".join(cells) + " |")
    lines.append("\n| arm | runs | " + " | ".join(f"mean vs {spec} (per run)" for spec in REFERENCES) + " |")
    lines.append("|---|---:|" + "---|" * len(REFERENCES))
    for name, entries in record["arms"].items():
        cells = []
        for spec in REFERENCES:
            rates = [entry["results"][spec]["win_rate"] for entry in entries]
            cells.append(f"{sum(rates) / len(rates):.1%} (" + ", ".join(f"{rate:.0%}" for rate in rates) + ")")
        lines.append(f"| {name} | {len(entries)} | " + " | ".join(cells) + " |")
    names = list(record["arms"])
    per_run = {name: [measurements(entry["results"], seats) for entry in entries] for name, entries in record["arms"].items()}
    record["comparison"] = {}
    for key in per_run[names[0]][0] if per_run[names[0]] else []:
        a = [values[key] for values in per_run[names[0]] if values.get(key) is not None]
        b = [values[key] for values in per_run[names[1]] if values.get(key) is not None]
        if a and b:
            record["comparison"][key] = compare(a, b)
    lines.append(
        f"\n{names[0]} - {names[1]}: difference of the arms' mean win rates, the runs as samples "
        "(bootstrap 95% interval; permutation test of the runs' labels)\n"
    )
    lines.append(f"| measurement | {names[0]} | {names[1]} | difference [95% CI] | p (two-sided) |")
    lines.append("|---|---:|---:|---|---:|")
    for key, c in record["comparison"].items():
        interval = f" [{c['ci95'][0]:+.1%}, {c['ci95'][1]:+.1%}]" if c["ci95"] is not None else ""
        p_value = "-" if c["p_value"] is None else f"{c['p_value']:.3f}" + ("" if c.get("exact") else " (sampled)")
        lines.append(f"| {key} | {c['mean_a']:.1%} | {c['mean_b']:.1%} | {c['difference']:+.1%}{interval} | {p_value} |")
    windows = range(0, end, args.window)
    lines.append(
        "\nTraining return against the opponent mixture (`rollout/ep_rew_mean`), mean per window, averaged over the arm's runs\n"
    )
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
            points = [
                ((start + min(start + windows.step, end)) / 2, value)
                for start, value in zip(windows, entry["curve"])
                if value is not None
            ]
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
