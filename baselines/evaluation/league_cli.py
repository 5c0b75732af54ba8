"""The league's command line: ``polarzoo-league show | rate | build`` (``python -m
polarzoo.baselines.league``); the library is :mod:`.league` and :mod:`.league_rate`.

    python -m polarzoo.baselines.league show --env fire_and_ice_v0
    python -m polarzoo.baselines.league rate --env fire_and_ice_v0 --agent model:runs/.../model.zip
    python -m polarzoo.baselines.league rate --env go_with_the_floe_v0 --agent mypackage.agents:MyAgent
    python -m polarzoo.baselines.league build --env fire_and_ice_v0 --members random heuristic mcts:50 \\
        pretrained --games 100 --out runs/league-fi --publish
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import sys
from pathlib import Path

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.registry import agent_or_exit
from polarzoo.baselines.agents.spec import runs_code
from polarzoo.baselines.cli import runs
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation import league as league_lib
from polarzoo.baselines.evaluation.league import (
    LEAGUES_DIR,
    MODULE,
    LeagueError,
    build,
    ladder_markdown,
    league_path,
    load_league,
)
from polarzoo.baselines.evaluation.league_rate import rate, rating_markdown
from polarzoo.envs import ENVIRONMENTS, GAMES
from polarzoo.envs.utils import MissingExtra, read_json_file

#: ``polarzoo-league exploit`` runs this program (it trains, so it lives in the training room).
EXPLOIT_MODULE = "polarzoo.baselines.training.exploit"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=runs.prog_name(MODULE), description=league_lib.__doc__, formatter_class=runs.HelpFormatter
    )
    commands = parser.add_subparsers(
        dest="command", metavar="{show,rate,build,exploit}", help="what to do (each has its own --help)"
    )
    commands.required = True
    envs = sorted(e for e in ENVIRONMENTS)
    show = commands.add_parser("show", help="print a league's ladder", formatter_class=runs.HelpFormatter)
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
    rate_parser = commands.add_parser("rate", help="rate an agent against the frozen league", formatter_class=runs.HelpFormatter)
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
    runs.add_agent_options(rate_parser)
    runs.add_no_progress(rate_parser)
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
        "build", help="play a league's round robin and fit its ratings", formatter_class=runs.HelpFormatter
    )
    build_parser.add_argument("--env", choices=envs, required=True, help="the game")
    build_parser.add_argument("--members", nargs="+", required=True, help="the members' agent specs, weakest to strongest")
    build_parser.add_argument("--games", type=int, default=100, help="seeded games per lineup (a pair in one seat order)")
    build_parser.add_argument("--players", type=int, nargs="+", default=[2], help="player counts to play (Thin Ice: 2-6)")
    build_parser.add_argument(
        "--multi-games", type=int, default=None, help="seeded games per lineup of 3+ players (default: --games)"
    )
    build_parser.add_argument(
        "--env-kwargs",
        default=None,
        help="JSON env arguments for every game, e.g. the Floe's match play '{\"match\": true}' (kept in the league; "
        "rate against it with --league)",
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
    runs.add_no_progress(build_parser)
    commands.add_parser(
        "exploit",
        help="train a best response against a frozen agent and report what it takes (polarzoo.baselines.training.exploit)",
        add_help=False,
        prefix_chars="\0",  # every option goes through to the exploit program, --help included
    )
    return parser


def _main_writes(argv: list[str] | None = None) -> None:
    parser = _parser()
    raw = sys.argv[1:] if argv is None else list(argv)
    if raw[:1] == ["exploit"]:
        # The best response is trained by the training room, above this one: its own program runs
        # in this process's place (an exec, not an import: the layers only point down).
        os.execv(sys.executable, [sys.executable, "-m", EXPLOIT_MODULE, *raw[1:]])
    args = parser.parse_args(raw)
    runs.one_torch_thread()
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
    env_kwargs = runs.env_kwargs_or_exit(parser, args.env, args.env_kwargs)
    if env_kwargs and args.publish:
        parser.error("--publish: the shipped league plays the env's defaults; a league with --env-kwargs is rated with --league")
    runs.writable_folder_or_exit(parser, "--out", args.out)
    print(f"league folder: {args.out}", flush=True)
    command = " ".join([runs.prog_name(MODULE), shlex.join(raw)])
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
        env_kwargs,
    )
    print(ladder_markdown(league))
    if args.publish:
        LEAGUES_DIR.mkdir(exist_ok=True)
        runs.atomic_write(league_path(args.env), json.dumps(league.file_content(), indent=2) + "\n")
        print(f"published: {league_path(args.env)}")


def _rate(parser: argparse.ArgumentParser, args: argparse.Namespace, raw: list[str]) -> None:
    resumed = False
    if args.resume is not None:
        trusted = [*args.trust, *args.trust_member]
        saved = runs.saved_command(
            parser,
            args.resume,
            raw[1:],  # raw[0] is "rate"
            "a rating folder",
            specs=lambda saved_args: [saved_args.agent or "", *saved_args.trust_member],
            trusted=trusted,
            runs_code=runs_code,
        )
        no_progress = args.no_progress
        folder, args = args.resume, parser.parse_args([*saved, "--out", str(args.resume)])
        args.no_progress = args.no_progress or no_progress
        resumed = True
        print(f"resuming {folder}", flush=True)
    if args.env is None or args.agent is None:
        parser.error("rate needs --env and --agent (or --resume OUT to continue a rating)")
    if not math.isfinite(args.width) or args.width <= 0 or args.max_games < 1 or args.workers < 1 or args.min_rounds < 1:
        parser.error("--width must be positive; --max-games, --workers and --min-rounds at least 1")
    runs.apply_agent_options(args)
    league = load_league(args.league or args.env, trusted=args.trust_member)
    if league.env != args.env:
        parser.error(f"--league {args.league} is a league of {league.env}, not {args.env}")
    info = GAMES[args.env]
    if args.players not in info.player_counts() and not info.variable_players:
        parser.error(f"--players: {args.env} is a {info.players[0]}-player game")
    if not info.players[0] <= args.players <= min(info.players[1], len(league.members) + 1):
        parser.error(f"--players must be {info.players[0]} to {min(info.players[1], len(league.members) + 1)}")
    agent = agent_or_exit(parser, "--agent", args.agent, args.env, isolate=args.isolate)
    out = args.out
    if out is None:
        out = runs.new_run_dir(Path("runs"), None, f"rate-{args.env}")
    runs.writable_folder_or_exit(parser, "--out", out)
    out.mkdir(parents=True, exist_ok=True)
    if not resumed:
        if (out / "games.jsonl").exists():
            parser.error(f"--out {out} already holds games; continue it with --resume {out} or choose another folder")
        runs.atomic_write(
            out / "command.json", json.dumps({"argv": [a for a in raw if a != "--resume"], "league_version": league.version})
        )
    else:
        saved_version = read_json_file(out / "command.json", "saved command", 1024 * 1024).get("league_version")
        if saved_version != league.version:
            parser.error(f"--resume {out}: it was rated against league v{saved_version}, this league is v{league.version}")
    print(f"writing to {out}", flush=True)
    runs.apply_time_control(args, out)
    try:
        result = rate(
            args.env,
            agent,
            league,
            out,
            args.width,
            args.max_games,
            args.min_rounds,
            args.players,
            args.seed,
            args.workers,
            show_progress=not args.no_progress,
        )
    except ValueError as error:  # a member that cannot be held at its rating, e.g.
        parser.error(str(error))
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
        "forfeits": result.forfeits,
        # a proc: agent's clock depends on the machine: the time control and the machine ride along
        "time_control": {"move_time": args.move_time, "game_time": args.game_time},
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
    }
    table = rating_markdown(result, league, args.env)
    runs.atomic_write(out / "rating.json", json.dumps(summary, indent=2) + "\n")
    runs.atomic_write(out / "rating.md", table + "\n")
    print("\n" + table + f"\n\nwritten: {out / 'rating.json'}, {out / 'rating.md'}")


main = runs.writes_fail_in_one_line(
    _main_writes,
    "the finished games are kept in the output folder's games.jsonl: make room, then run the same command again (it continues from them)",
)


if __name__ == "__main__":
    main()
