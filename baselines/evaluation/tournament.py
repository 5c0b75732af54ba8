"""Seeded games between agents, round-robin tournaments, Wilson intervals and Elo ratings."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from polarzoo.baselines.agents.process import AgentForfeit
from polarzoo.baselines.cli.progress import progress
from polarzoo.envs.utils import wilson_interval  # noqa: F401 (re-exported: baselines use it from here)


@dataclass
class GameRecord:
    seats: list[str]  # agent name per seat
    scores: list[float]  # per seat: 1 win, 0.5 draw, 0 loss (N players: 1 for the top rank)
    rewards: list[float]
    length: int  # actions taken
    illegal: list[int]  # illegal actions attempted per seat
    result: dict[str, Any] = field(default_factory=dict)  # the env's own ``result()`` (points, rules, ...)
    actions: list[int] = field(default_factory=list)  # every action played, the opening's included (a replay)
    forfeits: dict[int, str] = field(default_factory=dict)  # seat -> why it lost without a move (a process agent)


def play_game(
    env_id: str,
    agents: Sequence[Any],
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
    opening: tuple[int, int] | None = None,
) -> GameRecord:
    """One seeded game, ``agents[i]`` in seat ``i``.  An illegal action ends the game, lost.

    ``opening = (opening_seed, plies)``: the first ``plies`` moves are uniformly random legal
    moves drawn from ``opening_seed`` alone, so two deterministic agents do not play the same
    game every time, and the same opening can be played with the seats swapped (a paired
    opening, as engine matches in chess are played)."""
    from polarzoo.envs import ENVIRONMENTS

    env = ENVIRONMENTS[env_id].raw_env(**(env_kwargs or {}))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed + 1_000_003)
    opening_rng = np.random.default_rng(opening[0]) if opening else None
    opening_plies = opening[1] if opening else 0
    seat_of = {agent: i for i, agent in enumerate(env.possible_agents)}
    totals = [0.0] * len(agents)
    illegal = [0] * len(agents)
    length = 0
    actions: list[int] = []
    forfeits: dict[int, str] = {}
    for agent in env.agent_iter(max_iter=100_000):
        _, reward, termination, truncation, _ = env.last()
        seat = seat_of[agent]
        totals[seat] += reward
        if termination or truncation:
            env.step(None)
            continue
        if length < opening_plies:
            assert opening_rng is not None
            actions.append(int(opening_rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
            env.step(actions[-1])
            length += 1
            continue
        try:
            action = _checked_action(agents[seat].act(env, agent, rng), env, agent)
        except AgentForfeit as forfeit:  # no answer in time, a crash, a malformed or illegal reply
            forfeits[seat] = forfeit.reason
            action = -1
        if action < 0 or not env.observe(agent)["action_mask"][action]:
            illegal[seat] += 1
            totals = [1.0] * len(agents)
            totals[seat] = -1.0
            break
        actions.append(int(action))
        env.step(int(action))
        length += 1
    for player in agents:  # a process agent's process ends with its game
        if callable(getattr(player, "game_over", None)):
            player.game_over()
    best = max(totals)
    winners = [i for i, t in enumerate(totals) if t == best]
    scores = [(1.0 / len(winners) if i in winners else 0.0) for i in range(len(agents))]
    result = env.result() if hasattr(env, "result") else {}
    env.close()
    return GameRecord([a.name for a in agents], scores, totals, length, illegal, result, actions, forfeits)


def _checked_action(action: Any, env: Any, agent: str) -> int:
    """An in-process agent's answer as an action id, or :class:`AgentForfeit` as a process agent's
    would be when it is not a whole number or out of range (an illegal id in range is counted as
    an illegal move by the caller)."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise AgentForfeit(f"an action that is not a whole number: {str(action)[:40]!r} ({type(action).__name__})")
    count = int(env.action_space(agent).n)  # (the mask is read once, by the caller)
    if not 0 <= int(action) < count:
        raise AgentForfeit(f"action {int(action)} is out of range (0 to {count - 1})")
    return int(action)


def seat_names(env_id: str, env_kwargs: dict[str, Any] | None = None) -> list[str]:
    """The seats (agent names) of ``env_id`` built with ``env_kwargs``."""
    from polarzoo.envs import ENVIRONMENTS

    env = ENVIRONMENTS[env_id].raw_env(**(env_kwargs or {}))
    try:
        return list(env.possible_agents)
    finally:
        env.close()


def _play_task(task: tuple) -> GameRecord:
    return play_game(*task)


def _quiet_worker() -> None:
    # One thread per worker: the workers already use every core between them.
    import os
    import signal

    # Ctrl-C is the parent's to handle (it cancels the games not started and exits 130); a worker
    # finishes its game instead of printing a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - the envs' games need no torch
        pass


class GamePool:
    """Processes that play games, kept for many batches (``with GamePool(2) as pool:
    pool.play(tasks)``); one worker plays in this process.  The agents are pickled: a saved
    model is reloaded from its file."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._pool: Any = None

    def __enter__(self) -> GamePool:
        if self.workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_quiet_worker
            )
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def play(self, tasks: Sequence[tuple[str, list[Any], int, dict[str, Any] | None]]) -> Iterator[GameRecord]:
        """``play_game(env_id, lineup, seed, env_kwargs)`` for each task, results in task order."""
        if self._pool is None or len(tasks) <= 1:
            for task in tasks:
                yield _play_task(task)
            return
        yield from self._pool.map(_play_task, tasks)


def play_games(tasks: Sequence[tuple[str, list[Any], int, dict[str, Any] | None]], workers: int = 1) -> Iterator[GameRecord]:
    """``play_game(env_id, lineup, seed, env_kwargs)`` for each task, results in task order;
    ``workers > 1`` plays them in that many processes (the agents are pickled: a saved model is
    reloaded from its file)."""
    with GamePool(min(workers, len(tasks))) as pool:
        yield from pool.play(tasks)


class SeatTally(NamedTuple):
    """Wins, draws and losses of the first agent in one seat (a tuple: ``w, d, l = tally``)."""

    wins: int
    draws: int
    losses: int

    def __repr__(self) -> str:
        return f"SeatTally(wins={self.wins}, draws={self.draws}, losses={self.losses})"


@dataclass
class PairResult:
    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    lengths: list[int] = field(default_factory=list)
    illegal: int = 0
    by_seat: dict[int, SeatTally] = field(default_factory=dict)  # first's seat index -> (wins, draws, losses)
    seat_names: list[str] = field(default_factory=list)  # the env's seats, in index order

    def seat_tallies(self) -> dict[str, dict[str, int]]:
        """``{"fire": {"wins": 5, "draws": 0, "losses": 0}, ...}``: ``by_seat`` by seat name."""
        names = self.seat_names or [str(k) for k in sorted(self.by_seat)]
        return {names[k] if k < len(names) else str(k): t._asdict() for k, t in sorted(self.by_seat.items())}

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def as_dict(self) -> dict[str, Any]:
        low, high = wilson_interval(self.wins, self.games)
        return {
            "agent": self.first,
            "opponent": self.second,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "win_rate": self.wins / max(self.games, 1),
            "win_rate_ci95": [low, high],
            "mean_length": float(np.mean(self.lengths)) if self.lengths else 0.0,
            "illegal_moves": self.illegal,
            "by_seat": self.seat_tallies(),
        }


def game_key(record: dict[str, Any]) -> tuple:
    """The key of one ``games.jsonl`` record: which game of which table it is (two players:
    agent, opponent, the agent's seat, game; 3+ players: the lineup, its rotation, game)."""
    if "rotation" in record:
        return ("rotation", tuple(record["seats"]), record["rotation"], record["game"])
    return (record["agent"], record["opponent"], record["agent_seat"], record["game"])


def head_to_head(
    env_id: str,
    first: Any,
    second: Any,
    games_per_seat: int,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: Callable[[], None] | None = None,
    on_game: Callable[[dict[str, Any]], None] | None = None,
    workers: int = 1,
    finished: dict[tuple, dict[str, Any]] | None = None,
) -> PairResult:
    """``first`` against ``second``, ``games_per_seat`` seeded games with ``first`` in each seat
    (in ``workers`` processes when more than 1).  ``finished``: records of games already played
    (by :func:`game_key`; a resumed evaluation), counted as they are instead of played again."""
    finished = finished or {}
    num_seats = len(seat_names(env_id, env_kwargs))
    result = PairResult(first.name, second.name, seat_names=list(seat_names(env_id, env_kwargs)))
    tasks = []
    for seat in range(num_seats):
        for game in range(games_per_seat):
            if (first.name, second.name, seat, game) in finished:
                continue
            lineup = [second] * num_seats
            lineup[seat] = first
            tasks.append((env_id, lineup, seed + 7919 * game + seat, env_kwargs))
    records = play_games(tasks, workers)
    for seat in range(num_seats):
        tally = [0, 0, 0]
        for game in range(games_per_seat):
            old = finished.get((first.name, second.name, seat, game))
            replay: dict[str, Any] = {"env_seed": seed + 7919 * game + seat}
            if old is not None:
                outcome, length, illegal = ("win", "draw", "loss").index(old["result"]), int(old["length"]), int(old["illegal"])
                replay.update({k: old[k] for k in ("env_kwargs", "actions", "forfeits") if k in old})
            else:
                record = next(records)
                mine = record.scores[seat]
                others = max(s for i, s in enumerate(record.scores) if i != seat)
                outcome = 0 if mine > others else (1 if mine == others else 2)
                length, illegal = record.length, sum(record.illegal)
                replay.update(env_kwargs=env_kwargs or {}, actions=record.actions)
                if record.forfeits:  # who lost without a move, and why (a process agent)
                    replay["forfeits"] = {record.seats[s]: why for s, why in record.forfeits.items()}
            tally[outcome] += 1
            result.lengths.append(length)
            result.illegal += illegal
            if on_game is not None:
                on_game(
                    {
                        "env": env_id,
                        "seed": seed,
                        "agent": first.name,
                        "opponent": second.name,
                        "agent_seat": seat,
                        "game": game,
                        "result": ("win", "draw", "loss")[outcome],
                        "length": length,
                        "illegal": illegal,
                        **replay,
                    }
                )
            if progress:
                progress()
        result.by_seat[seat] = SeatTally(*tally)
        result.wins += tally[0]
        result.draws += tally[1]
        result.losses += tally[2]
    return result


def elo_ratings(results: Sequence[PairResult], names: Sequence[str], iterations: int = 2000) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale (mean 1500), fitted to all games (draws = half)."""
    index = {name: i for i, name in enumerate(names)}
    strength = np.zeros(len(names))
    pairs = [(index[r.first], index[r.second], r.wins + 0.5 * r.draws, r.games) for r in results if r.games]
    for _ in range(iterations):
        gradient = np.zeros(len(names))
        for i, j, score, games in pairs:
            expected = games / (1 + math.exp(strength[j] - strength[i]))
            gradient[i] += score - expected
            gradient[j] -= score - expected
        strength += 0.05 * gradient / max(1, max(g for *_, g in pairs)) * 4
        strength = np.clip(strength - strength.mean(), -8, 8)  # bounded when one side never loses
    return {name: float(1500 + 400 / math.log(10) * strength[index[name]]) for name in names}


def round_robin(
    env_id: str,
    agents: Sequence[Any],
    games_per_seat: int,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    show_progress: bool = True,
    on_game: Callable[[dict[str, Any]], None] | None = None,
    workers: int = 1,
    finished: dict[tuple, dict[str, Any]] | None = None,
) -> list[PairResult]:
    pairs = list(itertools.combinations(range(len(agents)), 2))
    seats = len(seat_names(env_id, env_kwargs))
    bar = progress(len(pairs) * games_per_seat * seats, "games", "game", show_progress)
    results = []
    for i, j in pairs:
        results.append(
            head_to_head(
                env_id,
                agents[i],
                agents[j],
                games_per_seat,
                seed,
                env_kwargs,
                bar.update if bar else None,
                on_game,
                workers,
                finished,
            )
        )
    if bar:
        bar.close()
    return results


def markdown_table(results: Sequence[PairResult], ratings: dict[str, float] | None = None) -> str:
    lines = [
        "| agent | opponent | games | W | D | L | win rate [95% CI] | mean length | illegal |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for r in results:
        d = r.as_dict()
        low, high = d["win_rate_ci95"]
        lines.append(
            f"| {r.first} | {r.second} | {r.games} | {r.wins} | {r.draws} | {r.losses} | "
            f"{d['win_rate']:.0%} [{low:.0%}, {high:.0%}] | {d['mean_length']:.1f} | {r.illegal} |"
        )
    if ratings:
        lines += ["", "| agent | Elo |", "|---|---:|"]
        for name, rating in sorted(ratings.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {name} | {rating:.0f} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ N players
def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean and its 95% normal-approximation interval (``mean +- z * sd / sqrt(n)``)."""
    array = np.asarray(values, dtype=float)
    if len(array) == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(array.mean())
    half = z * float(array.std(ddof=1)) / math.sqrt(len(array)) if len(array) > 1 else math.inf
    return (mean, mean - half, mean + half)


@dataclass
class SeatStats:
    """One agent's games in an N-player table (all its seats together)."""

    name: str
    num_players: int
    points: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)  # 1 = best; players with equal points share the better rank
    went_out: dict[str, int] = field(default_factory=dict)  # "T" / "A" / "N" / "in" (stayed in) -> games
    lengths: list[int] = field(default_factory=list)
    illegal: int = 0

    def as_dict(self) -> dict[str, Any]:
        points, reward = mean_interval(self.points), mean_interval(self.rewards)
        games = len(self.ranks)
        return {
            "agent": self.name,
            "games": games,
            "mean_points": points[0],
            "mean_points_ci95": [points[1], points[2]],
            "mean_reward": reward[0],
            "mean_reward_ci95": [reward[1], reward[2]],
            "rank_distribution": {str(r): self.ranks.count(r) / max(games, 1) for r in range(1, self.num_players + 1)},
            "went_out": {rule: self.went_out.get(rule, 0) for rule in ("T", "A", "N", "in", "other")},
            "mean_length": float(np.mean(self.lengths)) if self.lengths else 0.0,
            "illegal_moves": self.illegal,
        }


def ranks_of(points: Sequence[float]) -> list[int]:
    """Rank per seat, 1 = most points; equal points share the better rank."""
    return [1 + sum(other > mine for other in points) for mine in points]


def multiplayer_table(
    env_id: str,
    agents: Sequence[Any],
    games_per_seat: int,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: Callable[[], None] | None = None,
    on_game: Callable[[dict[str, Any]], None] | None = None,
    workers: int = 1,
    finished: dict[tuple, dict[str, Any]] | None = None,
) -> list[SeatStats]:
    """``agents`` (one per seat; an agent may appear more than once) in every rotation of the
    lineup, ``games_per_seat`` seeded games each, so every agent plays every seat equally often.
    Points are the env's ``result()["points"]`` where it has them (Thin Ice), else the rewards;
    how each seat went out is ``result()["out_rule"]`` (``"in"`` = still in at the end)."""
    seats = len(seat_names(env_id, env_kwargs))
    if len(agents) != seats:
        raise ValueError(f"{env_id} with these arguments has {seats} seats; give one agent per seat (got {len(agents)})")
    names = list(dict.fromkeys(a.name for a in agents))
    stats = {name: SeatStats(name, seats) for name in names}
    lineups = [[agents[(i + rotation) % seats] for i in range(seats)] for rotation in range(seats)]
    finished = finished or {}

    def key(rotation: int, game: int) -> tuple:
        return ("rotation", tuple(a.name for a in lineups[rotation]), rotation, game)

    records = play_games(
        [
            (env_id, lineups[rotation], seed + 7919 * game + rotation, env_kwargs)
            for rotation in range(seats)
            for game in range(games_per_seat)
            if key(rotation, game) not in finished
        ],
        workers,
    )
    for rotation in range(seats):
        lineup = lineups[rotation]
        for game in range(games_per_seat):
            old = finished.get(key(rotation, game))
            replay: dict[str, Any] = {"env_seed": seed + 7919 * game + rotation}
            if old is not None:  # a game of a resumed evaluation, as it was recorded
                points, rewards, went = (
                    [float(x) for x in old["points"]],
                    [float(x) for x in old["rewards"]],
                    list(old["went_out"]),
                )
                length, illegal = int(old["length"]), [int(x) for x in old["illegal"]]
                replay.update({k: old[k] for k in ("env_kwargs", "actions", "forfeits") if k in old})
            else:
                record = next(records)
                agent_names = list((record.result.get("points") or {}).keys())
                points = [float(record.result["points"][a]) for a in agent_names] if agent_names else list(record.rewards)
                rules = record.result.get("out_rule") or {}
                went = []
                for seat in range(seats):
                    rule = rules.get(agent_names[seat]) if agent_names else None
                    went.append(rule if rule in ("T", "A", "N") else ("in" if rule is None else "other"))
                rewards, length, illegal = list(record.rewards), record.length, list(record.illegal)
                replay.update(env_kwargs=env_kwargs or {}, actions=record.actions)
                if record.forfeits:
                    replay["forfeits"] = {record.seats[s]: why for s, why in record.forfeits.items()}
            ranks = ranks_of(points)
            for seat, agent in enumerate(lineup):
                entry = stats[agent.name]
                entry.points.append(points[seat])
                entry.rewards.append(rewards[seat])
                entry.ranks.append(ranks[seat])
                entry.went_out[went[seat]] = entry.went_out.get(went[seat], 0) + 1
                entry.lengths.append(length)
                entry.illegal += illegal[seat]
            if on_game is not None:
                on_game(
                    {
                        "env": env_id,
                        "seed": seed,
                        "seats": [a.name for a in lineup],
                        "rotation": rotation,
                        "game": game,
                        "points": points,
                        "rewards": rewards,
                        "ranks": ranks,
                        "went_out": went,
                        "length": length,
                        "illegal": illegal,
                        **replay,
                    }
                )
            if progress:
                progress()
    return [stats[name] for name in names]


def multiplayer_markdown(stats: Sequence[SeatStats]) -> str:
    """The N-player table: mean points and reward with 95% intervals, ranks, how each went out."""
    seats = stats[0].num_players if stats else 0
    rank_columns = " | ".join(f"rank {r}" for r in range(1, seats + 1))
    lines = [
        f"| agent | games | mean points [95% CI] | mean reward [95% CI] | {rank_columns} | out T / A / N / stayed in | mean length | illegal |",
        "|---|---:|---|---|" + "---:|" * seats + "---|---:|---:|",
    ]
    for entry in stats:
        d = entry.as_dict()
        low, high = d["mean_points_ci95"]
        reward_low, reward_high = d["mean_reward_ci95"]
        ranks = " | ".join(f"{d['rank_distribution'][str(r)]:.0%}" for r in range(1, seats + 1))
        out = d["went_out"]
        lines.append(
            f"| {entry.name} | {d['games']} | {d['mean_points']:.2f} [{low:.2f}, {high:.2f}] | "
            f"{d['mean_reward']:+.2f} [{reward_low:+.2f}, {reward_high:+.2f}] | {ranks} | "
            f"{out['T']} / {out['A']} / {out['N']} / {out['in']} | {d['mean_length']:.1f} | {d['illegal_moves']} |"
        )
    return "\n".join(lines)
