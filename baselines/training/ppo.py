"""Train a MaskablePPO agent on one of our games, against random / heuristic opponents and a
growing pool of its own frozen snapshots; then evaluate it.

    python -m polarzoo.baselines.train --env fire_and_ice_v0                  # default config (~10 min)
    python -m polarzoo.baselines.train --env go_with_the_floe_v0 --total-timesteps 20000
    python -m polarzoo.baselines.train --resume runs/fire_and_ice_v0-20261129-141500

``polarzoo-train`` is the same command (a console script installed with the package).

Each run writes ``runs/<env>-<time>/``: ``config.yaml`` (resolved), ``command.txt``,
``checkpoints/`` (latest model + state), ``snapshots/``, ``tb/`` (TensorBoard), ``evaluations.csv``
(periodic win rates), ``model.zip`` and the final evaluation (``eval.json``, ``eval.md``,
``winrate.png``, ``learning_curve.png``).  ``--resume`` continues from the last checkpoint (Ctrl-C
saves one first; a kill loses at most ``checkpoint_every`` timesteps).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import PolicyAgent, make_agent
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    atomic_write,
    prog_name,
    run_dir_or_exit,
    save_model,
    writable_folder_or_exit,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation.evaluate import evaluate
from polarzoo.baselines.evaluation.tournament import seat_names
from polarzoo.baselines.policies.weights import ModelFileError, load_policy_weights, save_policy
from polarzoo.baselines.training.checkpoints import (  # noqa: F401 (public here too: the trainer's checkpoints)
    capture_update_boundary,
    checkpoint_objects,
    drop_later_evaluations,
    read_checkpoint_state,
    read_exact,
    restore_update_boundary,
    save_checkpoint,
)
from polarzoo.baselines.training.config import (  # noqa: F401 (public here too: the trainer's config)
    ADDED_KEYS,
    CONFIG_PATH,
    NON_NEGATIVE_KEYS,
    NUMBER_RANGES,
    POSITIVE_KEYS,
    QUICK,
    QUICK_BC,
    REFERENCE_AGENTS,
    InitModelError,
    TrainConfig,
    check_config,
    config_defaults,
    config_seats,
    evaluation_env_kwargs,
    init_model_path,
    load_config,
    policy_and_kwargs,
    saved_run_config,
    yaml,
)
from polarzoo.baselines.training.imitation import clone, collect_demonstrations
from polarzoo.baselines.training.self_play import make_vec_env, opponent_pool, training_callback  # noqa: F401
from polarzoo.envs import ENVIRONMENTS


def behaviour_clone(
    model: Any,
    config: dict[str, Any],
    run_dir: Path,
    seed: int,
    state: dict[str, Any],
    progress_bar: bool = True,
    again: str = "",
    log_every: float = 0.0,
) -> None:
    """Warm-start the policy by copying ``bc_teacher``'s moves (see baselines/training/imitation.py).

    The demonstrations are kept in ``run_dir/demonstrations.npz`` and the weights are saved after
    every epoch, so a Ctrl-C (or a kill) during cloning loses at most one epoch: ``--resume``
    continues with the epochs left."""
    started = time.perf_counter()
    done = int(state.get("bc_epochs_done", 0))
    demos = run_dir / "demonstrations.npz"
    if demos.exists():
        data = np.load(demos, allow_pickle=False)
        observations, masks, actions = data["observations"], data["masks"], data["actions"]
    else:
        teacher = make_agent(config["bc_teacher"], config["env"])
        try:
            observations, masks, actions = collect_demonstrations(
                config["env"],
                teacher,
                config["bc_games"],
                seed=seed + 77,
                env_kwargs=config["env_kwargs"],
                show_progress=progress_bar or log_every > 0,
                log_every=log_every,
            )
        except KeyboardInterrupt:
            # The untrained model is saved as the checkpoint --resume starts from.
            save_checkpoint(run_dir, model, state)
            print(
                f"\ninterrupted while collecting the teacher's demonstrations (nothing trained yet); "
                f"{again or f'--resume {run_dir}'} collects them again (the games are seeded)",
                file=sys.stderr,
            )
            sys.exit(130)
        temporary = run_dir / "demonstrations.tmp.npz"
        np.savez_compressed(temporary, observations=observations, masks=masks, actions=actions)
        temporary.replace(demos)
    losses = list(state.get("bc_losses", []))

    def after_epoch(epoch: int, loss: float) -> None:
        losses.append(loss)
        state["bc_epochs_done"], state["bc_losses"] = done + epoch + 1, losses
        save_checkpoint(run_dir, model, state)

    try:
        clone(
            model,
            observations,
            masks,
            actions,
            epochs=config["bc_epochs"] - done,
            seed=seed + done,
            on_epoch=after_epoch,
            show_progress=progress_bar or log_every > 0,
            log_every=log_every,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted during behaviour cloning after {state.get('bc_epochs_done', 0)} of {config['bc_epochs']} epochs "
            f"(saved); continue with {again or f'--resume {run_dir}'}"
        )
        sys.exit(130)
    report = {
        "teacher": config["bc_teacher"],
        "games": config["bc_games"],
        "samples": len(actions),
        "epochs": config["bc_epochs"],
        "loss_per_epoch": losses,
        "seconds": time.perf_counter() - started,
    }
    atomic_write(run_dir / "behaviour_cloning.json", json.dumps(report, indent=2))
    if losses:
        print(
            f"behaviour cloning: {len(actions)} moves of {config['bc_teacher']} from {config['bc_games']} games, "
            f"loss {losses[0]:.2f} -> {losses[-1]:.2f} in {report['seconds']:.0f} s"
        )


def choose_torch_threads(config: dict[str, Any]) -> tuple[int, str]:
    """The learner's torch threads and why: ``torch_threads`` when set (> 0); otherwise (0 =
    auto) one per core this process may run on, and one when the envs run in subprocesses (they
    take the cores).  Never the machine's load: the thread count changes the floating-point sums,
    so a run's model would depend on what else was running (on a busy machine, set
    ``torch_threads: 1``; the reason says so when the load is high)."""
    requested = int(config.get("torch_threads") or 0)
    if requested > 0:
        return requested, "torch_threads in the config"
    if config.get("vec_env") == "subproc":
        return 1, "auto: the envs run in subprocesses on the other cores"
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on this platform
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    busy = f"; the machine is busy (1-minute load {load:.1f}): torch_threads: 1 may train faster" if load > cores / 2 else ""
    return cores, f"auto: the {cores} cores this process may use, whatever the load{busy}"


def train(
    config: dict[str, Any],
    run_dir: Path,
    resume: bool = False,
    seed: int = 0,
    progress_bar: bool = True,
    final_eval: bool = True,
    log_every: float = 0.0,
    again: str = "",
) -> Path:
    """Train (then evaluate) into ``run_dir``; ``log_every`` > 0 prints a progress line that
    often (seconds), for logs, where a progress bar shows nothing until the end.  ``again``: the
    command a Ctrl-C's message advises to continue (default ``--resume RUN_DIR``, the trainer's)."""
    import torch
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.training.rollouts import AsyncRolloutPPO

    algorithm = AsyncRolloutPPO if config.get("rollouts") == "async" else MaskablePPO
    if config.get("rollouts") == "async" and config["vec_env"] != "subproc":
        # (AsyncRolloutPPO is then MaskablePPO to the bit: the envs share one process anyway)
        print("rollouts: async steps subprocess envs; with vec_env: dummy the rollouts are lock steps", flush=True)
    threads, why = choose_torch_threads(config)
    torch.set_num_threads(threads)
    update_threads = int(config.get("update_threads") or threads)
    in_update = f"; {update_threads} in the update (update_threads)" if update_threads != threads else ""
    print(f"torch threads: {threads} ({why}){in_update}", flush=True)
    (run_dir / "snapshots").mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {"timesteps": 0, "snapshots": [], "seed": seed}
    model_name = "latest.zip"
    if resume:
        state, model_name = read_checkpoint_state(run_dir)
        if model_name != "latest.zip":
            print(f"checkpoints/latest.zip is unreadable: resuming from the previous checkpoint ({state['timesteps']} timesteps)")
        seed = int(state.get("seed", seed))
        state["snapshots"] = [p for p in state.get("snapshots", []) if Path(p).exists()]
    vec_env = make_vec_env(config, state["snapshots"], seed + state["timesteps"])
    counters = None
    if resume:
        model = algorithm.load(
            run_dir / "checkpoints" / model_name,
            env=vec_env,
            device=config["device"],
            tensorboard_log=str(run_dir / "tb"),
            custom_objects=checkpoint_objects(run_dir / "checkpoints" / model_name),
        )
        boundary = read_exact(run_dir, model_name, state["timesteps"])
        if boundary is not None:
            restore_update_boundary(model, boundary)
            counters = boundary["counters"]
            drop_later_evaluations(run_dir, state["timesteps"])
            print(
                f"resuming {run_dir} at {model.num_timesteps} timesteps (seed {seed}): exactly where it stopped "
                "(games in progress, generators and schedule restored)"
            )
        else:
            print(
                f"resuming {run_dir} at {model.num_timesteps} timesteps (seed {seed}); the checkpoint has no exact "
                "state (written by older code): the envs start new games"
            )
    else:
        policy, policy_kwargs = policy_and_kwargs(config)
        model = algorithm(
            policy,
            vec_env,
            learning_rate=config["learning_rate"],
            n_steps=config["n_steps"],
            batch_size=config["batch_size"],
            n_epochs=config["n_epochs"],
            gamma=config["gamma"],
            gae_lambda=config["gae_lambda"],
            ent_coef=config["ent_coef"],
            clip_range=config["clip_range"],
            policy_kwargs=policy_kwargs,
            seed=seed,
            device=config["device"],
            tensorboard_log=str(run_dir / "tb"),
            verbose=0,
        )
    if config.get("init_model") and not resume:
        path = init_model_path(config)
        try:  # the weights only (a .safetensors or a zip's policy.pth): nothing in the file runs
            model.policy.load_state_dict(load_policy_weights(path)[1], strict=True)
        except ModelFileError as error:
            raise InitModelError(f"init_model {error}") from None
        except (ValueError, RuntimeError, KeyError) as error:
            raise InitModelError(f"init_model {path} does not fit this config's policy ({str(error).splitlines()[0]})") from None
        print(f"starting from the weights of {path}")
    if config.get("bc_games", 0) > 0 and state.get("bc_epochs_done", 0) < config["bc_epochs"] and model.num_timesteps == 0:
        behaviour_clone(model, config, run_dir, seed, state, progress_bar, again, log_every)
    remaining = config["total_timesteps"] - model.num_timesteps
    started = time.perf_counter()
    steps_before = model.num_timesteps
    # A checkpoint written by older code has no training time: the count then starts here.
    seconds_before = float(state.get("train_seconds", 0.0))
    seconds_from = int(state.get("train_seconds_from", steps_before if "train_seconds" not in state else 0))
    state["train_seconds_from"] = seconds_from
    callback = training_callback(run_dir, config, state, log_every, counters, seconds_before, (threads, update_threads))
    try:
        if remaining > 0:
            model.learn(
                remaining, callback=callback, reset_num_timesteps=not resume, progress_bar=progress_bar, tb_log_name="ppo"
            )
    except KeyboardInterrupt:
        # The last update boundary: resuming from it replays the interrupted rollout exactly.
        save_checkpoint(run_dir, model, state, callback.boundary)
        print(
            f"\ninterrupted: checkpoint saved at {model.num_timesteps} timesteps (the last update); "
            f"continue with {again or f'--resume {run_dir}'}"
        )
        sys.exit(130)
    elapsed = time.perf_counter() - started
    torch.set_num_threads(threads)  # learn() ends after an update: the evaluation plays as the rollouts did
    state["train_seconds"] = seconds_before + elapsed
    # learn() ends after an update: an exact point to continue from (a larger --total-timesteps)
    save_checkpoint(run_dir, model, state, capture_update_boundary(model, callback.counters(), state))
    save_model(model, run_dir / "model.zip")
    # the shareable copy: weights and settings only (a zip's pickles run code when loaded)
    save_policy(model, run_dir / "model.safetensors", env_id=config["env"])
    fps = (model.num_timesteps - steps_before) / max(elapsed, 1e-9)
    # "seconds": every part of the run (a resumed run included) from "seconds_from" timesteps on
    # (0 unless it continued a checkpoint of older code); "fps": this part's speed.
    record = {
        "timesteps": model.num_timesteps,
        "seconds": state["train_seconds"],
        "seconds_from": seconds_from,
        "fps": fps,
        "seconds_this_part": elapsed,
    }
    atomic_write(run_dir / "training.json", json.dumps(record, indent=2))
    resumed = f" ({elapsed:.0f} s in this part)" if seconds_before or steps_before else ""
    print(
        f"trained {model.num_timesteps} timesteps in {state['train_seconds']:.0f} s{resumed} ({fps:.0f} fps); "
        f"model: {run_dir / 'model.zip'} (weights only, to share: {run_dir / 'model.safetensors'})"
    )
    if state.get("physics_failures"):
        print(
            f"{state['physics_failures']} episodes were truncated by a physics failure (rolled back; see tb rollout/physics_failures)"
        )
    vec_env.close()
    if final_eval:
        trained = PolicyAgent(run_dir / "model.safetensors", name="trained")
        references = []
        for spec in REFERENCE_AGENTS:
            try:
                references.append(make_agent(spec, config["env"]))
            except ValueError:
                pass
        games = evaluation_env_kwargs(config)
        for env_kwargs in games:
            # Two players: a round robin of the trained model and the references; more: one
            # lineup, the trained model, random and heuristics in the other seats, every rotation.
            seats = len(seat_names(config["env"], env_kwargs))
            agents = (
                [trained, *references]
                if seats <= len(references) + 1
                else [trained, *references, *references[-1:] * (seats - 1 - len(references))]
            )
            out = run_dir if len(games) == 1 else run_dir / f"eval-{seats}p"
            try:
                summary = evaluate(
                    config["env"],
                    [],
                    config["final_eval_games"],
                    out,
                    seed=20_000,
                    env_kwargs=env_kwargs,
                    run_dir=run_dir,
                    agents=agents,
                    show_progress=progress_bar,
                )
            except KeyboardInterrupt:
                print(
                    f"\ninterrupted during the final evaluation: the trained model is saved ({run_dir / 'model.zip'}), the "
                    f"finished games are in {out / 'games.jsonl'}; --resume {run_dir} runs the evaluation again",
                    file=sys.stderr,
                )
                sys.exit(130)
            players = f", {seats} players" if len(games) > 1 else ""
            print(f"\n## Final evaluation: {config['env']}{players}, {config['final_eval_games']} games per pairing and seat\n")
            print(summary["table"])
            print(
                "\nwritten:\n"
                + "\n".join(
                    f"  {path}" for path in [str(run_dir / "model.zip"), str(run_dir / "model.safetensors"), *summary["written"]]
                )
            )
    print(f"view the training logs: tensorboard --logdir {run_dir / 'tb'}")
    return run_dir


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.train"), description=__doc__, formatter_class=HelpFormatter
    )
    config_default = config_defaults()
    parser.add_argument("--env", choices=sorted(ENVIRONMENTS), help="environment id (not needed with --resume)")
    parser.add_argument("--resume", type=Path, default=None, help="continue an interrupted run from its folder")
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="a hyperparameter YAML keyed by env id, layered over the packaged baselines/training/hyperparams.yaml "
        "(it needs only the keys it changes)",
    )
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="parent folder of run folders")
    parser.add_argument("--run-name", default=None, help="run folder name (default <env>-<time>)")
    parser.add_argument("--seed", type=seed_type, default=0, help="training seed")
    parser.add_argument(
        "--total-timesteps",
        type=int,
        default=None,
        help="override the config's budget (with --resume: a new total)" + config_default("total_timesteps"),
    )
    parser.add_argument(
        "--n-envs", type=int, default=None, help="override the number of parallel envs" + config_default("n_envs")
    )
    parser.add_argument(
        "--eval-every", type=int, default=None, help="override the evaluation interval (0 = never)" + config_default("eval_every")
    )
    parser.add_argument(
        "--eval-games",
        type=int,
        default=None,
        help="override games per seat in periodic evaluations" + config_default("eval_games"),
    )
    parser.add_argument(
        "--final-eval-games",
        type=int,
        default=None,
        help="override games per seat in the final evaluation" + config_default("final_eval_games"),
    )
    parser.add_argument(
        "--checkpoint-every", type=int, default=None, help="override the checkpoint interval" + config_default("checkpoint_every")
    )
    parser.add_argument(
        "--snapshot-every",
        type=int,
        default=None,
        help="override the self-play snapshot interval (0 = never)" + config_default("snapshot_every"),
    )
    parser.add_argument(
        "--vec-env", choices=["dummy", "subproc"], default=None, help="vectorised env class" + config_default("vec_env")
    )
    parser.add_argument(
        "--rollouts",
        choices=["lockstep", "async"],
        default=None,
        help="how rollouts step the envs: lockstep (SB3's) or async (each env as soon as it is back; "
        "needs --vec-env subproc)" + config_default("rollouts"),
    )
    parser.add_argument(
        "--bc-games", type=int, default=None, help="override the behaviour-cloning games (0 = off)" + config_default("bc_games")
    )
    parser.add_argument(
        "--bc-epochs", type=int, default=None, help="override the behaviour-cloning epochs" + config_default("bc_epochs")
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        help="override torch threads (0 = auto: the cores free at the start)" + config_default("torch_threads"),
    )
    parser.add_argument(
        "--update-threads",
        type=int,
        default=None,
        help="override torch threads in the learner's update (0 = as --torch-threads)" + config_default("update_threads"),
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
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
    overrides = {
        "total_timesteps": args.total_timesteps,
        "n_envs": args.n_envs,
        "eval_every": args.eval_every,
        "eval_games": args.eval_games,
        "final_eval_games": args.final_eval_games,
        "checkpoint_every": args.checkpoint_every,
        "snapshot_every": args.snapshot_every,
        "vec_env": args.vec_env,
        "rollouts": args.rollouts,
        "bc_games": args.bc_games,
        "bc_epochs": args.bc_epochs,
        "torch_threads": args.torch_threads,
        "update_threads": args.update_threads,
    }
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
            state, model_name = read_checkpoint_state(run_dir)
            # a run folder from someone else: its pickles are read by the restricted unpickler
            # now, so that one naming other code is refused in one line before any work
            checkpoint_objects(run_dir / "checkpoints" / model_name)
            read_exact(run_dir, model_name, state["timesteps"])
        except (yaml.YAMLError, ValueError, TypeError, KeyError) as error:
            parser.error(f"--resume {run_dir}: {str(error).splitlines()[0]}")
        ignored = [
            f"--{name.replace('_', '-')}"
            for name in (
                "env",
                "config",
                "runs",
                "run_name",
                "seed",
                "n_envs",
                "eval_every",
                "eval_games",
                "final_eval_games",
                "checkpoint_every",
                "snapshot_every",
                "vec_env",
                "rollouts",
                "bc_games",
                "bc_epochs",
                "torch_threads",
                "update_threads",
            )
            if getattr(args, name) != parser.get_default(name)
        ]
        if ignored:
            print(f"resuming: ignoring {', '.join(ignored)} (the run's saved config and seed are used)")
        if args.total_timesteps:
            config["total_timesteps"] = args.total_timesteps
    else:
        if not args.env:
            parser.error("--env is required unless --resume is given")
        try:
            config = load_config(args.env, overrides, args.config or CONFIG_PATH)
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
    with (run_dir / "command.txt").open("a") as handle:
        handle.write(
            "python -m polarzoo.baselines.train "
            + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
            + "\n"
        )
    try:
        bar = not args.no_progress and sys.stdout.isatty()
        train(
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


if __name__ == "__main__":
    main()
