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

import gzip
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
from polarzoo.baselines.agents.registry import model_files
from polarzoo.baselines.agents.spec import SpecError, Trust, parse_spec
from polarzoo.baselines.cli.progress import progress
from polarzoo.baselines.cli.runs import (
    LineFile,
    atomic_write,
    save_figure,
)
from polarzoo.baselines.evaluation import ratings
from polarzoo.baselines.evaluation.tournament import GamePool, GameRecord
from polarzoo.baselines.kits import kit_of
from polarzoo.baselines.policies.weights import ModelFileError, policy_digest
from polarzoo.envs import ENVIRONMENTS, GAMES, check_env_kwargs
from polarzoo.envs.utils import MAX_MODEL_BYTES, DataError, check_regular_file, loads_json, read_bounded, read_json_file

LEAGUE_FORMAT = "polarzoo league v1"
LEAGUES_DIR = Path(__file__).resolve().parents[1] / "leagues"
MODULE = "polarzoo.baselines.league"


#: Hex digits of a game line's digest (64 bits: enough to find an edit, small beside the line).
LINE_DIGEST = 16


class LeagueError(ValueError):
    """A league file that is missing, unreadable, or does not match this installation."""


def content_digest(data: dict[str, Any], length: int = 64) -> str:
    """The SHA-256 (its first ``length`` hex digits: 16 for a game line) of a league file's or a
    game line's content (its ``digest`` key left out), in canonical JSON: a rating, an interval
    or a game's result edited after it was written no longer matches it.  It guards against edits and damage, not against a forger, who can
    recompute it (a league you did not build is checked by rebuilding it from its games)."""
    content = {key: value for key, value in data.items() if key != "digest"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:length]


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

    def ratings_at(self, players: int) -> dict[str, float]:
        """The members' ratings in games of ``players``: that count's own fit where the league
        has one (its column on the ladder), else the fit of all games.  A newcomer rated at N
        players is held against these, so its rating reads against the N-player column."""
        fit = self.by_players.get(str(players))
        if fit:
            return {name: float(entry["rating"]) for name, entry in fit.items()}
        return dict(self.ratings)

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

    def file_content(self) -> dict[str, Any]:
        """What a league file holds: :meth:`as_dict` and its :func:`content_digest`."""
        data = self.as_dict()
        return {**data, "digest": content_digest(data)}

    @property
    def specs(self) -> list[str]:
        return [m["spec"] for m in self.members]


def _model_digests(spec: str, env_id: str) -> list[bytes]:
    """sha256 of each model file ``spec`` plays from (none for random, heuristic or mcts): of what
    a policy file plays (:func:`~polarzoo.baselines.policies.weights.policy_digest`: the same for
    an SB3 zip and its weight-only copy), of the bytes of any other file."""
    digests = []
    try:
        paths = model_files(spec, env_id)
    except (SpecError, KeyError) as error:
        raise LeagueError(f"league member {str(spec)[:80]!r}: {error}") from None
    for path in paths:
        try:
            check_regular_file(path, "model file")
            if path.suffix in (".zip", ".safetensors"):
                try:
                    digests.append(policy_digest(path))
                    continue
                except ModelFileError as error:
                    raise LeagueError(f"league member {spec}: {error}") from None
            digests.append(hashlib.sha256(read_bounded(path, "model file", MAX_MODEL_BYTES)).digest())
        except DataError as error:
            raise LeagueError(f"league member {spec}: {error}") from None
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


def models_digest(spec: str, env_id: str) -> str:
    """A short digest of the model files ``spec`` plays from ("" for none: random, a heuristic,
    mcts): what a result measured on an agent records, so that a page shows it beside that agent
    only while its files are the same (a new ``pretrained`` makes old results history)."""
    file_digests = _model_digests(spec, env_id)
    return hashlib.sha256(b"".join(file_digests)).hexdigest()[:16] if file_digests else ""


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
    its members are built-in specs or specs that read a model file (as data); a member that runs
    code (``module:callable``, ``proc:COMMAND``, or any spec nesting one, ``oracle:proc:...``) is
    loaded only when the command line names it (``--trust-member SPEC``).  The spec grammar
    (:mod:`polarzoo.baselines.agents.spec`) decides, nested specs included."""
    try:
        parsed = parse_spec(spec)
    except SpecError as error:
        return f"member {str(spec)[:60]!r}: {error}"
    if parsed.trust is not Trust.RUNS_CODE or spec in trusted:
        return None
    code = parsed.code_parts()[0]
    nested = f" (it nests {code.text!r})" if code is not parsed else ""
    if code.kind == "proc":
        return f"member {spec!r} runs a command{nested}: it is run only when the command line names it (--trust-member {spec})"
    return (
        f"member {spec!r} is your own module:callable agent{nested}, which would import and run code: it is loaded only "
        f"when the command line names it (--trust-member {spec})"
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
        data = read_json_file(path, "league file")
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
    if league.protocol.get("env_kwargs"):  # a league of other env arguments: the ones its games and ratings play by
        try:
            check_env_kwargs(league.env, league.protocol["env_kwargs"])
        except ValueError as error:
            raise LeagueError(f"{path}: its env arguments {str(league.protocol['env_kwargs'])[:80]}: {error}") from None
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
        rating, interval = league.ratings.get(str(name)), league.intervals.get(str(name))
        if isinstance(rating, bool) or not isinstance(rating, (int, float)) or not math.isfinite(rating):
            raise LeagueError(f"{path}: member {name!r} has no finite rating ({str(rating)[:40]!r})")
        if (
            not isinstance(interval, list)
            or len(interval) != 2
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in interval)
        ):
            raise LeagueError(f"{path}: member {name!r} has no [low, high] interval ({str(interval)[:40]!r})")
    if data.get("digest") != content_digest(data):
        said = "has no digest (written before polarzoo 0.4)" if "digest" not in data else "was changed after it was built"
        raise LeagueError(
            f"{path}: the league file {said}: its ratings and intervals are not the ones its games gave; "
            "rebuild it with `league build` (its games.jsonl is kept)"
        )
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
    if record.forfeits:
        line["forfeits"] = {str(seat): reason for seat, reason in record.forfeits.items()}
    if replay is not None:
        line.update(replay, actions=list(record.actions))
    return line


def to_game(line: dict[str, Any]) -> ratings.Game:
    seats = tuple(line["seats"])
    return ratings.Game(seats, tuple(float(p) for p in line["points"]), stratum=seats)


def read_games(path: Path) -> dict[tuple, dict[str, Any]]:
    """The finished games of ``path`` (``games.jsonl``, or ``games.jsonl.gz`` as the published
    leagues keep them) by (lineup, game); a damaged line is skipped with a warning (it is played
    again)."""
    found: dict[tuple, dict[str, Any]] = {}
    if not path.exists():
        return found
    text_of_file = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    for number, text in enumerate(text_of_file.splitlines(), 1):
        try:
            line = loads_json(text, what="a game record", max_depth=16)
            key = (tuple(line["seats"]), int(line["game"]))
            if len(line["points"]) != len(key[0]):
                raise ValueError("points do not match the seats")
            if line.get("digest") != content_digest(line, LINE_DIGEST):
                raise ValueError("edited after it was written: its digest does not match" if "digest" in line else "no digest")
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
        # Rewritten whole without damaged or cut-off lines; a full disk keeps the old file.
        self.lines = LineFile(path, [json.dumps(line) for line in finished.values()])

    def add(self, key: tuple, line: dict[str, Any]) -> None:
        line = {**line, "digest": content_digest(line, LINE_DIGEST)}  # an edited result is found, and played again
        self.lines.add(json.dumps(line))
        self.games[key] = line

    def close(self) -> None:
        self.lines.close()


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
    todo: list[tuple[Any, ...]] = []
    stale: set[str] = set()
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
def table_env_kwargs(env_kwargs: dict[str, Any] | None, env_id: str, players: int) -> dict[str, Any] | None:
    """A league's env arguments (its protocol's ``env_kwargs``) for a table of ``players``."""
    merged = {**(env_kwargs or {}), **(GAMES[env_id].env_kwargs(players) or {})}
    return merged or None


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
    env_kwargs: dict[str, Any] | None = None,
) -> League:
    """Play the league's round robin into ``out/games.jsonl`` (games already there are kept) and
    fit its ratings; writes ``league.json``, ``ladder.md`` and ``ladder.png`` into ``out``.
    ``games`` per 2-player lineup, ``multi_games`` (default ``games``) per lineup of 3+ players;
    ``env_kwargs``: the env's arguments for every game (the Floe's match play: ``{"match": true}``),
    kept in the league's protocol, which ``rate`` plays by too."""
    members = [make_agent(spec, env_id) for spec in specs]
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise ValueError(f"league members must have different names, got {names}")
    schedule: list[tuple[list[Any], int, dict[str, Any] | None]] = []
    for n in players:
        kwargs = table_env_kwargs(env_kwargs, env_id, n)
        if len(members) < n:
            raise ValueError(f"{n}-player games need at least {n} members, got {len(members)}")
        per_lineup = games if n == 2 or multi_games is None else multi_games
        schedule += [(lineup, game, kwargs) for lineup in league_lineups(members, n) for game in range(per_lineup)]
    versions = member_versions(env_id, members, specs)
    log = GameLog(out / "games.jsonl", read_games(out / "games.jsonl"))
    bar = progress(len(schedule), "games", "game", show_progress)
    try:
        with GamePool(workers) as pool:
            for table in dict.fromkeys(json.dumps(k) for *_, k in schedule):
                part = [(lineup, game) for lineup, game, k in schedule if json.dumps(k) == table]
                play_lineups(
                    env_id,
                    part,
                    seed,
                    json.loads(table),
                    log,
                    pool,
                    bar.update if bar else None,
                    kit_of(env_id).opening_plies,
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
        # random opening moves per game (paired: the same opening in every seat order of a
        # lineup): the board games have no chance, so two deterministic agents would play one game
        # over and over; Thin Ice's physics has its own
        "opening_plies": kit_of(env_id).opening_plies,
        "games_per_lineup": games,
        "games_per_multiplayer_lineup": multi_games or games,
        "seed": seed,
        "players": list(players),
        "env_kwargs": dict(env_kwargs or {}),
        "command": command,
        "games": len(lines),
        "prior_draws": ratings.PRIOR_DRAWS,
        "bootstrap_samples": bootstrap,
        "rating_library": "choix (Bradley-Terry, ilsr_pairwise_dense)",
    }
    atomic_write(out / "league.json", json.dumps(league.file_content(), indent=2) + "\n")
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
    save_figure(fig, path)
