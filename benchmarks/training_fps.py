"""MaskablePPO training throughput (timesteps/s).

    python -m benchmarks.training_fps --timesteps 16384                    # vectorisations, MLP
    python -m benchmarks.training_fps --policies --timesteps 16384         # board policy vs MLP
    python -m benchmarks.training_fps --default-run thin_ice_v0 --baseline fad9a2b   # the training command, A/B

The first table compares vectorised envs with the same hyperparameters (2048 transitions per
update, batch 512, 5 epochs, 256x256 MLP, one torch thread).  ``--policies`` compares the board
policy (``baselines/policies/sb3.py``) with the flat MLP at each game's default training config
(each game kit's ``hyperparams``: envs, rollout, batch, epochs, torch threads), learner against
random, ``DummyVecEnv(SingleAgentEnv)``.  ``--default-run ENV`` times the README's training
command itself (its config, vectorisation, opponents and self-play; evaluations off), with
``--baseline COMMIT`` also that commit's code (exported with ``git archive``), alternately.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def training_command(env_id: str, timesteps: int, runs: Path, run_name: str, *extra: str) -> list[str]:
    """``polarzoo.baselines.train`` for ``timesteps`` in this interpreter: the game's default
    config, no evaluation, the run in ``runs/run_name`` (its ``training.json`` has the fps)."""
    return [sys.executable, "-m", "polarzoo.baselines.train", "--env", env_id, "--total-timesteps", str(timesteps),
            "--eval-every", "0", "--no-final-eval", "--runs", str(runs), "--run-name", run_name, "--no-progress", *extra]  # fmt: skip


def fps(
    make_venv: Callable[[], Any],
    timesteps: int,
    policy: Any = "MlpPolicy",
    policy_kwargs: dict[str, Any] | None = None,
    n_steps: int = 256,
    batch_size: int = 512,
    n_epochs: int = 5,
    threads: int = 1,
) -> float:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    torch.set_num_threads(threads)
    venv = make_venv()
    model = MaskablePPO(
        policy,
        venv,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        policy_kwargs=policy_kwargs or {"net_arch": [256, 256]},
        seed=0,
        device="cpu",
        verbose=0,
    )
    model.set_logger(Logger(folder=None, output_formats=[]))  # else SB3 makes an empty folder in /tmp
    model.learn(min(512, timesteps))  # warm-up
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    venv.close()
    return timesteps / elapsed


def vectorisations(envs: list[str], timesteps: int) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.wrappers.batch_vec_env import BatchVecEnv

    print("| env | vectorisation | n_envs | training fps |")
    print("|---|---|---:|---:|")
    for env_id in envs:
        setups = [
            ("DummyVecEnv(SingleAgentEnv)", 8, lambda env_id=env_id: DummyVecEnv([lambda: SingleAgentEnv(env_id)] * 8)),
            ("SubprocVecEnv(SingleAgentEnv)", 8, lambda env_id=env_id: SubprocVecEnv([lambda: SingleAgentEnv(env_id)] * 8)),
            ("BatchVecEnv", 8, lambda env_id=env_id: BatchVecEnv(env_id, 8, seed=0)),
            ("BatchVecEnv", 64, lambda env_id=env_id: BatchVecEnv(env_id, 64, seed=0)),
        ]
        for name, n_envs, make in setups:
            rate = fps(make, timesteps, n_steps=max(min(2048, timesteps) // n_envs, 4), batch_size=min(512, timesteps))
            print(f"| {env_id} | {name} | {n_envs} | {rate:,.0f} |", flush=True)


def _vec_env(env_id: str, n: int) -> Any:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from polarzoo.wrappers import SingleAgentEnv

    return DummyVecEnv([lambda: SingleAgentEnv(env_id)] * n)


def policies(envs: list[str], timesteps: int) -> None:

    from polarzoo.baselines.training.ppo import TrainConfig, load_config, policy_and_kwargs
    from polarzoo.wrappers import SingleAgentEnv

    print("| env | policy | parameters | n_envs x n_steps | batch x epochs | torch threads | training fps |")
    print("|---|---|---:|---|---|---:|---:|")
    for env_id in envs:
        for name in ("board", "mlp"):
            config = TrainConfig.from_mapping(load_config(env_id, {"policy": name}))
            policy, kwargs = policy_and_kwargs(config)
            threads = int(config.torch_threads or os.cpu_count() or 1)
            n = config.n_envs
            rate = fps(
                functools.partial(_vec_env, env_id, n),
                timesteps,
                policy,
                kwargs,
                config.n_steps,
                config.batch_size,
                config.n_epochs,
                threads,
            )
            from sb3_contrib import MaskablePPO

            probe = MaskablePPO(policy, SingleAgentEnv(env_id), policy_kwargs=kwargs, device="cpu")
            size = sum(p.numel() for p in probe.policy.parameters())
            print(
                f"| {env_id} | {name} | {size:,} | {n} x {config.n_steps} | {config.batch_size} x {config.n_epochs} "
                f"| {threads} | {rate:,.0f} |",
                flush=True,
            )


def default_run(env_id: str, timesteps: int, baseline: str | None, rounds: int) -> None:
    """The README's training command itself (``polarzoo.baselines.train --env ENV``: the default
    config, its vectorisation, opponents and self-play) for ``timesteps``, without periodic or
    final evaluations, each side in its own process, alternately (A B A B ...); the fps is the
    run's own (``training.json``), the median over rounds."""
    from benchmarks.thin_ice_ab import export_commit

    with tempfile.TemporaryDirectory() as folder:
        sides: list[tuple[str, Path | None]] = [("this checkout", None)]
        if baseline:
            try:
                sides.insert(0, (f"{baseline} (baseline)", export_commit(baseline, Path(folder) / "baseline")))
            except subprocess.CalledProcessError:
                raise SystemExit(f"--baseline {baseline!r}: not a commit of this repository (git archive failed)") from None
        rates: dict[str, list[float]] = {name: [] for name, _ in sides}
        for round_ in range(rounds):
            for side, (name, path) in enumerate(sides):
                environ = dict(os.environ)
                if path is not None:
                    environ["PYTHONPATH"] = str(path)
                run_name = f"side{side}-round{round_}"
                command = training_command(env_id, timesteps, Path(folder), run_name)
                done = subprocess.run(command, capture_output=True, text=True, env=environ, cwd=tempfile.gettempdir())
                if done.returncode:
                    raise SystemExit(f"{name}: the training failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
                rate = json.loads((Path(folder) / run_name / "training.json").read_text())["fps"]
                rates[name].append(rate)
                print(f"round {round_ + 1}: {name}: {rate:.1f} fps", flush=True)
    print(
        f"\n`python -m polarzoo.baselines.train --env {env_id}` (default config), {timesteps:,} timesteps, no evaluations, "
        f"{rounds} round(s)\n"
    )
    print("| code | training fps (median) | rounds |\n|---|---:|---|")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):.1f} | {', '.join(f'{v:.1f}' for v in values)} |")
    if baseline:
        old, new = (statistics.median(values) for values in rates.values())
        print(f"\nspeed-up: {new / old:.2f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help="timesteps per measurement (default: 16384; "
        "--default-run: 20480, past the first self-play snapshot of Thin Ice's config)",
    )
    parser.add_argument("--envs", nargs="+", default=["fire_and_ice_v0", "go_with_the_floe_v0"])
    parser.add_argument("--policies", action="store_true", help="board policy vs MLP at the default configs")
    parser.add_argument(
        "--default-run",
        metavar="ENV",
        default=None,
        help="the README's training command for ENV itself (default config, no evaluations)",
    )
    parser.add_argument("--baseline", default=None, help="with --default-run: also run COMMIT's code, alternately (an A/B)")
    parser.add_argument("--rounds", type=int, default=1, help="with --default-run: rounds per side (default: 1)")
    args = parser.parse_args(argv)
    if args.baseline and not args.default_run:
        parser.error("--baseline goes with --default-run")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1; got {args.rounds}")
    if args.timesteps is not None and args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1; got {args.timesteps}")
    if args.default_run:
        default_run(args.default_run, args.timesteps or 20480, args.baseline, args.rounds)
    elif args.policies:
        policies(args.envs, args.timesteps or 16384)
    else:
        vectorisations(args.envs, args.timesteps or 16384)


if __name__ == "__main__":
    main()
