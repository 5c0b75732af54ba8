"""Where one agent stands in a frozen league: ``rate`` plays it against the members in rounds,
refits its rating with theirs held fixed after each round and stops at the asked interval width
(the command line: ``polarzoo-league rate``, :mod:`.league_cli`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.cli.progress import progress
from polarzoo.baselines.evaluation import league as league_lib
from polarzoo.baselines.evaluation import ratings
from polarzoo.baselines.evaluation.league import GameLog, League, play_lineups, read_games, rotations, to_game
from polarzoo.baselines.evaluation.tournament import GamePool, seat_names, wilson_interval

#: No stop by the interval's width before this many games (``--max-games`` lower still wins).
MIN_GAMES = 40


@dataclass
class Rating:
    agent: str
    rating: float
    ci95: tuple[float, float]
    games: int
    rounds: int
    stopped: str  # "width" or "budget"
    per_opponent: list[dict[str, Any]]
    #: games the agent lost without a move, by reason (a ``proc:`` agent: a timeout, a crash, a bad reply)
    forfeits: dict[str, int] = field(default_factory=dict)
    #: players per game: the members were held at their ratings at this count (:meth:`League.ratings_at`)
    players: int = 2

    @property
    def bounded(self) -> bool:
        """Whether the games bound the rating: an agent that won (or lost) every game has an
        interval of width 0 from any number of games, which says nothing of its width."""
        return self.ci95[1] > self.ci95[0]

    def interval_text(self) -> str:
        low, high = self.ci95
        return f"[{low:.0f}, {high:.0f}]" if self.bounded else "(too few games to bound)"


def rate(
    env_id: str,
    agent: Any,
    league: League,
    out: Path,
    width: float = 100.0,
    max_games: int = 2000,
    min_rounds: int = 5,
    players: int = 2,
    seed: int = 0,
    workers: int = 1,
    bootstrap: int = 400,
    log: Callable[[str], None] = print,
    min_games: int = MIN_GAMES,
    show_progress: bool = False,
) -> Rating:
    """``agent`` against ``league`` (ratings held fixed) until its 95% interval is at most
    ``width`` points wide (after ``min_rounds`` rounds and ``min_games`` games: a bootstrap of a
    handful of games can be narrow by chance) or ``max_games`` are played; games in
    ``out/games.jsonl`` (kept there from an interrupted run).  ``max_games`` is a hard cap (a
    round is cut short to keep it); ``show_progress``: a bar on a terminal, steady lines in a log,
    a game at a time."""

    if agent.name in league.ratings:
        agent.name = f"{agent.name} (rated)"  # its games must not be mistaken for the member's
    members = [make_agent(spec, env_id) for spec in league.specs]
    for member, entry in zip(members, league.members):
        if member.name != entry["name"]:  # its rating would be looked up under a name it never plays as
            raise ValueError(
                f"league member {entry['name']!r} ({entry['spec']}) plays as {str(member.name)[:60]!r}: its rating "
                "cannot be held; rebuild the league with `league build`"
            )
    versions = league_lib.member_versions(env_id, members, league.specs)
    fixed = league.ratings_at(players)
    if league.by_players and str(players) not in league.by_players:
        log(f"league v{league.version} has no {players}-player fit: its members are held at their ratings over all its games")
    kwargs = league_lib.table_env_kwargs(league.protocol.get("env_kwargs"), env_id, players)
    if len(seat_names(env_id, kwargs)) != players:
        raise ValueError(f"{env_id} has {len(seat_names(env_id, kwargs))} seats, not {players}")
    groups = [list(g) for g in itertools.combinations(members, players - 1)]
    game_log = GameLog(out / "games.jsonl", read_games(out / "games.jsonl"))
    estimate: float | None = None
    interval, rounds, stopped = (float("-inf"), float("inf")), 0, "budget"
    # The games this rating's schedule asked for: a log kept from a rating against an older
    # league may hold others, which must not count (the result is a fresh rating's).
    scheduled: set[tuple] = set()
    bar = progress(max_games, f"rating {agent.name}", "game", enabled=show_progress)
    tick = bar.update if bar is not None else None
    try:
        with GamePool(workers) as pool:
            while True:
                active = groups
                if rounds >= min_rounds and estimate is not None:
                    active = informative(groups, estimate, fixed)
                lineups = [(lineup, rounds) for group in active for lineup in rotations([agent, *group])]
                if len(scheduled) >= max_games:
                    break
                if len(scheduled) + len(lineups) > max_games:
                    if rounds > 0:  # a whole round or none, once the first round is in
                        break
                    lineups = lineups[: max_games - len(scheduled)]  # a hard cap, the first round too
                play_lineups(
                    env_id,
                    lineups,
                    seed,
                    kwargs,
                    game_log,
                    pool,
                    tick=tick,
                    opening_plies=int(league.protocol.get("opening_plies", 0)),
                    versions=versions,
                )
                scheduled.update((tuple(a.name for a in lineup), game) for lineup, game in lineups)
                rounds += 1
                games = [to_game(line) for line in _games_of(game_log, scheduled)]
                estimate = ratings.fit_one(games, agent.name, fixed)
                interval = ratings.bootstrap_one(games, agent.name, fixed, bootstrap, seed)
                bounded = interval[1] > interval[0]
                log(
                    f"round {rounds}: {len(games)} games, rating {estimate:.0f} "
                    + (
                        f"[{interval[0]:.0f}, {interval[1]:.0f}] (width {interval[1] - interval[0]:.0f}; stop at {width:.0f})"
                        if bounded
                        else "(too few games to bound)"
                    )
                )
                if (
                    bounded
                    and rounds >= min_rounds
                    and len(games) >= min(min_games, max_games)
                    and interval[1] - interval[0] <= width
                ):
                    stopped = "width"
                    break
    finally:
        game_log.close()
        if bar is not None:
            bar.close()
    lines = _games_of(game_log, scheduled)
    forfeits: dict[str, int] = {}
    for line in lines:
        for seat, why in (line.get("forfeits") or {}).items():
            if line["seats"][int(seat)] == agent.name:
                forfeits[why] = forfeits.get(why, 0) + 1
    assert estimate is not None  # (the first round is always played)
    return Rating(
        agent.name, float(estimate), interval, len(lines), rounds, stopped, per_opponent(agent.name, lines), forfeits, players
    )


def informative(groups: list[list[Any]], estimate: float, fixed: dict[str, float]) -> list[list[Any]]:
    """The lineups whose opponents the agent neither nearly always beats nor nearly always loses to
    (expected score 5%-95% against each of them), and at least the two nearest."""

    def gap(group: list[Any]) -> float:
        return max(abs(fixed[m.name] - estimate) for m in group)

    keep = [g for g in groups if all(0.05 <= ratings.expected_score(estimate, fixed[m.name]) <= 0.95 for m in g)]
    nearest = sorted(groups, key=gap)[:2]
    return [g for g in groups if g in keep or g in nearest]


def _games_of(log: GameLog, keys: set[tuple]) -> list[dict[str, Any]]:
    """The logged games of ``keys`` (lineup, round), in a fixed order (a game's index is its round)."""
    return [line for key, line in sorted(log.games.items(), key=lambda kv: (kv[0][1], kv[0][0])) if key in keys]


def per_opponent(name: str, lines: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per league member met: games, wins / draws / losses of ``name`` in the pairs of seats
    (a seat with more points wins), the win rate with its Wilson interval, by seat."""
    table: dict[str, dict[str, Any]] = {}
    for line in lines:
        seats, points = line["seats"], line["points"]
        mine = seats.index(name)
        for other, opponent in enumerate(seats):
            if opponent == name:
                continue
            entry = table.setdefault(
                opponent, {"opponent": opponent, "games": 0, "wins": 0, "draws": 0, "losses": 0, "by_seat": {}}
            )
            outcome = "wins" if points[mine] > points[other] else ("draws" if points[mine] == points[other] else "losses")
            entry["games"] += 1
            entry[outcome] += 1
            seat = entry["by_seat"].setdefault(str(mine), {"wins": 0, "draws": 0, "losses": 0})
            seat[outcome] += 1
    for entry in table.values():
        entry["win_rate"] = entry["wins"] / entry["games"]
        entry["win_rate_ci95"] = list(wilson_interval(entry["wins"], entry["games"]))
    return sorted(table.values(), key=lambda e: e["opponent"])


def rating_markdown(result: Rating, league: League, env_id: str) -> str:
    low, high = result.ci95
    fixed = league.ratings_at(result.players)
    order = sorted(fixed, key=lambda n: -fixed[n])
    above = sum(fixed[n] > result.rating for n in order)
    count = f" at {result.players} players" if len(league.by_players) > 1 else ""
    lines = [
        f"**{result.agent}** on league `{env_id}` v{league.version}{count}: **{result.rating:.0f} {result.interval_text()}** "
        f"({'95% interval; ' if result.bounded else ''}{result.games} games in {result.rounds} rounds, stopped by {result.stopped}); "
        f"place {above + 1} of {len(order) + 1}.",
        "",
        "| opponent | its rating | games | W | D | L | win rate [95% Wilson] | by seat (W-D-L) |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for entry in sorted(result.per_opponent, key=lambda e: -fixed.get(e["opponent"], 0)):
        seats = ", ".join(f"seat {s}: {t['wins']}-{t['draws']}-{t['losses']}" for s, t in sorted(entry["by_seat"].items()))
        lo, hi = entry["win_rate_ci95"]
        lines.append(
            f"| {entry['opponent']} | {fixed.get(entry['opponent'], float('nan')):.0f} | {entry['games']} | "
            f"{entry['wins']} | {entry['draws']} | {entry['losses']} | {entry['win_rate']:.0%} [{lo:.0%}, {hi:.0%}] | {seats} |"
        )
    if result.forfeits:
        lines += [
            "",
            "**Forfeits** (games lost by a forfeit: no answer in time, a crash, a malformed or illegal reply)",
            "",
            "| games | reason |",
            "|---:|---|",
        ]
        lines += [f"| {count} | {why} |" for why, count in sorted(result.forfeits.items())]
    return "\n".join(lines)
