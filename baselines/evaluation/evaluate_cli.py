"""The command line of :mod:`.evaluate` (``polarzoo-evaluate``, ``python -m polarzoo.baselines.evaluate``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from polarzoo.baselines.agents.registry import agent_or_exit
from polarzoo.baselines.agents.spec import runs_code
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    add_agent_options,
    add_no_progress,
    apply_agent_options,
    apply_time_control,
    atomic_write,
    env_kwargs_or_exit,
    exit_interrupted,
    new_run_dir,
    one_torch_thread,
    prog_name,
    saved_command,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation import evaluate as evaluate_lib
from polarzoo.baselines.evaluation.evaluate import _count_lines, evaluate, finished_games
from polarzoo.baselines.evaluation.tournament import (
    seat_names,
)


def _main_writes(argv: list[str] | None = None) -> None:
    from polarzoo.envs import ENVIRONMENTS

    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.evaluate"), description=evaluate_lib.__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--env", choices=sorted(ENVIRONMENTS), help="environment id (required unless --resume)")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "heuristic"],
        help="agent specs: random, heuristic, mcts[:N], model:PATH, pretrained, az[:N[:PATH]], az-jax:[N:]PATH, "
        "search[:K[:PATH]], vsearch[:K[:PATH]] (Thin Ice); 3+ players: one per seat",
    )
    parser.add_argument(
        "--games", type=int, default=20, help="seeded games per pairing and seat (3+ players: per rotation of the lineup)"
    )
    parser.add_argument("--seed", type=seed_type, default=0, help="first seed")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: a new runs/eval-<env>-<time>)")
    parser.add_argument("--run-dir", type=Path, default=None, help="a training run folder: also plot its learning curve")
    parser.add_argument("--env-kwargs", default=None, help="JSON constructor arguments, e.g. '{\"num_players\": 2}'")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes that play the games (Thin Ice's physics: one per core; results are the same)",
    )
    add_no_progress(parser)
    add_agent_options(parser)
    parser.add_argument(
        "--resume",
        type=Path,
        default=None,
        metavar="OUT",
        help="continue an interrupted evaluation in its folder OUT: the same command, its finished games kept",
    )
    args = parser.parse_args(argv)
    apply_agent_options(args)
    finished = None
    if args.resume is not None:
        folder = args.resume
        saved = saved_command(
            parser,
            folder,
            sys.argv[1:] if argv is None else list(argv),
            "an evaluation folder",
            specs=lambda saved_args: list(saved_args.agents),
            trusted=args.trust,
            runs_code=runs_code,
        )
        args = parser.parse_args(
            [*saved, "--out", str(folder)]
            + (["--no-progress"] if args.no_progress else [])
            + (["--trust-pickles"] if args.trust_pickles else [])
        )
        try:
            finished = finished_games(folder, args.env, args.seed)
        except (OSError, UnicodeDecodeError) as error:  # games.jsonl a folder, unreadable, not text
            parser.error(f"--resume {folder}: cannot read its games.jsonl ({getattr(error, 'strerror', None) or error})")
        print(f"resuming {folder}: {len(finished)} finished game(s) kept", flush=True)
    if args.env is None:
        parser.error("the following arguments are required: --env (or --resume OUT to continue an evaluation)")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    if len(args.agents) < 2:
        parser.error(f"--agents needs at least two agents to play each other, got {len(args.agents)}")
    env_kwargs = env_kwargs_or_exit(parser, args.env, args.env_kwargs)
    agents = [agent_or_exit(parser, "--agents", spec, args.env, isolate=args.isolate) for spec in args.agents]
    names = [a.name for a in agents]
    seats = len(seat_names(args.env, env_kwargs))
    if seats > 2 and len(agents) != seats:
        parser.error(
            f"--agents: {args.env} has {seats} seats here: give exactly {seats} agents, one per seat "
            f"(an agent may be listed more than once), got {len(agents)}"
        )
    if seats == 2 and len(set(names)) != len(names):
        parser.error(f"--agents: two agents have the same name ({', '.join(names)}); list each once")
    if args.run_dir is not None and not args.run_dir.is_dir():
        parser.error(f"--run-dir {args.run_dir}: no such run folder")
    out = args.out
    if out is not None:
        if out.exists() and not out.is_dir():
            parser.error(f"--out {out}: is a file, not a folder")
        writable_folder_or_exit(parser, "--out", out)
    if out is None:
        try:
            out = new_run_dir(Path("runs"), None, f"eval-{args.env}")
        except OSError as error:
            out = Path("runs") / "eval-unwritable"
            print(f"warning: cannot create a run folder under runs/ ({error.strerror or error})")
    print(f"writing to {out}", flush=True)
    one_torch_thread()
    apply_time_control(args, out)  # a proc: agent's stderr goes to OUT/agent-logs
    if finished is None:
        # what --resume needs to play the rest of the same evaluation
        command = sys.argv[1:] if argv is None else list(argv)
        try:
            atomic_write(out / "command.json", json.dumps({"argv": command}))
        except OSError:
            pass  # the _Writer below says so once
    try:
        summary = evaluate(
            args.env,
            [],
            args.games,
            out,
            args.seed,
            env_kwargs,
            args.run_dir,
            agents=agents,
            show_progress=not args.no_progress,
            workers=args.workers,
            finished=finished,
        )
    except KeyboardInterrupt:
        kept = _count_lines(out / "games.jsonl")
        print(
            f"\ninterrupted: the {kept} finished game(s) are in {out / 'games.jsonl'}; no summary was written; "
            f"continue with --resume {out} (the finished games are kept, the rest are seeded as before)",
            file=sys.stderr,
        )
        exit_interrupted()
    if seats > 2:
        print(
            f"\n## {args.env}, {seats} players: {', '.join(names)} in every rotation, {args.games} games each "
            f"(seeds from {args.seed})\n"
        )
    else:
        print(f"\n## {args.env}: round-robin, {args.games} games per pairing and seat (seeds from {args.seed})\n")
    print(summary["table"])
    if summary["written"]:
        print("\nwritten:\n" + "\n".join(f"  {path}" for path in summary["written"]))
    else:
        print("\nnothing was written (see the warning above); the table above is the result", file=sys.stderr)
        sys.exit(1)


main = writes_fail_in_one_line(
    _main_writes,
    "the finished games are kept in the output folder's games.jsonl: make room, then continue with --resume OUT",
)


if __name__ == "__main__":
    main()
