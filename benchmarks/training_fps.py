"""MaskablePPO training throughput (timesteps/s) with different vectorised envs, same
hyperparameters (2048 transitions per update, batch 512, 5 epochs, 256x256 MLP, one torch thread).

    python -m benchmarks.training_fps --timesteps 16384
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable


def fps(make_venv: Callable[[], Any], n_envs: int, timesteps: int) -> float:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = make_venv()
    rollout = min(2048, timesteps)
    model = MaskablePPO("MlpPolicy", venv, n_steps=max(rollout // n_envs, 4), batch_size=min(512, rollout), n_epochs=5,
                        policy_kwargs={"net_arch": [256, 256]}, seed=0, device="cpu", verbose=0)
    model.learn(min(512, timesteps))  # warm-up
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    venv.close()
    return timesteps / elapsed


def main(argv: list[str] | None = None) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.wrappers.batch_vec_env import BatchVecEnv

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=16384)
    parser.add_argument("--envs", nargs="+", default=["fire_and_ice_v0", "go_with_the_floe_v0"])
    args = parser.parse_args(argv)
    print("| env | vectorisation | n_envs | training fps |")
    print("|---|---|---:|---:|")
    for env_id in args.envs:
        setups = [
            ("DummyVecEnv(SingleAgentEnv)", 8, lambda: DummyVecEnv([lambda: SingleAgentEnv(env_id)] * 8)),
            ("SubprocVecEnv(SingleAgentEnv)", 8, lambda: SubprocVecEnv([lambda: SingleAgentEnv(env_id)] * 8)),
            ("BatchVecEnv", 8, lambda: BatchVecEnv(env_id, 8, seed=0)),
            ("BatchVecEnv", 64, lambda: BatchVecEnv(env_id, 64, seed=0)),
        ]
        for name, n_envs, make in setups:
            print(f"| {env_id} | {name} | {n_envs} | {fps(make, n_envs, args.timesteps):,.0f} |", flush=True)


if __name__ == "__main__":
    main()
