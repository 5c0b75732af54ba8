"""Train a MaskablePPO agent on one of our games, against random / heuristic opponents and a
growing pool of its own frozen snapshots; then evaluate it.

    python -m polarzoo.baselines.train --env fire_and_ice_v0                  # the main job (~3 min)
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

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import PolicyAgent, make_agent
from polarzoo.baselines.cli.runs import (
    atomic_write,
    save_model,
)
from polarzoo.baselines.evaluation.evaluate import evaluate
from polarzoo.baselines.evaluation.tournament import seat_names
from polarzoo.baselines.policies.weights import ModelFileError, load_policy_weights, save_policy
from polarzoo.baselines.training.checkpoints import (  # noqa: F401 (public here too: the trainer's checkpoints)
    capture_update_boundary,
    drop_later_evaluations,
    legacy_checkpoint,
    legacy_state,
    load_checkpoint_weights,
    read_checkpoint_state,
    read_exact,
    read_legacy,
    restore_update_boundary,
    save_checkpoint,
)
from polarzoo.baselines.training.config import (  # noqa: F401 (public here too: the trainer's config)
    ADDED_KEYS,
    NON_NEGATIVE_KEYS,
    NUMBER_RANGES,
    POSITIVE_KEYS,
    QUICK,
    QUICK_BC,
    REFERENCE_AGENTS,
    InitModelError,
    SeedSchedule,
    TrainConfig,
    TrainingState,
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


def behaviour_clone(
    model: Any,
    config: TrainConfig,
    run_dir: Path,
    seed: int,
    state: TrainingState,
    progress_bar: bool = True,
    again: str = "",
    log_every: float = 0.0,
) -> None:
    """Warm-start the policy by copying ``bc_teacher``'s moves (see baselines/training/imitation.py).

    The demonstrations are kept in ``run_dir/demonstrations.npz`` and the weights are saved after
    every epoch, so a Ctrl-C (or a kill) during cloning loses at most one epoch: ``--resume``
    continues with the epochs left."""
    started = time.perf_counter()
    done = state.bc_epochs_done
    demos = run_dir / "demonstrations.npz"
    if demos.exists():
        data = np.load(demos, allow_pickle=False)
        observations, masks, actions = data["observations"], data["masks"], data["actions"]
    else:
        teacher = make_agent(config.bc_teacher, config.env)
        try:
            observations, masks, actions = collect_demonstrations(
                config.env,
                teacher,
                config.bc_games,
                seed=SeedSchedule(seed).demonstrations,
                env_kwargs=config.env_kwargs,
                show_progress=progress_bar or log_every > 0,
                log_every=log_every,
                opponents=config.bc_opponents,
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
        state.bc_demonstration_seconds = time.perf_counter() - started
        temporary = run_dir / "demonstrations.tmp.npz"
        np.savez_compressed(temporary, observations=observations, masks=masks, actions=actions)
        temporary.replace(demos)
    losses = list(state.bc_losses)

    def after_epoch(epoch: int, loss: float) -> None:
        losses.append(loss)
        state.bc_epochs_done, state.bc_losses = done + epoch + 1, losses
        save_checkpoint(run_dir, model, state)

    try:
        clone(
            model,
            observations,
            masks,
            actions,
            epochs=config.bc_epochs - done,
            seed=SeedSchedule(seed).cloning(done),
            on_epoch=after_epoch,
            show_progress=progress_bar or log_every > 0,
            log_every=log_every,
        )
    except KeyboardInterrupt:
        print(
            f"\ninterrupted during behaviour cloning after {state.bc_epochs_done} of {config.bc_epochs} epochs "
            f"(saved); continue with {again or f'--resume {run_dir}'}"
        )
        sys.exit(130)
    report = {
        "teacher": config.bc_teacher,
        "games": config.bc_games,
        "samples": len(actions),
        "epochs": config.bc_epochs,
        "loss_per_epoch": losses,
        "seconds": time.perf_counter() - started,
        # the teacher's games (0 when a resumed run found them saved); the rest is the epochs
        "demonstration_seconds": state.bc_demonstration_seconds,
    }
    atomic_write(run_dir / "behaviour_cloning.json", json.dumps(report, indent=2))
    if losses:
        print(
            f"behaviour cloning: {len(actions)} moves of {config.bc_teacher} from {config.bc_games} games, "
            f"loss {losses[0]:.2f} -> {losses[-1]:.2f} in {report['seconds']:.0f} s"
        )


def choose_torch_threads(config: TrainConfig) -> tuple[int, str]:
    """The learner's torch threads and why: ``torch_threads`` when set (> 0; the default is 1);
    ``0`` = one per core this process may use, and one when the envs run in subprocesses (they
    take the cores).  Never the machine's load: the thread count changes the update's
    floating-point sums, so a run's weights would depend on what else was running.  One thread is
    the default because it gives the same weights on every machine and loses nothing beside other
    work, where two threads wait for each other (2.3x slower beside one busy core, 1.5x faster on
    an idle machine: the results page, "Torch threads")."""
    requested = int(config.torch_threads)
    if requested > 0:
        return requested, "torch_threads in the config"
    if config.vec_env == "subproc":
        return 1, "torch_threads: 0, the envs run in subprocesses on the other cores"
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on this platform
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    busy = f"; the machine is busy (1-minute load {load:.1f}): torch_threads: 1 may train faster" if load > cores / 2 else ""
    return cores, f"torch_threads: 0, the {cores} cores this process may use, whatever the load{busy}"


class LinearLearningRate:
    """An SB3 schedule (a callable of the progress remaining, 1 -> 0): ``start`` at the first
    timestep, ``end`` at the budget's last, linear between (a class, so a saved model pickles it by
    name; SB3's own ``LinearSchedule`` needs 2.6)."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def __call__(self, progress_remaining: float) -> float:
        return self.end + (self.start - self.end) * progress_remaining

    def __repr__(self) -> str:
        return f"LinearLearningRate(start={self.start}, end={self.end})"


def learning_rate_schedule(config: TrainConfig) -> float | LinearLearningRate:
    """MaskablePPO's ``learning_rate``: the config's constant, or a line from it to
    ``learning_rate_end`` over the budget (SB3 reads the progress from the timesteps, so a resumed
    run goes on along the same line; a larger ``--total-timesteps`` stretches what is left of it)."""
    if config.learning_rate_end is None:
        return config.learning_rate
    return LinearLearningRate(config.learning_rate, config.learning_rate_end)


def train(
    config: TrainConfig | Mapping[str, Any],
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
    command a Ctrl-C's message advises to continue (default ``--resume RUN_DIR``, the trainer's).
    ``config``: the frozen :class:`TrainConfig` (a mapping, such as ``load_config``'s, is checked
    into one first)."""
    config = check_config(config)
    import torch
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.training.rollouts import AsyncRolloutPPO

    algorithm = AsyncRolloutPPO if config.rollouts == "async" else MaskablePPO
    if config.rollouts == "async" and config.vec_env != "subproc":
        # (AsyncRolloutPPO is then MaskablePPO to the bit: the envs share one process anyway)
        print("rollouts: async steps subprocess envs; with vec_env: dummy the rollouts are lock steps", flush=True)
    threads, why = choose_torch_threads(config)
    torch.set_num_threads(threads)
    update_threads = int(config.update_threads or threads)
    in_update = f"; {update_threads} in the update (update_threads)" if update_threads != threads else ""
    print(f"torch threads: {threads} ({why}){in_update}", flush=True)
    (run_dir / "snapshots").mkdir(parents=True, exist_ok=True)
    state = TrainingState(seed=seed)
    model_name = "latest.safetensors"
    legacy = resume and legacy_checkpoint(run_dir)
    if resume:
        saved, model_name = legacy_state(run_dir) if legacy else read_checkpoint_state(run_dir)
        state = TrainingState.from_dict(saved)
        if model_name not in ("latest.safetensors", "latest.zip"):
            print(f"checkpoints/latest is unreadable: resuming from the previous checkpoint ({state.timesteps} timesteps)")
        seed = state.seed
        state.snapshots = [p for p in state.snapshots if Path(p).exists()]
    vec_env = make_vec_env(config, state.snapshots, SeedSchedule(seed).envs(state.timesteps))
    counters = None
    # SB3's objects are built from the config, new run or resumed: a checkpoint holds data only
    policy, policy_kwargs = policy_and_kwargs(config)
    model = algorithm(
        policy,
        vec_env,
        learning_rate=learning_rate_schedule(config),
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        ent_coef=config.ent_coef,
        clip_range=config.clip_range,
        policy_kwargs=policy_kwargs,
        seed=SeedSchedule(seed).model,
        device=config.device,
        tensorboard_log=str(run_dir / "tb"),
        verbose=0,
    )
    precision = policy_kwargs.get("update_precision") if policy_kwargs else None
    if precision is not None:
        dtype = getattr(model.policy.mlp_extractor, "autocast_dtype", None)
        print(f"update precision: {'bfloat16' if dtype is not None else 'float32'} (update_precision: {precision})", flush=True)
    if resume:
        if legacy:
            weights, boundary = read_legacy(run_dir, model_name, state.timesteps)
            model.policy.load_state_dict(weights["policy"], strict=True)
            model.policy.optimizer.load_state_dict(weights["optimizer"])
            model.num_timesteps, model._n_updates = weights["timesteps"], weights["n_updates"]
            print(f"{run_dir}: a checkpoint of polarzoo 0.3 and earlier, read with --trust-pickles (its pickles were run)")
        else:
            load_checkpoint_weights(model, run_dir, model_name)
            boundary = read_exact(run_dir, model_name, state.timesteps)
        if boundary is not None:
            restore_update_boundary(model, boundary, str(run_dir / "checkpoints"))
            counters = boundary["counters"]
            drop_later_evaluations(run_dir, state.timesteps)
            print(
                f"resuming {run_dir} at {model.num_timesteps} timesteps (seed {seed}): exactly where it stopped "
                "(games in progress, generators and schedule restored)"
            )
        elif model.num_timesteps == 0 and state.bc_epochs_done < config.bc_epochs and config.bc_games > 0:
            # Stopped during behaviour cloning: no PPO update has run, so there is no game to continue.
            print(
                f"resuming {run_dir} in behaviour cloning (seed {seed}): {state.bc_epochs_done} of "
                f"{config.bc_epochs} epochs done, then PPO from its first timestep"
            )
        else:
            print(
                f"resuming {run_dir} at {model.num_timesteps} timesteps (seed {seed}); the checkpoint has no exact "
                "state: the envs start new games"
            )
    if config.init_model and not resume:
        path = init_model_path(config)
        try:  # the weights only (a .safetensors or a zip's policy.pth): nothing in the file runs
            model.policy.load_state_dict(load_policy_weights(path)[1], strict=True)
        except ModelFileError as error:
            raise InitModelError(f"init_model {error}") from None
        except (ValueError, RuntimeError, KeyError) as error:
            raise InitModelError(f"init_model {path} does not fit this config's policy ({str(error).splitlines()[0]})") from None
        print(f"starting from the weights of {path}")
    if config.bc_games > 0 and state.bc_epochs_done < config.bc_epochs and model.num_timesteps == 0:
        behaviour_clone(model, config, run_dir, seed, state, progress_bar, again, log_every)
    remaining = config.total_timesteps - model.num_timesteps
    started = time.perf_counter()
    steps_before = model.num_timesteps
    # A checkpoint written by older code has no training time: the count then starts here.
    seconds_before = state.train_seconds or 0.0
    seconds_from = state.train_seconds_from
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
    state.train_seconds = seconds_before + elapsed
    # learn() ends after an update: an exact point to continue from (a larger --total-timesteps)
    save_checkpoint(run_dir, model, state, capture_update_boundary(model, callback.counters(), state))
    save_model(model, run_dir / "model.zip")
    # the shareable copy: weights and settings only (a zip's pickles run code when loaded)
    save_policy(model, run_dir / "model.safetensors", env_id=config.env)
    fps = (model.num_timesteps - steps_before) / max(elapsed, 1e-9)
    # "seconds": every part of the run (a resumed run included) from "seconds_from" timesteps on
    # (0 unless it continued a checkpoint of older code); "fps": this part's speed.
    record = {
        "timesteps": model.num_timesteps,
        "seconds": state.train_seconds,
        "seconds_from": seconds_from,
        "fps": fps,
        "seconds_this_part": elapsed,
        # this part's periodic evaluations (inside "seconds"): the rest is the training's own
        "evaluation_seconds": round(callback.eval_seconds, 2),
    }
    atomic_write(run_dir / "training.json", json.dumps(record, indent=2))
    resumed = f" ({elapsed:.0f} s in this part)" if seconds_before or steps_before else ""
    print(
        f"trained {model.num_timesteps} timesteps in {state.train_seconds:.0f} s{resumed} ({fps:.0f} fps); "
        f"model: {run_dir / 'model.zip'} (weights only, to share: {run_dir / 'model.safetensors'})"
    )
    if state.physics_failures:
        print(
            f"{state.physics_failures} episodes were truncated by a physics failure (rolled back; see tb rollout/physics_failures)"
        )
    vec_env.close()
    if final_eval:
        trained = PolicyAgent(run_dir / "model.safetensors", name="trained")
        references = []
        for spec in REFERENCE_AGENTS:
            try:
                references.append(make_agent(spec, config.env))
            except ValueError:
                pass
        games = evaluation_env_kwargs(config)
        for env_kwargs in games:
            # Two players: a round robin of the trained model and the references; more: one
            # lineup, the trained model, random and heuristics in the other seats, every rotation.
            seats = len(seat_names(config.env, env_kwargs))
            agents = (
                [trained, *references]
                if seats <= len(references) + 1
                else [trained, *references, *references[-1:] * (seats - 1 - len(references))]
            )
            out = run_dir if len(games) == 1 else run_dir / f"eval-{seats}p"
            try:
                summary = evaluate(
                    config.env,
                    [],
                    config.final_eval_games,
                    out,
                    seed=SeedSchedule.FINAL_EVALUATION,
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
            print(f"\n## Final evaluation: {config.env}{players}, {config.final_eval_games} games per pairing and seat\n")
            print(summary["table"])
            print(
                "\nwritten:\n"
                + "\n".join(
                    f"  {path}" for path in [str(run_dir / "model.zip"), str(run_dir / "model.safetensors"), *summary["written"]]
                )
            )
    print(f"view the training logs: tensorboard --logdir {run_dir / 'tb'}")
    return run_dir
