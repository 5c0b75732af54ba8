"""The trainer's command line: ``polarzoo-train`` (``python -m polarzoo.baselines.train``); the
trainer is :mod:`.ppo`, its config :mod:`.config`."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from pathlib import Path

from polarzoo.baselines.agents.spec import Trust, trust_of
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    LineFile,
    add_no_progress,
    add_trust,
    add_trust_pickles,
    apply_trust_pickles,
    atomic_write,
    prog_name,
    run_dir_or_exit,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.training import ppo
from polarzoo.baselines.training.checkpoints import (
    legacy_checkpoint,
    legacy_state,
    read_checkpoint_state,
    read_exact,
    read_legacy,
)
from polarzoo.baselines.training.config import (
    POSITIVE_KEYS,
    QUICK,
    QUICK_BC,
    InitModelError,
    TrainConfig,
    check_config,
    config_defaults,
    config_specs,
    load_config,
    saved_run_config,
    yaml,
)
from polarzoo.envs import ENVIRONMENTS

#: The config keys a flag overrides (``--n-envs`` for ``n_envs``), with the flag's help; its type
#: and choices are the :class:`TrainConfig` field's, its default the game kit's (shown).
OVERRIDES = {
    "total_timesteps": "override the config's budget (with --resume: a new total)",
    "n_envs": "override the number of parallel envs",
    "eval_every": "override the evaluation interval (0 = never)",
    "eval_games": "override games per seat in periodic evaluations",
    "final_eval_games": "override games per seat in the final evaluation",
    "checkpoint_every": "override the checkpoint interval",
    "snapshot_every": "override the self-play snapshot interval (0 = never)",
    "vec_env": "vectorised env class",
    "rollouts": "how rollouts step the envs: lockstep (SB3's) or async (each env as soon as it is back; needs --vec-env subproc)",
    "bc_games": "override the behaviour-cloning games (0 = off)",
    "bc_epochs": "override the behaviour-cloning epochs",
    "torch_threads": "override torch threads (1: the same weights on every machine, the fastest beside other work; "
    "0 = one per core this process may use (1 with subprocess envs): about 1.5x faster on an idle machine, "
    "2.3x slower beside a busy core, weights that depend on the core count; never the load)",
    "update_threads": "override torch threads in the learner's update (0 = as --torch-threads)",
}


def _main_writes(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.train"), description=ppo.__doc__, formatter_class=HelpFormatter
    )
    config_default = config_defaults()
    parser.add_argument("--env", choices=sorted(ENVIRONMENTS), help="environment id (not needed with --resume)")
    parser.add_argument("--resume", type=Path, default=None, help="continue an interrupted run from its folder")
    add_trust(parser)
    add_trust_pickles(parser)
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="a hyperparameter YAML keyed by env id (and a default section), layered over the game kit's settings "
        "(it needs only the keys it changes)",
    )
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="parent folder of run folders")
    parser.add_argument("--run-name", default=None, help="run folder name (default <env>-<time>)")
    parser.add_argument("--seed", type=seed_type, default=0, help="training seed")
    field_metadata = {spec.name: spec.metadata for spec in dataclasses.fields(TrainConfig)}
    for key, text in OVERRIDES.items():
        choices = field_metadata[key].get("choices")
        kind = {"choices": choices} if choices else {"type": int}
        parser.add_argument(f"--{key.replace('_', '-')}", **kind, default=None, help=text + config_default(key))
    add_no_progress(parser, lines=True)
    parser.add_argument(
        "--log-every",
        type=float,
        default=60.0,
        help="seconds between progress lines when there is no progress bar (output not a terminal, or --no-progress); 0 = none",
    )
    parser.add_argument("--no-final-eval", action="store_true", help="skip the evaluation after training")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run of about a minute that writes every output (tiny settings: "
        + ", ".join(f"{key} {value}" for key, value in QUICK.items())
        + "; where the config clones a teacher first, "
        + ", ".join(f"{key} {value}" for key, value in QUICK_BC.items())
        + "; flags given beside it win)",
    )
    args = parser.parse_args(argv)
    if args.log_every < 0:
        parser.error(f"--log-every must be at least 0 seconds, got {args.log_every}")
    if yaml is None:
        parser.error('training needs the train extra (PyYAML, torch, SB3): pip install "polarzoo[train]"')
    from polarzoo.envs.utils import MissingExtra, require

    try:
        require("sb3_contrib", "training")
    except MissingExtra as error:
        parser.error(str(error))
    overrides = {key: getattr(args, key) for key in OVERRIDES}
    if args.quick:
        if args.resume:
            parser.error("--quick starts a new smoke run; it cannot be combined with --resume")
        overrides = {**QUICK, **{key: value for key, value in overrides.items() if value is not None}}
    for key, value in overrides.items():
        least = 1 if key in POSITIVE_KEYS else 0
        if isinstance(value, int) and value < least:
            parser.error(f"--{key.replace('_', '-')} must be at least {least}, got {value}")
    if args.resume:
        run_dir = args.resume
        if not run_dir.is_dir():
            parser.error(f"--resume {run_dir}: no such folder")
        if not (run_dir / "config.yaml").exists():
            parser.error(f"--resume {run_dir}: not a training run folder (no config.yaml); start a new run with --env")
        writable_folder_or_exit(parser, "--resume", run_dir)  # checkpoints are written into it
        try:
            saved = yaml.safe_load((run_dir / "config.yaml").read_text())
            config = saved_run_config(saved)
            check_config(config)
            # a run folder is data: a spec of its config that runs code must be named again
            for spec in config_specs(config):
                if trust_of(spec) is Trust.RUNS_CODE and spec not in args.trust:
                    parser.error(
                        f"--resume {run_dir}: its config names the agent {spec!r}, which runs code; a run folder is "
                        f"data: add --trust {shlex.quote(spec)} if you trust it"
                    )
            apply_trust_pickles(args)
            if legacy_checkpoint(run_dir):
                state, model_name = legacy_state(run_dir)
                read_legacy(run_dir, model_name, state["timesteps"])  # refused in one line without --trust-pickles
            else:
                # read now, so that a damaged or crafted checkpoint is one line before any work
                state, model_name = read_checkpoint_state(run_dir)
                read_exact(run_dir, model_name, state["timesteps"])
        except (yaml.YAMLError, ValueError, TypeError, KeyError) as error:
            parser.error(f"--resume {run_dir}: {str(error).splitlines()[0]}")
        ignored = [
            f"--{name.replace('_', '-')}"
            for name in ("env", "config", "runs", "run_name", "seed", *OVERRIDES)
            if name != "total_timesteps" and getattr(args, name) != parser.get_default(name)
        ]
        if ignored:
            print(f"resuming: ignoring {', '.join(ignored)} (the run's saved config and seed are used)")
        if args.total_timesteps:
            config["total_timesteps"] = args.total_timesteps
    else:
        if not args.env:
            parser.error("--env is required unless --resume is given")
        try:
            config = load_config(args.env, overrides, args.config)
            if args.quick and config.get("bc_games", 0) > 0:  # the same job, its cloning a smoke too
                config.update({key: value for key, value in QUICK_BC.items() if overrides.get(key) is None})
            check_config(config)
        except FileNotFoundError:
            parser.error(f"--config {args.config}: no such file")
        except yaml.YAMLError as error:
            parser.error(f"--config {args.config}: not valid YAML ({str(error).splitlines()[0]})")
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            parser.error(f"--config {args.config}: {error}")
        run_dir = run_dir_or_exit(parser, args.runs, args.run_name, args.env)
        # In the config's own order: the opponents' order is the pool's, which the seeded draws of
        # an opponent index follow (a sorted copy made --resume pick other opponents after a snapshot).
        atomic_write(run_dir / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    print(f"run folder: {run_dir}", flush=True)
    commands = LineFile(run_dir / "command.txt")  # one line per start (a --resume adds one)
    commands.add(
        "python -m polarzoo.baselines.train " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    )
    commands.close()
    try:
        bar = not args.no_progress and sys.stdout.isatty()
        ppo.train(
            config,
            run_dir,
            resume=args.resume is not None,
            seed=args.seed,
            progress_bar=bar,
            final_eval=not args.no_final_eval,
            log_every=0.0 if bar else args.log_every,
        )
    except InitModelError as error:
        parser.error(str(error))
    except OSError as error:
        # A full disk (or a folder that went away) while writing a checkpoint, a snapshot or the
        # model: files are written under temporary names, so the last complete checkpoint stands.
        print(
            f"error: could not write into {run_dir} ({error.strerror or error}); the last complete checkpoint is kept: "
            f"make room, then continue with --resume {run_dir}",
            file=sys.stderr,
        )
        sys.exit(1)


main = writes_fail_in_one_line(
    _main_writes,
    "checkpoints are written whole, so the run folder keeps the last complete one: make room, then continue with --resume RUN_FOLDER",
)


if __name__ == "__main__":
    main()
