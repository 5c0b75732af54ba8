"""A rated league per game, and where any agent stands in it.

    python -m polarzoo.baselines.league show --env fire_and_ice_v0
    python -m polarzoo.baselines.league rate --env fire_and_ice_v0 --agent model:runs/.../model.zip
    python -m polarzoo.baselines.league rate --env go_with_the_floe_v0 --agent mypackage.agents:MyAgent
    python -m polarzoo.baselines.league build --env fire_and_ice_v0 --members random heuristic mcts:50 \\
        pretrained --games 100 --out runs/league-fi --publish

A league is a frozen, versioned set of reference agents (each named by its ``make_agent`` spec)
with ratings on one Elo-like scale per game (mean 1500, 400 points = 10:1 odds), fitted by
:mod:`polarzoo.baselines.evaluation.ratings` (Bradley-Terry / Plackett-Luce with choix) to a
round robin of seeded games: every pair of members in both seats, and for games of more players
(Thin Ice 3-6) every lineup of distinct members in every rotation.  The shipped leagues are
``baselines/leagues/<env>.json``: their members, ratings with 95% bootstrap intervals, the command
that built them and a fingerprint of the members' model files; a league whose members' files
differ from this installation's is refused (rebuild it and raise its ``version``).

``rate`` plays the agent (any spec, ``model:PATH``, or ``module:callable``) against the league in
rounds (each round: one game per member per seat or rotation; after ``--min-rounds``, only the
members it neither always beats nor always loses to, by its current estimate), refits its
rating with the league's held fixed after each round, and stops when the 95% interval is at most
``--width`` points wide or ``--max-games`` are played.  Its folder (announced) holds
``command.json``, ``games.jsonl`` (each game as it ends), ``rating.json`` and ``rating.md``
(the rating, its interval, a per-opponent table with Wilson intervals by seat);
``--resume OUT`` continues an interrupted rating with the same result as one whole run.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.registry import KINDS, model_files
from polarzoo.baselines.cli.progress import progress
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    add_trust_pickles,
    apply_trust_pickles,
    atomic_write,
    new_run_dir,
    prog_name,
    saved_command,
    writable_folder_or_exit,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation import ratings
from polarzoo.baselines.evaluation.tournament import GamePool, GameRecord, seat_names, wilson_interval
from polarzoo.baselines.policies.weights import ModelFileError, policy_digest
from polarzoo.envs import ENVIRONMENTS, GAMES
from polarzoo.envs.utils import MissingExtra

LEAGUE_FORMAT = "polarzoo league v1"
#: Random opening moves per game before the agents play (paired: the same opening in every seat
#: order of a lineup).  The board games have no chance, so two deterministic agents would play
#: one game over and over; Thin Ice's physics has its own.
OPENING_PLIES = {"fire_and_ice_v0": 2, "go_with_the_floe_v0": 2}
LEAGUES_DIR = Path(__file__).resolve().parents[1] / "leagues"
MODULE = "polarzoo.baselines.league"


class LeagueError(ValueError):
    """A league file that is missing, unreadable, or does not match this installation."""


# ------------------------------------------------------------------------------ the league file
@dataclass
class League:
    env: str
    version: int
    members: list[dict[str, str]]  # {"name": ..., "spec": ...}
    ratings: dict[str, float]  # all games, every player count: the scale
    intervals: dict[str, list[float]]
    by_players: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # "2" -> name -> {rating, ci95}
    open_ended: dict[str, str] = field(default_factory=dict)  # name -> "never lost" / "never won"
    fingerprint: str = ""
    protocol: dict[str, Any] = field(default_factory=dict)  # games per seat, seed, players, command, prior, bootstrap

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": LEAGUE_FORMAT,
            "env": self.env,
            "version": self.version,
            "members": self.members,
            "ratings": self.ratings,
            "ci95": self.intervals,
            "by_players": self.by_players,
            "open_ended": self.open_ended,
            "fingerprint": self.fingerprint,
            "protocol": self.protocol,
        }

    @property
    def specs(self) -> list[str]:
        return [m["spec"] for m in self.members]


def _model_digests(spec: str, env_id: str) -> list[bytes]:
    """sha256 of each model file ``spec`` plays from (none for random, heuristic or mcts): of what
    a policy file plays (:func:`~polarzoo.baselines.policies.weights.policy_digest`: the same for
    an SB3 zip and its weight-only copy), of the bytes of any other file."""
    digests = []
    for path in model_files(spec, env_id):
        try:
            if path.suffix in (".zip", ".safetensors"):
                try:
                    digests.append(policy_digest(path))
                    continue
                except ModelFileError as error:
                    raise LeagueError(f"league member {spec}: {error}") from None
            digests.append(hashlib.sha256(path.read_bytes()).digest())
        except OSError as error:
            raise LeagueError(f"league member {spec}: cannot read its model file {path} ({error.strerror or error})") from None
    return digests


def fingerprint(env_id: str, specs: Sequence[str]) -> str:
    """sha256 over the env id, the member specs and the bytes of every model file they play from."""
    digest = hashlib.sha256(env_id.encode())
    for spec in specs:
        digest.update(b"\0" + spec.encode())
        for file_digest in _model_digests(spec, env_id):
            digest.update(file_digest)
    return digest.hexdigest()


def member_versions(env_id: str, members: Sequence[Any], specs: Sequence[str]) -> dict[str, str]:
    """Each member's version by its name: a short digest of its spec and model files.  A logged
    game records the versions of the members who played it, and is kept only while they are
    the same: a member whose name stays but whose model changes (a new ``pretrained``, and
    ``az:N``, which searches with it) has its games played again."""
    versions = {}
    for member, spec in zip(members, specs):
        digest = hashlib.sha256(spec.encode())
        for file_digest in _model_digests(spec, env_id):
            digest.update(file_digest)
        versions[member.name] = digest.hexdigest()[:16]
    return versions


def league_path(env_id: str) -> Path:
    return LEAGUES_DIR / f"{env_id}.json"


def member_problem(spec: Any, trusted: Sequence[str] = ()) -> str | None:
    """Why a league file's member may not be loaded (``None``: it may).  A league file is data:
    its members are built-in specs (model files among them, read as data); a ``module:callable``
    member imports and runs code, so it is loaded only when the command line names it."""
    if not isinstance(spec, str) or not spec or len(spec) > 1000:
        return f"member spec {str(spec)[:60]!r} is not a spec"
    kind, _, argument = spec.partition(":")
    if kind in KINDS or not argument or spec in trusted:
        return None
    return (
        f"member {spec!r} is your own module:callable agent, which would import and run code: it is loaded only when the "
        f"command line names it (--trust-member {spec})"
    )


def load_league(source: str | Path, check: bool = True, trusted: Sequence[str] = ()) -> League:
    """The league of an env id (the shipped file) or at a path; ``check``: refuse one whose
    members' model files are not this installation's (:class:`LeagueError`, one line), and any
    ``module:callable`` member not in ``trusted`` (:func:`member_problem`)."""
    path = Path(source)
    if not path.suffix == ".json":
        path = league_path(str(source))
        if not path.exists():
            shipped = sorted(p.stem for p in LEAGUES_DIR.glob("*.json"))
            raise LeagueError(f"no league for {source}; leagues shipped: {', '.join(shipped) or 'none'}")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise LeagueError(f"{path}: not a readable league file ({error})") from None
    if not isinstance(data, dict) or data.get("format") != LEAGUE_FORMAT:
        raise LeagueError(
            f"{path}: not a {LEAGUE_FORMAT!r} file (format {data.get('format') if isinstance(data, dict) else None!r})"
        )
    try:
        league = League(
            data["env"],
            int(data["version"]),
            list(data["members"]),
            dict(data["ratings"]),
            dict(data["ci95"]),
            dict(data.get("by_players", {})),
            dict(data.get("open_ended", {})),
            str(data["fingerprint"]),
            dict(data.get("protocol", {})),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise LeagueError(f"{path}: a league file with a missing or bad field ({error})") from None
    if league.env not in ENVIRONMENTS:
        raise LeagueError(f"{path}: a league of an unknown env {str(league.env)[:60]!r}")
    try:
        specs = league.specs
    except (KeyError, TypeError):
        raise LeagueError(f"{path}: a league file whose members are not {{name, spec}} objects") from None
    for spec in specs:
        problem = member_problem(spec, trusted)
        if problem is not None:
            raise LeagueError(f"{path}: {problem}")
    names = [m.get("name") if isinstance(m, dict) else None for m in league.members]
    if len(set(map(str, names))) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise LeagueError(f"{path}: member names must be distinct non-empty strings, got {names}")
    for name in names:
        rating, interval = league.ratings.get(name), league.intervals.get(name)
        if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not math.isfinite(rating):
            raise LeagueError(f"{path}: member {name!r} has no finite rating ({str(rating)[:40]!r})")
        if (
            not isinstance(interval, list)
            or len(interval) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in interval)
        ):
            raise LeagueError(f"{path}: member {name!r} has no [low, high] interval ({str(interval)[:40]!r})")
    if check:
        now = fingerprint(league.env, league.specs)
        if now != league.fingerprint:
            raise LeagueError(
                f"league {league.env} v{league.version} ({path}) was rated with other member files than this "
                "installation's (its fingerprint differs): rebuild it with `league build` and raise its version"
            )
    return league


# ------------------------------------------------------------------------------ games
def lineup_seed(seed: int, lineup: Sequence[str], game: int) -> int:
    """The seed of game ``game`` of a lineup (names in seat order): the same whatever else is played."""
    return seed + 7919 * game + zlib.crc32("|".join(lineup).encode()) % 1_000_003


def opening_seed(seed: int, lineup: Sequence[str], game: int) -> int:
    """The seed of game ``game``'s opening: the same for every seat order of the lineup."""
    return seed * 1_000_003 + 7919 * game + zlib.crc32("|".join(sorted(lineup)).encode()) % 1_000_003


def game_record(lineup: Sequence[str], game: int, record: GameRecord, replay: dict[str, Any] | None = None) -> dict[str, Any]:
    """One line of ``games.jsonl``: the seats' agents, the game's index, each seat's points (the
    env's ``result()["points"]`` where it has them, else the rewards) and its length; ``replay``
    (``env``, ``env_seed``, ``env_kwargs``) and the record's actions let the replay viewer
    (:mod:`polarzoo.baselines.play.replay`) play the game again."""
    named = (record.result or {}).get("points") or {}
    points = [float(v) for v in named.values()] if named else [float(r) for r in record.rewards]
    line = {"seats": list(lineup), "game": game, "points": points, "length": record.length, "illegal": list(record.illegal)}
    if replay is not None:
        line.update(replay, actions=list(record.actions))
    return line


def to_game(line: dict[str, Any]) -> ratings.Game:
    seats = tuple(line["seats"])
    return ratings.Game(seats, tuple(float(p) for p in line["points"]), stratum=seats)


def read_games(path: Path) -> dict[tuple, dict[str, Any]]:
    """The finished games of ``path`` (``games.jsonl``) by (lineup, game); a damaged line is
    skipped with a warning (it is played again)."""
    found: dict[tuple, dict[str, Any]] = {}
    if not path.exists():
        return found
    for number, text in enumerate(path.read_text().splitlines(), 1):
        try:
            line = json.loads(text)
            key = (tuple(line["seats"]), int(line["game"]))
            if len(line["points"]) != len(key[0]):
                raise ValueError("points do not match the seats")
            found[key] = line
        except (ValueError, KeyError, TypeError) as error:
            print(f"warning: {path}:{number}: not a game record ({error}); that game is played again", file=sys.stderr)
    return found


class GameLog:
    """``games.jsonl``: the finished games kept, each new one appended (and flushed) as it ends."""

    def __init__(self, path: Path, finished: dict[tuple, dict[str, Any]]) -> None:
        self.path = path
        self.games = dict(finished)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as handle:  # rewritten without damaged or cut-off lines
            for line in finished.values():
                handle.write(json.dumps(line) + "\n")
        self.handle = path.open("a")

    def add(self, key: tuple, line: dict[str, Any]) -> None:
        self.games[key] = line
        self.handle.write(json.dumps(line) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def play_lineups(
    env_id: str,
    lineups: Sequence[tuple[list[Any], int]],
    seed: int,
    env_kwargs: dict[str, Any] | None,
    log: GameLog,
    pool: GamePool,
    tick: Callable[[], None] | None = None,
    opening_plies: int = 0,
    versions: dict[str, str] | None = None,
) -> None:
    """Every ``(agents in seat order, game index)`` not yet in ``log``, played and logged.
    ``versions`` (:func:`member_versions`): a logged game of a member whose version differs
    from its line's (or a line without versions) is played again."""
    versions = versions or {}
    todo, stale = [], set()
    for agents, game in lineups:
        names = tuple(a.name for a in agents)
        line = log.games.get((names, game))
        current = {n: versions[n] for n in names if n in versions}
        if line is not None and (line.get("versions") or {}) != current:
            stale.update(n for n in current if (line.get("versions") or {}).get(n) != current[n])
            line = None
        if line is None:
            opening = (opening_seed(seed, names, game), opening_plies) if opening_plies else None
            todo.append((names, game, current, (env_id, list(agents), lineup_seed(seed, names, game), env_kwargs, opening)))
        elif tick:
            tick()
    if stale:
        print(
            f"{log.path}: games of {', '.join(sorted(stale))} were played with other model files (or before "
            "games recorded them): those games are played again",
            file=sys.stderr,
            flush=True,
        )
    for (names, game, current, task), record in zip(todo, pool.play([task for *_, task in todo])):
        replay = {"env": env_id, "env_seed": task[2], "env_kwargs": env_kwargs or {}}
        line = game_record(names, game, record, replay)
        if current:
            line["versions"] = current
        log.add((names, game), line)
        if tick:
            tick()


def rotations(agents: Sequence[Any]) -> list[list[Any]]:
    return [[agents[(i + r) % len(agents)] for i in range(len(agents))] for r in range(len(agents))]


def league_lineups(members: Sequence[Any], players: int) -> list[list[Any]]:
    """Every set of ``players`` distinct members, in every rotation of its seats (2 players: each
    pair in both seats)."""
    return [lineup for group in itertools.combinations(members, players) for lineup in rotations(list(group))]


# ------------------------------------------------------------------------------ build
def build(
    env_id: str,
    specs: Sequence[str],
    games: int,
    out: Path,
    seed: int = 0,
    players: Sequence[int] = (2,),
    version: int = 1,
    workers: int = 1,
    bootstrap: int = 500,
    show_progress: bool = True,
    command: str = "",
    multi_games: int | None = None,
) -> League:
    """Play the league's round robin into ``out/games.jsonl`` (games already there are kept) and
    fit its ratings; writes ``league.json``, ``ladder.md`` and ``ladder.png`` into ``out``.
    ``games`` per 2-player lineup, ``multi_games`` (default ``games``) per lineup of 3+ players."""
    members = [make_agent(spec, env_id) for spec in specs]
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise ValueError(f"league members must have different names, got {names}")
    schedule: list[tuple[list[Any], int, dict[str, Any] | None]] = []
    for n in players:
        kwargs = GAMES[env_id].env_kwargs(n)
        if len(members) < n:
            raise ValueError(f"{n}-player games need at least {n} members, got {len(members)}")
        per_lineup = games if n == 2 or multi_games is None else multi_games
        schedule += [(lineup, game, kwargs) for lineup in league_lineups(members, n) for game in range(per_lineup)]
    versions = member_versions(env_id, members, specs)
    log = GameLog(out / "games.jsonl", read_games(out / "games.jsonl"))
    bar = progress(len(schedule), "games", "game", show_progress)
    try:
        with GamePool(workers) as pool:
            for kwargs in dict.fromkeys(json.dumps(k) for *_, k in schedule):
                part = [(lineup, game) for lineup, game, k in schedule if json.dumps(k) == kwargs]
                play_lineups(
                    env_id,
                    part,
                    seed,
                    json.loads(kwargs),
                    log,
                    pool,
                    bar.update if bar else None,
                    OPENING_PLIES.get(env_id, 0),
                    versions,
                )
    finally:
        log.close()
        if bar:
            bar.close()
    wanted = {(tuple(a.name for a in lineup), game) for lineup, game, _ in schedule}
    lines = [line for key, line in log.games.items() if key in wanted]
    league = fit_league(env_id, version, specs, names, lines, bootstrap, seed)
    league.protocol = {
        "opening_plies": OPENING_PLIES.get(env_id, 0),
        "games_per_lineup": games,
        "games_per_multiplayer_lineup": multi_games or games,
        "seed": seed,
        "players": list(players),
        "command": command,
        "games": len(lines),
        "prior_draws": ratings.PRIOR_DRAWS,
        "bootstrap_samples": bootstrap,
        "rating_library": "choix (Bradley-Terry, ilsr_pairwise_dense)",
    }
    atomic_write(out / "league.json", json.dumps(league.as_dict(), indent=2) + "\n")
    atomic_write(out / "ladder.md", ladder_markdown(league) + "\n")
    plot_ladder(league, out / "ladder.png")
    return league


def fit_league(
    env_id: str,
    version: int,
    specs: Sequence[str],
    names: Sequence[str],
    lines: Sequence[dict[str, Any]],
    bootstrap: int,
    seed: int,
) -> League:
    games = [to_game(line) for line in lines]
    fitted = ratings.fit_ratings(games, names)
    intervals = ratings.bootstrap_ratings(games, names, bootstrap, seed)
    by_players: dict[str, dict[str, dict[str, Any]]] = {}
    for n in sorted({len(g.agents) for g in games}):
        subset = [g for g in games if len(g.agents) == n]
        if len({g.stratum for g in subset}) > 1:
            fit = ratings.fit_ratings(subset, names)
            ci = ratings.bootstrap_ratings(subset, names, bootstrap, seed)
            by_players[str(n)] = {
                name: {"rating": fit[name], "ci95": list(ci[name]), "games": sum(name in g.agents for g in subset)}
                for name in names
            }
    return League(
        env_id,
        version,
        [{"name": n, "spec": s} for n, s in zip(names, specs)],
        fitted,
        {name: list(intervals[name]) for name in names},
        by_players,
        ratings.separated(games, names),
        fingerprint(env_id, specs),
    )


def ladder_markdown(league: League) -> str:
    counts = sorted(league.by_players, key=int)
    head = "| rank | member (spec) | rating [95% CI] |" + "".join(f" {n} players |" for n in counts if len(counts) > 1)
    lines = [
        f"League `{league.env}` v{league.version}: {league.protocol.get('games', '?')} games; Elo-like scale, "
        f"members' mean 1500.",
        "",
        head,
        "|---:|---|---|" + "---|" * (len(counts) if len(counts) > 1 else 0),
    ]
    order = sorted(league.ratings, key=lambda n: -league.ratings[n])
    spec_of = {m["name"]: m["spec"] for m in league.members}
    for rank, name in enumerate(order, 1):
        low, high = league.intervals[name]
        note = f" ({league.open_ended[name]}: open interval)" if name in league.open_ended else ""
        row = f"| {rank} | {name} (`{spec_of[name]}`) | {league.ratings[name]:.0f} [{low:.0f}, {high:.0f}]{note} |"
        if len(counts) > 1:
            for n in counts:
                entry = league.by_players[n][name]
                row += f" {entry['rating']:.0f} [{entry['ci95'][0]:.0f}, {entry['ci95'][1]:.0f}] |"
        lines.append(row)
    return "\n".join(lines)


def plot_ladder(league: League, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    order = sorted(league.ratings, key=lambda n: league.ratings[n])
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(order) + 1.2))
    series = [("all games", league.ratings, league.intervals)]
    for n in sorted(league.by_players, key=int):
        if len(league.by_players) > 1:
            series.append(
                (
                    f"{n} players",
                    {k: v["rating"] for k, v in league.by_players[n].items()},
                    {k: v["ci95"] for k, v in league.by_players[n].items()},
                )
            )
    offsets = [0.0] if len(series) == 1 else [0.3 - 0.6 * i / (len(series) - 1) for i in range(len(series))]
    for (label, values, cis), offset in zip(series, offsets):
        ys = [i + offset for i in range(len(order))]
        xs = [values[n] for n in order]
        errors = [[values[n] - cis[n][0] for n in order], [cis[n][1] - values[n] for n in order]]
        ax.errorbar(xs, ys, xerr=errors, fmt="o", capsize=3, label=label)
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("rating (Elo-like; members' mean 1500), 95% interval")
    ax.set_title(f"{league.env} league v{league.version}")
    ax.grid(axis="x", alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ------------------------------------------------------------------------------ rate one agent
@dataclass
class Rating:
    agent: str
    rating: float
    ci95: tuple[float, float]
    games: int
    rounds: int
    stopped: str  # "width" or "budget"
    per_opponent: list[dict[str, Any]]


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
) -> Rating:
    """``agent`` against ``league`` (ratings held fixed) until its 95% interval is at most
    ``width`` points wide or ``max_games`` are played; games in ``out/games.jsonl`` (kept there
    from an interrupted run)."""
    if agent.name in league.ratings:
        agent.name = f"{agent.name} (rated)"  # its games must not be mistaken for the member's
    members = [make_agent(spec, env_id) for spec in league.specs]
    versions = member_versions(env_id, members, league.specs)
    fixed = dict(league.ratings)
    kwargs = GAMES[env_id].env_kwargs(players)
    if len(seat_names(env_id, kwargs)) != players:
        raise ValueError(f"{env_id} has {len(seat_names(env_id, kwargs))} seats, not {players}")
    groups = [list(g) for g in itertools.combinations(members, players - 1)]
    game_log = GameLog(out / "games.jsonl", read_games(out / "games.jsonl"))
    estimate, interval, rounds, stopped = None, (float("-inf"), float("inf")), 0, "budget"
    # The games this rating's schedule asked for: a log kept from a rating against an older
    # league may hold others, which must not count (the result is a fresh rating's).
    scheduled: set[tuple] = set()
    try:
        with GamePool(workers) as pool:
            while True:
                active = groups
                if rounds >= min_rounds and estimate is not None:
                    active = informative(groups, estimate, fixed)
                lineups = [(lineup, rounds) for group in active for lineup in rotations([agent, *group])]
                if len(scheduled) + len(lineups) > max_games and rounds > 0:
                    break
                play_lineups(
                    env_id,
                    lineups,
                    seed,
                    kwargs,
                    game_log,
                    pool,
                    opening_plies=int(league.protocol.get("opening_plies", 0)),
                    versions=versions,
                )
                scheduled.update((tuple(a.name for a in lineup), game) for lineup, game in lineups)
                rounds += 1
                games = [to_game(line) for line in _games_of(game_log, scheduled)]
                estimate = ratings.fit_one(games, agent.name, fixed)
                interval = ratings.bootstrap_one(games, agent.name, fixed, bootstrap, seed)
                log(
                    f"round {rounds}: {len(games)} games, rating {estimate:.0f} [{interval[0]:.0f}, {interval[1]:.0f}] "
                    f"(width {interval[1] - interval[0]:.0f}; stop at {width:.0f})"
                )
                if rounds >= min_rounds and interval[1] - interval[0] <= width:
                    stopped = "width"
                    break
    finally:
        game_log.close()
    lines = _games_of(game_log, scheduled)
    return Rating(agent.name, float(estimate), interval, len(lines), rounds, stopped, per_opponent(agent.name, lines))


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
    order = sorted(league.ratings, key=lambda n: -league.ratings[n])
    above = sum(league.ratings[n] > result.rating for n in order)
    lines = [
        f"**{result.agent}** on league `{env_id}` v{league.version}: **{result.rating:.0f} [{low:.0f}, {high:.0f}]** "
        f"(95% interval; {result.games} games in {result.rounds} rounds, stopped by {result.stopped}); "
        f"place {above + 1} of {len(order) + 1}.",
        "",
        "| opponent | its rating | games | W | D | L | win rate [95% Wilson] | by seat (W-D-L) |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for entry in sorted(result.per_opponent, key=lambda e: -league.ratings.get(e["opponent"], 0)):
        seats = ", ".join(f"seat {s}: {t['wins']}-{t['draws']}-{t['losses']}" for s, t in sorted(entry["by_seat"].items()))
        lo, hi = entry["win_rate_ci95"]
        lines.append(
            f"| {entry['opponent']} | {league.ratings.get(entry['opponent'], float('nan')):.0f} | {entry['games']} | "
            f"{entry['wins']} | {entry['draws']} | {entry['losses']} | {entry['win_rate']:.0%} [{lo:.0%}, {hi:.0%}] | {seats} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------------ CLI
def _parser() -> argparse.ArgumentParser:
    from polarzoo.envs import ENVIRONMENTS

    parser = argparse.ArgumentParser(prog=prog_name(MODULE), description=__doc__, formatter_class=HelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="{show,rate,build}", help="what to do (each has its own --help)")
    commands.required = True
    envs = sorted(e for e in ENVIRONMENTS)
    show = commands.add_parser("show", help="print a league's ladder", formatter_class=HelpFormatter)
    show.add_argument("--env", choices=envs, required=True, help="the game")
    show.add_argument("--league", default=None, help="a league.json to read instead of the shipped one")
    for sub in (show,):
        sub.add_argument(
            "--trust-member",
            action="append",
            default=[],
            metavar="MODULE:CALLABLE",
            help="a module:callable member of --league that may be imported (a league file alone never imports code)",
        )
    rate_parser = commands.add_parser("rate", help="rate an agent against the frozen league", formatter_class=HelpFormatter)
    rate_parser.add_argument("--env", choices=envs, help="the game (required unless --resume)")
    rate_parser.add_argument("--agent", help="the agent: any make_agent spec, model:PATH, or your own module:callable")
    rate_parser.add_argument("--league", default=None, help="a league.json to rate against instead of the shipped one")
    rate_parser.add_argument(
        "--trust-member",
        action="append",
        default=[],
        metavar="MODULE:CALLABLE",
        help="a module:callable member of --league that may be imported (a league file alone never imports code)",
    )
    add_trust_pickles(rate_parser)
    rate_parser.add_argument(
        "--width", type=float, default=100.0, help="stop when the 95%% interval is at most this many points wide"
    )
    rate_parser.add_argument("--max-games", type=int, default=2000, help="stop after this many games whatever the width")
    rate_parser.add_argument("--min-rounds", type=int, default=5, help="rounds against every member before the schedule adapts")
    rate_parser.add_argument("--players", type=int, default=2, help="players per game (Thin Ice: 2-6)")
    rate_parser.add_argument("--seed", type=seed_type, default=0, help="first seed (games and bootstrap)")
    rate_parser.add_argument("--workers", type=int, default=1, help="processes that play the games (results are the same)")
    rate_parser.add_argument("--out", type=Path, default=None, help="output folder (default: a new runs/rate-<env>-<time>)")
    rate_parser.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="OUT",
        help="continue an interrupted rating in its folder OUT: the same command, its finished games kept",
    )
    build_parser = commands.add_parser(
        "build", help="play a league's round robin and fit its ratings", formatter_class=HelpFormatter
    )
    build_parser.add_argument("--env", choices=envs, required=True, help="the game")
    build_parser.add_argument("--members", nargs="+", required=True, help="the members' agent specs, weakest to strongest")
    build_parser.add_argument("--games", type=int, default=100, help="seeded games per lineup (a pair in one seat order)")
    build_parser.add_argument("--players", type=int, nargs="+", default=[2], help="player counts to play (Thin Ice: 2-6)")
    build_parser.add_argument(
        "--multi-games", type=int, default=None, help="seeded games per lineup of 3+ players (default: --games)"
    )
    build_parser.add_argument("--seed", type=seed_type, default=0, help="first seed")
    build_parser.add_argument("--version", type=int, default=1, help="the league's version (raise it when its members change)")
    build_parser.add_argument("--bootstrap", type=int, default=500, help="bootstrap resamples for the intervals")
    build_parser.add_argument("--workers", type=int, default=1, help="processes that play the games (results are the same)")
    build_parser.add_argument(
        "--out", type=Path, required=True, help="the league's folder (games already in its games.jsonl are kept)"
    )
    build_parser.add_argument(
        "--publish", action="store_true", help="also write the league into the package (baselines/leagues/)"
    )
    build_parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    raw = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(raw)
    _one_torch_thread()
    try:
        if args.command == "show":
            league = load_league(args.league or args.env, trusted=args.trust_member)
            print(ladder_markdown(league))
        elif args.command == "build":
            _build(parser, args, raw)
        else:
            _rate(parser, args, raw)
    except (LeagueError, MissingExtra) as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        out = getattr(args, "out", None) or getattr(args, "resume", None)
        again = f"--resume {out}" if args.command == "rate" else "the same command"
        print(f"\ninterrupted: the finished games are in {out}/games.jsonl; continue with {again}", file=sys.stderr)
        sys.exit(130)


def _one_torch_thread() -> None:
    """League games run on one torch thread, as the shipped leagues were built.  A greedy
    policy's exactly tied moves (the board networks are equivariant) no longer depend on the
    thread count (:data:`polarzoo.baselines.agents.policy.TIE_TOLERANCE`); one thread keeps
    the networks' remaining rounding, and the time per game, the same on every machine."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def _build(parser: argparse.ArgumentParser, args: argparse.Namespace, raw: list[str]) -> None:
    if args.games < 1 or args.workers < 1 or args.bootstrap < 10:
        parser.error("--games and --workers must be at least 1, --bootstrap at least 10")
    if len(args.members) < 2:
        parser.error("--members: a league needs at least two members")
    repeated = sorted({spec for spec in args.members if args.members.count(spec) > 1})
    if repeated:
        parser.error(f"--members: {', '.join(repeated)} named twice (a member plays the others once per lineup)")
    if args.version < 1:
        parser.error(f"--version must be at least 1, got {args.version}")
    info = GAMES[args.env]
    if any(n not in info.player_counts() for n in args.players):
        parser.error(
            f"--players: {args.env} is a 2-player game"
            if not info.variable_players
            else f"--players: {info.players[0]} to {info.players[1]}"
        )
    for spec in args.members:
        try:
            make_agent(spec, args.env)
        except (ValueError, FileNotFoundError, ImportError) as error:
            parser.error(f"--members {spec}: {error}")
    writable_folder_or_exit(parser, "--out", args.out)
    print(f"league folder: {args.out}", flush=True)
    command = " ".join([prog_name(MODULE), *raw])
    if args.multi_games is not None and args.multi_games < 1:
        parser.error("--multi-games must be at least 1")
    league = build(
        args.env,
        args.members,
        args.games,
        args.out,
        args.seed,
        args.players,
        args.version,
        args.workers,
        args.bootstrap,
        not args.no_progress,
        command,
        args.multi_games,
    )
    print(ladder_markdown(league))
    if args.publish:
        LEAGUES_DIR.mkdir(exist_ok=True)
        atomic_write(league_path(args.env), json.dumps(league.as_dict(), indent=2) + "\n")
        print(f"published: {league_path(args.env)}")


def _rate(parser: argparse.ArgumentParser, args: argparse.Namespace, raw: list[str]) -> None:
    resumed = False
    if args.resume is not None:
        saved = saved_command(parser, args.resume, raw[1:], "a rating folder")  # raw[0] is "rate"
        folder, args = args.resume, parser.parse_args([*saved, "--out", str(args.resume)])
        resumed = True
        print(f"resuming {folder}", flush=True)
    if args.env is None or args.agent is None:
        parser.error("rate needs --env and --agent (or --resume OUT to continue a rating)")
    if not math.isfinite(args.width) or args.width <= 0 or args.max_games < 1 or args.workers < 1 or args.min_rounds < 1:
        parser.error("--width must be positive; --max-games, --workers and --min-rounds at least 1")
    apply_trust_pickles(args)
    league = load_league(args.league or args.env, trusted=args.trust_member)
    if league.env != args.env:
        parser.error(f"--league {args.league} is a league of {league.env}, not {args.env}")
    info = GAMES[args.env]
    if args.players not in info.player_counts() and not info.variable_players:
        parser.error(f"--players: {args.env} is a {info.players[0]}-player game")
    if not info.players[0] <= args.players <= min(info.players[1], len(league.members) + 1):
        parser.error(f"--players must be {info.players[0]} to {min(info.players[1], len(league.members) + 1)}")
    try:
        agent = make_agent(args.agent, args.env)
    except (ValueError, FileNotFoundError, ImportError) as error:
        parser.error(f"--agent {args.agent}: {error}")
    except Exception as error:  # a corrupt model file: name it, not the library's internals
        parser.error(f"--agent {args.agent}: cannot load it ({type(error).__name__}: {error})")
    out = args.out
    if out is None:
        out = new_run_dir(Path("runs"), None, f"rate-{args.env}")
    writable_folder_or_exit(parser, "--out", out)
    out.mkdir(parents=True, exist_ok=True)
    if not resumed:
        if (out / "games.jsonl").exists():
            parser.error(f"--out {out} already holds games; continue it with --resume {out} or choose another folder")
        atomic_write(
            out / "command.json", json.dumps({"argv": [a for a in raw if a != "--resume"], "league_version": league.version})
        )
    else:
        saved_version = json.loads((out / "command.json").read_text()).get("league_version")
        if saved_version != league.version:
            parser.error(f"--resume {out}: it was rated against league v{saved_version}, this league is v{league.version}")
    print(f"writing to {out}", flush=True)
    result = rate(
        args.env, agent, league, out, args.width, args.max_games, args.min_rounds, args.players, args.seed, args.workers
    )
    summary = {
        "env": args.env,
        "agent": result.agent,
        "spec": args.agent,
        "league_version": league.version,
        "rating": result.rating,
        "ci95": list(result.ci95),
        "games": result.games,
        "rounds": result.rounds,
        "stopped": result.stopped,
        "players": args.players,
        "seed": args.seed,
        "per_opponent": result.per_opponent,
    }
    table = rating_markdown(result, league, args.env)
    atomic_write(out / "rating.json", json.dumps(summary, indent=2) + "\n")
    atomic_write(out / "rating.md", table + "\n")
    print("\n" + table + f"\n\nwritten: {out / 'rating.json'}, {out / 'rating.md'}")


if __name__ == "__main__":
    main()
