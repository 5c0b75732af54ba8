"""Round-robin tournament among agents, both seats, seeded games; for games of 3-6 players, a
table of one lineup played in every rotation of the seats.

    python -m polarzoo.baselines.evaluate --env fire_and_ice_v0 --agents random heuristic mcts:50 \\
        model:runs/fire_and_ice_v0-XXXX/model.zip --games 20 --out runs/eval-fi
    python -m polarzoo.baselines.evaluate --env thin_ice_v0 --env-kwargs '{"num_players": 3}' \\
        --agents pretrained heuristic heuristic --games 20

Two players: every pair of agents, each in both seats, W/D/L with 95% Wilson intervals (a Thin Ice
draw: both still in when the supply runs out).  More players: ``--agents`` gives one agent per seat
(an agent may be listed more than once); every rotation of that lineup is played ``--games``
times, so every agent plays every seat equally often; per agent, mean points and mean reward with
95% intervals, the rank distribution, how it went out (Thin Ice: T / A / N, or stayed in) and the
mean game length.

``polarzoo-evaluate`` is the same command (a console script installed with the package).

Writes ``eval.json``, ``eval.md`` (wins/draws/losses with 95% Wilson intervals, mean game
length, illegal moves, Elo), ``winrate.png`` (heatmap: row agent's win rate against column
agent) and, with ``--run-dir``, ``learning_curve.png`` from a training run's evaluations.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.cli.progress import progress
from polarzoo.baselines.cli.runs import LineFile, atomic_write, save_figure
from polarzoo.baselines.evaluation.tournament import (
    PairResult,
    SeatStats,
    elo_ratings,
    game_key,
    markdown_table,
    multiplayer_markdown,
    multiplayer_table,
    round_robin,
    seat_names,
)
from polarzoo.envs.utils import loads_json


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
    save_figure(fig, path)


def plot_ranks(stats: Sequence[SeatStats], path: Path, title: str) -> None:
    """Stacked bars: each agent's share of games finished at each rank (N-player tables)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seats = stats[0].num_players
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(stats) + 2))
    left = np.zeros(len(stats))
    colours = plt.get_cmap("RdYlGn_r")(np.linspace(0.1, 0.9, seats))
    for rank in range(1, seats + 1):
        share = np.array([entry.as_dict()["rank_distribution"][str(rank)] for entry in stats])
        ax.barh([entry.name for entry in stats], share, left=left, color=colours[rank - 1], label=f"rank {rank}")
        left += share
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of games")
    ax.set_title(title)
    ax.legend(fontsize="small", ncol=min(seats, 6), loc="upper center", bbox_to_anchor=(0.5, -0.25))
    save_figure(fig, path)


def plot_win_rate_over_training(path: Path, title: str, ylabel: str, draw: Callable[[Any], None]) -> None:
    """A win-rate-over-timesteps figure in the house layout; ``draw(ax)`` adds the lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    draw(ax)
    ax.set_ylim(-0.02, 1.02)  # a seat at 0% or 100% stays visible
    ax.set_xlabel("training timesteps")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    save_figure(fig, path)


def plot_learning_curve(run_dir: Path, path: Path) -> bool:
    """Win rate against each reference opponent over training time, from evaluations.csv."""
    source = run_dir / "evaluations.csv"
    if not source.exists():
        return False
    series: dict[str, list[tuple[int, float, float, float]]] = {}
    by_seat: dict[tuple[str, str], list[tuple[int, float]]] = {}
    with source.open() as handle:
        for row in csv.DictReader(handle):
            series.setdefault(row["opponent"], []).append(
                (int(row["timesteps"]), float(row["win_rate"]), float(row["ci_low"]), float(row["ci_high"]))
            )
            for key, value in row.items():
                if key and key.startswith("win_rate_as_") and value not in (None, ""):
                    by_seat.setdefault((row["opponent"], key.removeprefix("win_rate_as_")), []).append(
                        (int(row["timesteps"]), float(value))
                    )

    def draw(ax: Any) -> None:
        for opponent, points in series.items():
            steps, rate, low, high = map(np.array, zip(*sorted(points)))
            line = ax.plot(steps, rate, marker="o", label=f"vs {opponent}")[0]
            ax.fill_between(steps, low, high, alpha=0.2)
            seats = sorted(seat for other, seat in by_seat if other == opponent)
            if len(seats) == 2:  # two-player games: each seat's own rate, thin (more seats would clutter)
                for seat, style in zip(seats, (":", "--")):
                    seat_steps, seat_rate = map(np.array, zip(*sorted(by_seat[(opponent, seat)])))
                    ax.plot(seat_steps, seat_rate, style, color=line.get_color(), linewidth=1, label=f"vs {opponent}, as {seat}")

    plot_win_rate_over_training(path, f"Learning curve: {run_dir.name}", "win rate", draw)
    return True


def finished_games(out: Path, env_id: str | None = None, seed: int | None = None) -> dict[tuple, dict[str, Any]]:
    """The games an interrupted evaluation left in ``out/games.jsonl``, by
    :func:`~polarzoo.baselines.evaluation.tournament.game_key`: only well-formed records of ``env_id``
    and ``seed`` (when given) are kept; a line cut off by the interruption, a damaged record or a
    record of another command is played again (said once, with how many)."""
    found: dict[tuple, dict[str, Any]] = {}
    path = out / "games.jsonl"
    if not path.exists():
        return found
    skipped, foreign = 0, 0
    for line in path.read_text().splitlines():
        try:
            record = loads_json(line, what="a game record", max_depth=16)
            key = game_key(record)
            _check_record(record)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            skipped += 1
            continue
        if (env_id is not None and record.get("env") != env_id) or (seed is not None and record.get("seed") != seed):
            foreign += 1
            continue
        found[key] = record
    if skipped or foreign:
        print(
            f"note: {path}: {skipped} damaged or cut-off record(s) and {foreign} of another command (another game "
            "or seed) are not kept; those games are played again",
            file=sys.stderr,
        )
    return found


def _check_record(record: dict[str, Any]) -> None:
    """``ValueError`` for a record whose fields are not what the evaluation wrote."""
    if not isinstance(record.get("length"), int) or not isinstance(record.get("game"), int):
        raise ValueError("length and game must be whole numbers")
    if "rotation" in record:
        seats = len(record["seats"])
        if not all(len(record[k]) == seats for k in ("points", "rewards", "went_out", "illegal")):
            raise ValueError("a field per seat is missing")
        [float(x) for x in (*record["points"], *record["rewards"])]
    elif record.get("result") not in ("win", "draw", "loss") or not isinstance(record.get("illegal"), int):
        raise ValueError("result must be win, draw or loss")


class _Writer:
    """Writes into the output folder as results come; if it cannot, says so once and goes on
    (the table is still printed: no finished game is lost to a full disk or a bad path)."""

    def __init__(self, out: Path, finished: dict[tuple, dict[str, Any]] | None = None) -> None:
        self.out = out
        self.failed: str | None = None
        self.forfeits: dict[str, dict[str, int]] = {}  # agent -> reason -> games
        # The finished games of a resumed evaluation are kept as they were (written whole first);
        # the games come back through ``game`` in play order, and those are not written twice.
        self.kept = set(finished or ())
        self.games: LineFile | None = None
        try:
            out.mkdir(parents=True, exist_ok=True)
            self.games = LineFile(out / "games.jsonl", [json.dumps(record) for record in (finished or {}).values()])
        except OSError as error:
            self._fail(error)

    def _fail(self, error: OSError) -> None:
        if self.failed is None:
            self.failed = f"cannot write to {self.out}: {error.strerror or error}"
            print(f"warning: {self.failed}; results are printed only", flush=True)

    def game(self, record: dict[str, Any]) -> None:
        for name, why in (record.get("forfeits") or {}).items():  # a process agent's lost games, with the reason
            self.forfeits.setdefault(str(name), {}).setdefault(str(why), 0)
            self.forfeits[str(name)][str(why)] += 1
        if self.games is not None and game_key(record) not in self.kept:
            try:
                self.games.add(json.dumps(record))
            except OSError as error:
                self._fail(error)
                self.games.close()
                self.games = None

    def write(self, name: str, text: str) -> None:
        """``out/name`` written whole or not at all (a temporary name, then a rename)."""
        if self.failed is None:
            try:
                atomic_write(self.out / name, text)
            except OSError as error:
                self._fail(error)

    def call(self, function: Any, *args: Any) -> None:
        if self.failed is None:
            try:
                function(*args)
            except OSError as error:
                self._fail(error)

    def close(self) -> None:
        if self.games is not None:
            self.games.close()


def evaluate(
    env_id: str,
    agent_specs: Sequence[str],
    games: int,
    out: Path,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    run_dir: Path | None = None,
    agents: Sequence[Any] | None = None,
    show_progress: bool = True,
    workers: int = 1,
    finished: dict[tuple, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Round-robin of the agents (built from ``agent_specs`` unless ``agents`` are given), its
    games in ``workers`` processes when more than 1; ``finished`` (:func:`finished_games`): games
    of an interrupted run of the same evaluation, kept instead of played again.

    Each finished game is appended to ``out/games.jsonl`` at once; at the end ``eval.json``,
    ``eval.md``, ``winrate.png`` (and ``learning_curve.png`` with ``run_dir``).  Returns the
    summary with ``"table"`` (markdown) and ``"written"`` (the files written)."""
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    agents = list(agents) if agents is not None else [make_agent(spec, env_id) for spec in agent_specs]
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(agents)}")
    if len(seat_names(env_id, env_kwargs)) > 2:
        return _evaluate_table(env_id, agents, games, out, seed, env_kwargs, run_dir, show_progress, workers, finished)
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names must differ, got {names}")
    writer = _Writer(out, finished)
    try:
        results = round_robin(
            env_id, agents, games, seed, env_kwargs, show_progress, on_game=writer.game, workers=workers, finished=finished
        )
    finally:
        writer.close()
    ratings = elo_ratings(results, names)
    table = markdown_table(results, ratings)
    summary = {**_summary(env_id, games, seed, results), "elo": ratings}

    def plot(path: Path) -> None:
        plot_heatmap(win_rate_matrix(results, names), names, path, f"{env_id}: win rates")

    return _write_summary(writer, out, summary, table, run_dir, "winrate.png", plot)


def _summary(env_id: str, games: int, seed: int, entries: Sequence[Any], **fields: Any) -> dict[str, Any]:
    """``eval.json``'s fields: the evaluation's settings, ``fields`` and each entry's results."""
    return {
        "env": env_id,
        **fields,
        "games_per_seat": games,
        "seed": seed,
        "results": [entry.as_dict() for entry in entries],
        "illegal_moves": sum(entry.illegal for entry in entries),
    }


def _write_summary(
    writer: _Writer,
    out: Path,
    summary: dict[str, Any],
    table: str,
    run_dir: Path | None,
    figure: str,
    plot: Callable[[Path], None],
) -> dict[str, Any]:
    """``eval.json``, ``eval.md``, the figure and (with ``run_dir``) the learning curve; the
    summary gets ``"table"`` and ``"written"`` (the files written)."""
    if writer.forfeits:  # the games an agent lost without a move: a timeout, a crash, a bad reply
        summary["forfeits"] = writer.forfeits
        table += (
            "\n\n**Forfeits** (games lost by a forfeit: no answer in time, a crash, a malformed or illegal reply)\n\n| agent | games | reason |\n|---|---:|---|\n"
            + "\n".join(
                f"| {name} | {count} | {why} |"
                for name, reasons in sorted(writer.forfeits.items())
                for why, count in sorted(reasons.items())
            )
        )
    writer.write("eval.json", json.dumps(summary, indent=2))
    writer.write("eval.md", table + "\n")
    writer.call(plot, out / figure)
    written = ["games.jsonl", "eval.json", "eval.md", figure]
    if run_dir is not None:
        if not (run_dir / "evaluations.csv").exists():
            print(f"note: no learning curve: {run_dir} has no evaluations.csv yet (the run writes it at its first evaluation)")
        else:
            writer.call(plot_learning_curve, run_dir, out / "learning_curve.png")
        written.append("learning_curve.png")
    summary["table"] = table
    summary["written"] = [] if writer.failed else [str(out / name) for name in written if (out / name).exists()]
    return summary


def _evaluate_table(
    env_id: str,
    agents: list[Any],
    games: int,
    out: Path,
    seed: int,
    env_kwargs: dict[str, Any] | None,
    run_dir: Path | None,
    show_progress: bool,
    workers: int,
    finished: dict[tuple, dict[str, Any]] | None,
) -> dict[str, Any]:
    """:func:`evaluate` of a game of 3+ seats (the same arguments): the N-player
    table (:func:`polarzoo.baselines.evaluation.tournament.multiplayer_table`), the same files as
    the two-player round robin (``games.jsonl`` at once, then ``eval.json``, ``eval.md`` and
    ``ranks.png``, the rank distribution)."""
    seats = len(seat_names(env_id, env_kwargs))
    if len(agents) != seats:
        raise ValueError(
            f"{env_id} has {seats} seats here: give exactly {seats} agents, one per seat "
            f"(an agent may be listed more than once), got {len(agents)}"
        )
    writer = _Writer(out, finished)
    bar = progress(games * seats, "games", "game", show_progress)
    try:
        stats = multiplayer_table(
            env_id, agents, games, seed, env_kwargs, bar.update if bar else None, writer.game, workers, finished
        )
    finally:
        writer.close()
        if bar:
            bar.close()
    table = multiplayer_markdown(stats)
    summary = _summary(env_id, games, seed, stats, num_players=seats, lineup=[a.name for a in agents])

    def plot(path: Path) -> None:
        plot_ranks(stats, path, f"{env_id}, {seats} players: ranks")

    return _write_summary(writer, out, summary, table, run_dir, "ranks.png", plot)


def _count_lines(path: Path) -> int:
    try:
        return sum(1 for _ in path.open())
    except OSError:
        return 0
