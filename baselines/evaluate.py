"""Round-robin tournament among agents, both seats, seeded games.

    python -m polarzoo.baselines.evaluate --env fire_and_ice_v0 --agents random heuristic mcts:50 \\
        model:runs/fire_and_ice_v0-XXXX/model.zip --games 20 --out runs/eval-fi

``polarzoo-evaluate`` is the same command (a console script installed with the package).

Writes ``eval.json``, ``eval.md`` (wins/draws/losses with 95% Wilson intervals, mean game
length, illegal moves, Elo), ``winrate.png`` (heatmap: row agent's win rate against column
agent) and, with ``--run-dir``, ``learning_curve.png`` from a training run's evaluations.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.tournament import PairResult, elo_ratings, markdown_table, round_robin


def win_rate_matrix(results: Sequence[PairResult], names: Sequence[str]) -> np.ndarray:
    matrix = np.full((len(names), len(names)), np.nan)
    index = {n: i for i, n in enumerate(names)}
    for r in results:
        i, j = index[r.first], index[r.second]
        matrix[i, j] = r.wins / max(r.games, 1)
        matrix[j, i] = r.losses / max(r.games, 1)
    return matrix


def plot_heatmap(matrix: np.ndarray, names: Sequence[str], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 3, 1.0 * len(names) + 2))
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="RdYlGn")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(matrix[i, j]):
                ax.text(j, i, f"{matrix[i, j]:.0%}", ha="center", va="center")
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent (win rate)")
    ax.set_title(title)
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_learning_curve(run_dir: Path, path: Path) -> bool:
    """Win rate against each reference opponent over training time, from evaluations.csv."""
    source = run_dir / "evaluations.csv"
    if not source.exists():
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float, float, float]]] = {}
    with source.open() as handle:
        for row in csv.DictReader(handle):
            series.setdefault(row["opponent"], []).append(
                (int(row["timesteps"]), float(row["win_rate"]), float(row["ci_low"]), float(row["ci_high"]))
            )
    fig, ax = plt.subplots(figsize=(7, 4))
    for opponent, points in series.items():
        steps, rate, low, high = map(np.array, zip(*sorted(points)))
        ax.plot(steps, rate, marker="o", label=f"vs {opponent}")
        ax.fill_between(steps, low, high, alpha=0.2)
    ax.set_ylim(0, 1)
    ax.set_xlabel("training timesteps")
    ax.set_ylabel("win rate (both seats)")
    ax.set_title(f"Learning curve: {run_dir.name}")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def evaluate(
    env_id: str, agent_specs: Sequence[str], games: int, out: Path, seed: int = 0, env_kwargs: dict[str, Any] | None = None,
    run_dir: Path | None = None, agents: Sequence[Any] | None = None, show_progress: bool = True,
) -> dict[str, Any]:
    agents = list(agents) if agents is not None else [make_agent(spec, env_id) for spec in agent_specs]
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names must differ, got {names}")
    out.mkdir(parents=True, exist_ok=True)
    results = round_robin(env_id, agents, games, seed, env_kwargs, show_progress)
    ratings = elo_ratings(results, names)
    table = markdown_table(results, ratings)
    summary = {
        "env": env_id,
        "games_per_seat": games,
        "seed": seed,
        "results": [r.as_dict() for r in results],
        "elo": ratings,
        "illegal_moves": sum(r.illegal for r in results),
    }
    (out / "eval.json").write_text(json.dumps(summary, indent=2))
    (out / "eval.md").write_text(table + "\n")
    plot_heatmap(win_rate_matrix(results, names), names, out / "winrate.png", f"{env_id}: win rates")
    if run_dir is not None:
        plot_learning_curve(run_dir, out / "learning_curve.png")
    summary["table"] = table
    return summary


def main(argv: list[str] | None = None) -> None:
    from polarzoo.envs import ENVIRONMENTS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", required=True, choices=sorted(ENVIRONMENTS), help="environment id")
    parser.add_argument("--agents", nargs="+", default=["random", "heuristic"], help="agent specs: random, heuristic, mcts[:N], model:PATH")
    parser.add_argument("--games", type=int, default=20, help="seeded games per pairing and seat")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--out", type=Path, default=Path("runs/eval"), help="output folder")
    parser.add_argument("--run-dir", type=Path, default=None, help="a training run folder: also plot its learning curve")
    parser.add_argument("--env-kwargs", type=json.loads, default=None, help='JSON constructor arguments, e.g. \'{"num_players": 2}\'')
    args = parser.parse_args(argv)
    summary = evaluate(args.env, args.agents, args.games, args.out, args.seed, args.env_kwargs, args.run_dir)
    print(summary["table"])
    print(f"\nwritten to {args.out}/ (eval.json, eval.md, winrate.png)")


if __name__ == "__main__":
    main()
