"""MaskablePPO training throughput (timesteps/s).

    python -m benchmarks.training_fps --timesteps 16384                    # vectorisations, MLP
    python -m benchmarks.training_fps --policies --timesteps 16384         # board policy vs MLP

The first table compares vectorised envs with the same hyperparameters (2048 transitions per
update, batch 512, 5 epochs, 256x256 MLP, one torch thread).  ``--policies`` compares the board
policy (``baselines/policies/sb3.py``) with the flat MLP at each game's default training config
(``baselines/training/hyperparams.yaml``: envs, rollout, batch, epochs, torch threads), learner against
random, ``DummyVecEnv(SingleAgentEnv)``.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Callable


def fps(make_venv: Callable[[], Any], timesteps: int, policy: Any = "MlpPolicy", policy_kwargs: dict[str, Any] | None = None,
        n_steps: int = 256, batch_size: int = 512, n_epochs: int = 5, threads: int = 1) -> float:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(threads)
    venv = make_venv()
    model = MaskablePPO(policy, venv, n_steps=n_steps, batch_size=batch_size, n_epochs=n_epochs,
                        policy_kwargs=policy_kwargs or {"net_arch": [256, 256]}, seed=0, device="cpu", verbose=0)
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
            ("DummyVecEnv(SingleAgentEnv)", 8, lambda: DummyVecEnv([lambda: SingleAgentEnv(env_id)] * 8)),
            ("SubprocVecEnv(SingleAgentEnv)", 8, lambda: SubprocVecEnv([lambda: SingleAgentEnv(env_id)] * 8)),
            ("BatchVecEnv", 8, lambda: BatchVecEnv(env_id, 8, seed=0)),
            ("BatchVecEnv", 64, lambda: BatchVecEnv(env_id, 64, seed=0)),
        ]
        for name, n_envs, make in setups:
            rate = fps(make, timesteps, n_steps=max(min(2048, timesteps) // n_envs, 4),
                       batch_size=min(512, timesteps))
            print(f"| {env_id} | {name} | {n_envs} | {rate:,.0f} |", flush=True)


def policies(envs: list[str], timesteps: int) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from polarzoo.baselines.training.ppo import load_config, policy_and_kwargs
    from polarzoo.wrappers import SingleAgentEnv

    print("| env | policy | parameters | n_envs x n_steps | batch x epochs | torch threads | training fps |")
    print("|---|---|---:|---|---|---:|---:|")
    for env_id in envs:
        for name in ("board", "mlp"):
            config = load_config(env_id, {"policy": name})
            policy, kwargs = policy_and_kwargs(config)
            threads = int(config["torch_threads"] or os.cpu_count() or 1)
            n = config["n_envs"]
            rate = fps(lambda: DummyVecEnv([lambda: SingleAgentEnv(env_id)] * n), timesteps, policy, kwargs,
                       config["n_steps"], config["batch_size"], config["n_epochs"], threads)
            from sb3_contrib import MaskablePPO

            probe = MaskablePPO(policy, SingleAgentEnv(env_id), policy_kwargs=kwargs, device="cpu")
            size = sum(p.numel() for p in probe.policy.parameters())
            print(f"| {env_id} | {name} | {size:,} | {n} x {config['n_steps']} | {config['batch_size']} x {config['n_epochs']} "
                  f"| {threads} | {rate:,.0f} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=16384)
    parser.add_argument("--envs", nargs="+", default=["fire_and_ice_v0", "go_with_the_floe_v0"])
    parser.add_argument("--policies", action="store_true", help="board policy vs MLP at the default configs")
    args = parser.parse_args(argv)
    if args.policies:
        policies(args.envs, args.timesteps)
    else:
        vectorisations(args.envs, args.timesteps)


if __name__ == "__main__":
    main()
