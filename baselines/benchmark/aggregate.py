"""The benchmark's aggregate, the way RL papers report (rliable; Agarwal et al., 2021).

Per game and algorithm, over the seeds: the interquartile mean (IQM) of the league rating and
of the win rates against the named opponents, each with a stratified bootstrap 95% interval;
the probability of improvement of each algorithm over each other (on the league rating, per
game) with its interval; the performance profile of the win rate against the heuristic over
all games an algorithm runs on (``profiles.png``); the learning curves of the runs (mean with a
bootstrap 95% band over seeds, ``curves.png``).  Intervals use a fixed seed: the same runs give
the same file.
"""

from __future__ import annotations

import csv
import itertools
import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.benchmark.protocol import DEFAULT_SEEDS
from polarzoo.baselines.cli.runs import atomic_write, save_figure
from polarzoo.envs.utils import global_random_state_kept, require

REPS = 5000
#: a track's scores at each table size (``result.json``'s ``by_players``), as the aggregate titles them
TABLE_FIELDS = {
    "rating": "league rating at {n} players",
    "first_place": "first place at {n} players against {n_1} heuristics",
    "mean_points": "mean points at {n} players against {n_1} heuristics",
}


#: what every run's ``result.json`` has
RESULT_KEYS = ("game", "algorithm", "seed", "rating", "rating_ci95", "win_rate")


def read_result(folder: Path, warn: Any = None) -> dict[str, Any] | None:
    """The ``result.json`` of the run in ``folder``; None when there is none, or when it is
    damaged (not JSON, not a run's result): then ``warn`` (default: standard error) gets one
    line, and the run counts as not finished, so ``benchmark run`` finishes it again from what
    its folder keeps (its model, its games)."""
    path = folder / "result.json"
    try:
        result = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        problem = getattr(error, "strerror", None) or type(error).__name__
    else:
        if isinstance(result, dict) and all(key in result for key in RESULT_KEYS):
            return result
        problem = "not a run's result"
    message = (
        f"warning: {path} is damaged ({problem}): that run is left out; `benchmark run` with the same "
        "--out finishes it again from its folder"
    )
    (warn or (lambda line: print(line, file=sys.stderr)))(message)
    return None


def exploitability_by_seat(exploit_record: dict[str, Any]) -> dict[str, float]:
    """A two-player best response's record (``exploit.json``) -> the seat the run's model held ->
    what the best response took there (it held the other seat); ``{}`` at other table sizes.  A
    game won by one side (the Floe: Black) is hard to exploit where that side's wins are taken."""
    seats = exploit_record.get("by_seat", {})
    if exploit_record.get("players", 2) != 2 or not isinstance(seats, dict) or len(seats) != 2:
        return {}
    (first, first_record), (second, second_record) = seats.items()
    rates = [record.get("win_rate") if isinstance(record, dict) else None for record in (first_record, second_record)]
    numbers = [float(rate) for rate in rates if isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0 <= rate <= 1]
    if len(numbers) != 2:
        return {}  # not a best response's record: the pooled figure stands alone
    return {second: numbers[0], first: numbers[1]}


def load_results(out: Path, budget: str) -> list[dict[str, Any]]:
    """The finished runs' results (damaged ones said and left out: :func:`read_result`); a result
    of older code without ``exploitability_as`` takes it from its best response's kept record."""
    results = []
    for path in sorted((out / budget).glob("*/*/seed*/result.json")):
        result = read_result(path.parent)
        if result is None:
            continue
        record = path.parent / "exploit" / "exploit.json"
        if "exploitability" in result and "exploitability_as" not in result and record.is_file():
            try:
                result["exploitability_as"] = exploitability_by_seat(json.loads(record.read_text()))
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                pass  # a damaged record: the pooled figure stands alone
        results.append(result)
    return results


def _table_metric(key: str) -> tuple[str, str] | None:
    """(players, field) of a track's metric "players:<N>:<rating | first_place | mean_points>"."""
    kind, _, rest = key.partition(":")
    if kind != "players":
        return None
    players, _, field = rest.partition(":")
    return players, field


def _value(result: dict[str, Any], key: str) -> Any:
    """One run's score named by ``key``: "rating", "win_rate:<opponent>", "exploitability",
    "exploitability:<the model's seat>", or a track's :func:`_table_metric` (None when the run has
    none)."""
    if key in ("rating", "exploitability"):
        return result.get(key)
    if key.startswith("exploitability:"):
        return result.get("exploitability_as", {}).get(key.partition(":")[2])
    table = _table_metric(key)
    if table is not None:
        return result.get("by_players", {}).get(table[0], {}).get(table[1])
    return result["win_rate"].get(key.partition(":")[2])


def _table(results: list[dict[str, Any]], key: str) -> dict[tuple[str, str], np.ndarray]:
    """(game, algorithm) -> scores of its seeds, in seed order (``key``: see :func:`_value`)."""
    table: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for r in results:
        value = _value(r, key)
        if value is not None:
            table.setdefault((r["game"], r["algorithm"]), []).append((r["seed"], float(value)))
    return {k: np.array([v for _, v in sorted(rows)]) for k, rows in table.items()}


def _iqm(scores: np.ndarray, rng_seed: int = 0) -> tuple[float, float, float]:
    rly = require("rliable.library", "the benchmark's aggregate")
    metrics = require("rliable.metrics", "the benchmark's aggregate")
    # rliable's StratifiedBootstrap draws its indices from NumPy's global generator
    # (np.random.choice), whatever random_state says: seeded here, and put back after.
    with global_random_state_kept():
        np.random.seed(rng_seed)
        point, interval = rly.get_interval_estimates(
            {"x": scores.reshape(-1, 1)},
            lambda x: np.array([metrics.aggregate_iqm(x)]),
            reps=REPS,
            random_state=np.random.RandomState(rng_seed),
        )
    return float(point["x"][0]), float(interval["x"][0, 0]), float(interval["x"][1, 0])


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The aggregate as a dict: ``iqm[metric][game][algorithm] = [point, low, high, seeds]`` and
    ``probability_of_improvement[game]["A > B"] = [point, low, high]``."""
    rly = require("rliable.library", "the benchmark's aggregate")
    metrics = require("rliable.metrics", "the benchmark's aggregate")
    opponents = sorted({name for r in results for name in r["win_rate"]})
    versions: dict[str, set] = {}
    for r in results:
        versions.setdefault(r["game"], set()).add(r.get("league_version"))
    summary: dict[str, Any] = {
        "iqm": {},
        "probability_of_improvement": {},
        "runs": len(results),
        "league_versions": {g: sorted(v, key=str) for g, v in sorted(versions.items())},
    }
    counts = sorted({int(n) for r in results for n in r.get("by_players", {})})
    table_metrics = [f"players:{n}:{field}" for field in TABLE_FIELDS for n in counts]
    exploitability = ["exploitability"] if any("exploitability" in r for r in results) else []
    exploitability += [f"exploitability:{seat}" for seat in sorted({s for r in results for s in r.get("exploitability_as", {})})]
    for metric in ["rating", *(f"win_rate:{o}" for o in opponents), *exploitability, *table_metrics]:
        for (game, algorithm), scores in sorted(_table(results, metric).items()):
            point, low, high = _iqm(scores)
            summary["iqm"].setdefault(metric, {}).setdefault(game, {})[algorithm] = [point, low, high, len(scores)]
    ratings = _table(results, "rating")
    for game in sorted({g for g, _ in ratings}):
        algorithms = sorted(a for g, a in ratings if g == game)
        for a, b in itertools.permutations(algorithms, 2):
            x, y = ratings[(game, a)], ratings[(game, b)]
            if len(x) < 2 or len(y) < 2:
                continue
            with global_random_state_kept():  # (the global generator: see _iqm)
                np.random.seed(0)
                point, interval = rly.get_interval_estimates(
                    {"p": (x.reshape(-1, 1), y.reshape(-1, 1))},
                    metrics.probability_of_improvement,
                    reps=REPS // 5,
                    random_state=np.random.RandomState(0),
                )
            low, high = np.ravel(interval["p"])
            summary["probability_of_improvement"].setdefault(game, {})[f"{a} > {b}"] = [
                float(point["p"]),
                float(low),
                float(high),
            ]
    return summary


def mixed_leagues(summary: dict[str, Any]) -> list[str]:
    """One line per game whose runs were rated against different versions of its league (their
    ratings are on different scales; ``benchmark run`` rates them again where the models are)."""
    return [
        f"the {game} runs were rated against league versions {', '.join(map(str, v))}: their ratings do not compare; "
        "`polarzoo-benchmark run` with the same --out rates the older ones again where their models are"
        for game, v in summary.get("league_versions", {}).items()
        if len(v) > 1
    ]


def _title(metric: str) -> str:
    if metric == "rating":
        return "league rating"
    if metric == "exploitability":
        return "exploitability (a best response's wins against the run's model; lower is better)"
    if metric.startswith("exploitability:"):
        return f"exploitability of the run's model as {metric.partition(':')[2]} (the best response in the other seat)"
    table = _table_metric(metric)
    if table is not None:
        return TABLE_FIELDS[table[1]].format(n=table[0], n_1=int(table[0]) - 1)
    return f"win rate vs {metric.partition(':')[2]}"


def _format(metric: str) -> Any:
    if metric == "rating" or metric.endswith(":rating"):
        return lambda v: f"{v:.0f}"
    if metric.endswith(":mean_points"):
        return lambda v: f"{v:.2f}"
    return lambda v: f"{v:.0%}"


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"Aggregate of {summary['runs']} runs: IQM over seeds [stratified bootstrap 95% interval] (rliable).", ""]
    versions = summary.get("league_versions", {})
    if versions:
        lines += ["League ratings on " + ", ".join(f"`{g}` v{'/v'.join(map(str, v))}" for g, v in versions.items()) + ".", ""]
    warnings_ = mixed_leagues(summary)
    lines += [f"**Warning**: {message}" for message in warnings_] + ([""] if warnings_ else [])
    for metric, games in summary["iqm"].items():
        title = _title(metric)
        lines += [f"**{title}**", "", "| game | algorithm | seeds | IQM [95% CI] |", "|---|---|---:|---|"]
        short = False
        for game, algorithms in games.items():
            for algorithm, (point, low, high, seeds) in algorithms.items():
                fmt = _format(metric)
                asked = len(DEFAULT_SEEDS)
                count = f"{seeds} of {asked}*" if seeds < asked else str(seeds)
                short = short or seeds < asked
                band = "(one seed: no interval)" if seeds < 2 else f"[{fmt(low)}, {fmt(high)}]"
                lines.append(f"| {game} | {algorithm} | {count} | {fmt(point)} {band} |")
        if short:
            lines += [
                "",
                f"\\* fewer seeds than the protocol's {len(DEFAULT_SEEDS)}: not a published result, "
                "and an interval over so few seeds says little.",
            ]
        lines.append("")
    if summary["probability_of_improvement"]:
        lines += [
            "**probability of improvement** (league rating: P(a run of A rates above a run of B))",
            "",
            "| game | A > B | P [95% CI] |",
            "|---|---|---|",
        ]
        for game, pairs in summary["probability_of_improvement"].items():
            for pair, (point, low, high) in pairs.items():
                lines.append(f"| {game} | {pair} | {point:.2f} [{low:.2f}, {high:.2f}] |")
    return "\n".join(lines)


def runs_markdown(results: list[dict[str, Any]]) -> str:
    """Every run: its budget, training time, league rating with its interval (and the league
    version), and its win rates against the named opponents."""
    opponents = sorted({name for r in results for name in r["win_rate"]})
    lines = [
        "| game | algorithm | seed | budget | training | league rating [95% CI] | "
        + " | ".join(f"vs {o}" for o in opponents)
        + " |",
        "|---|---|---:|---|---:|---|" + "---:|" * len(opponents),
    ]
    for r in sorted(results, key=lambda r: (r["game"], r["algorithm"], r["seed"])):
        budget = f"{r['timesteps']:,} steps" if "timesteps" in r else f"{r.get('iterations', '?')} iterations"
        seconds = f"{r['train_seconds']:.0f} s" if r.get("train_seconds") is not None else "?"
        low, high = r["rating_ci95"]
        rates = " | ".join(f"{r['win_rate'][o]:.0%}" if o in r["win_rate"] else "" for o in opponents)
        lines.append(
            f"| {r['game']} | {r['algorithm']} | {r['seed']} | {budget} | {seconds} | "
            f"{r['rating']:.0f} [{low:.0f}, {high:.0f}] (v{r.get('league_version', '?')}) | {rates} |"
        )
    timed = [r["train_seconds"] for r in results if r.get("train_seconds") is not None]
    missing = len(results) - len(timed)
    lines += [
        "",
        f"Training time of the {len(timed)} runs that record it: {sum(timed) / 3600:.2f} h of one core"
        + (f" ({missing} without a recorded time)" if missing else "")
        + ".  The times are wall clock on the machine each run had: its load, and any time the"
        " process was stopped (SIGSTOP), count in them; the scores do not depend on either.",
    ]
    return "\n".join(lines)


def plot_profiles(results: list[dict[str, Any]], path: Path) -> bool:
    """Performance profiles of the win rate against the heuristic: the fraction of runs (all
    games an algorithm runs on) scoring above each threshold, with bootstrap bands."""
    rly = require("rliable.library", "the benchmark's aggregate")
    table = _table(results, "win_rate:heuristic")
    algorithms = sorted({a for _, a in table})
    scores = {}
    for algorithm in algorithms:
        per_game = [v for (g, a), v in sorted(table.items()) if a == algorithm]
        runs = min(len(v) for v in per_game)
        scores[algorithm] = np.stack([v[:runs] for v in per_game], axis=1)  # (seeds, games)
    if not scores:
        return False
    taus = np.linspace(0.0, 1.0, 51)
    distributions, bands = rly.create_performance_profile(scores, taus, reps=REPS // 5)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for algorithm in algorithms:
        ax.plot(taus, distributions[algorithm], label=f"{algorithm} ({scores[algorithm].shape[1]} games)")
        ax.fill_between(taus, bands[algorithm][0], bands[algorithm][1], alpha=0.2)
    ax.set_xlabel("win rate against the heuristic (tau)")
    ax.set_ylabel("fraction of runs above tau")
    ax.set_title("Performance profiles")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path)
    return True


def _curve(train_dir: Path) -> tuple[str, list[tuple[float, float]]] | None:
    """(what the curve measures, [(fraction of the budget, win rate)]) of one run's ``evaluations.csv``."""
    path = train_dir / "evaluations.csv"
    if not path.exists():
        return None
    rows = list(csv.DictReader(path.open()))
    if rows and "opponent" in rows[0]:  # PPO: evaluations against random and the heuristic
        points = [(float(r["timesteps"]), float(r["win_rate"])) for r in rows if r["opponent"] == "heuristic"]
        label = "win rate vs heuristic"
    elif rows:  # AlphaZero on the twin: against random, inside JAX
        points = [(float(r["iteration"]), float(r["win_rate"])) for r in rows]
        label = "win rate vs random (JAX)"
    else:
        return None
    if not points:
        return None
    last = max(x for x, _ in points)
    return label, [(x / last, y) for x, y in points]


def plot_curves(out: Path, budget: str, path: Path) -> bool:
    groups: dict[tuple[str, str, str], list[list[tuple[float, float]]]] = {}
    for train in sorted((out / budget).glob("*/*/seed*/train")):
        curve = _curve(train)
        if curve:
            game, algorithm = train.parts[-4], train.parts[-3]
            groups.setdefault((game, algorithm, curve[0]), []).append(curve[1])
    if not groups:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = sorted({g for g, _, _ in groups})
    fig, axes = plt.subplots(1, len(games), figsize=(5 * len(games), 3.6), squeeze=False)
    rng = np.random.default_rng(0)
    for ax, game in zip(axes[0], games):
        for (g, algorithm, label), curves in sorted(groups.items()):
            if g != game:
                continue
            xs = sorted({round(x, 3) for curve in curves for x, _ in curve})
            matrix = np.array([[dict((round(x, 3), y) for x, y in curve).get(x, np.nan) for x in xs] for curve in curves])
            mean = np.nanmean(matrix, axis=0)
            # A resample may draw only seeds without a point at some x (their curves have other
            # x): that column is NaN in that resample and left out of the percentiles.
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                boots = np.array([np.nanmean(matrix[rng.integers(0, len(matrix), len(matrix))], axis=0) for _ in range(1000)])
                low, high = np.nanpercentile(boots, [2.5, 97.5], axis=0)
            (line,) = ax.plot(xs, mean, marker="o", label=f"{algorithm}: {label} ({len(curves)} seeds)")
            ax.fill_between(xs, low, high, alpha=0.2, color=line.get_color())
        ax.set_title(game)
        ax.set_xlabel("fraction of the training budget")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    save_figure(fig, path)
    return True


def aggregate(out: Path, budget: str) -> list[Path]:
    """Write ``aggregate.json``, ``aggregate.md``, ``profiles.png`` and ``curves.png`` into
    ``out/budget``; returns the paths written."""
    with warnings.catch_warnings():
        # rliable hands arch a RandomState (our fixed seed); arch announces a future change of API
        warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)
        return _aggregate(out, budget)


def _aggregate(out: Path, budget: str) -> list[Path]:
    results = load_results(out, budget)
    folder = out / budget
    if not results:
        return []
    summary = summarize(results)
    for message in mixed_leagues(summary):
        print(f"warning: {message}", file=sys.stderr)
    atomic_write(folder / "aggregate.json", json.dumps(summary, indent=2) + "\n")
    atomic_write(folder / "aggregate.md", markdown(summary) + "\n\n**every run**\n\n" + runs_markdown(results) + "\n")
    written = [folder / "aggregate.json", folder / "aggregate.md"]
    if plot_profiles(results, folder / "profiles.png"):
        written.append(folder / "profiles.png")
    if plot_curves(out, budget, folder / "curves.png"):
        written.append(folder / "curves.png")
    return written
