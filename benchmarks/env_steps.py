"""Random-legal-play steps/s of our AEC envs beside PettingZoo's connect_four_v3.

Every ``step`` counts, including the ``None`` steps of finished agents; resets are included in
the time.  Trials are interleaved (env A, env B, ..., then again) so that machine noise hits all
envs alike; the table shows the median of the trials and the ratio to ``connect_four_v3.env()``.

    python -m benchmarks.env_steps --trials 5 --steps 20000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def steps_per_second(env_fn: Callable[[], Any], num_steps: int, seed: int) -> float:
    env = env_fn()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    while steps < num_steps:
        for _agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(action)
            steps += 1
        env.reset()
    return steps / (time.perf_counter() - start)


def candidates() -> dict[str, Callable[[], Any]]:
    from pettingzoo.classic import connect_four_v3

    from polarzoo.envs import ENVIRONMENTS, GAMES

    table: dict[str, Callable[[], Any]] = {
        "connect_four_v3.env()": connect_four_v3.env,
        "connect_four_v3.raw_env()": connect_four_v3.raw_env,
    }
    for name, module in ENVIRONMENTS.items():
        if GAMES[name].benchmark_steps:  # (Thin Ice's physics has a table of its own)
            table[f"{name}.env()"] = module.env
            table[f"{name}.raw_env()"] = module.raw_env
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=5, help="interleaved trials per env (median reported)")
    parser.add_argument("--steps", type=int, default=20_000, help="steps per trial")
    parser.add_argument("--only", nargs="*", default=None, help="substrings of env names to include")
    args = parser.parse_args(argv)
    envs = candidates()
    if args.only:
        envs = {k: v for k, v in envs.items() if any(s in k for s in args.only)}
    results: dict[str, list[float]] = {name: [] for name in envs}
    for env_fn in envs.values():  # imports, compiled kernels (cached on disk) and caches warm
        steps_per_second(env_fn, 200, seed=0)
    for trial in range(args.trials):
        for name, env_fn in envs.items():
            results[name].append(steps_per_second(env_fn, args.steps, seed=trial))
    baseline = statistics.median(results.get("connect_four_v3.env()", [float("nan")]))
    print(f"| env | steps/s (median of {args.trials}) | vs connect_four_v3.env() |")
    print("|---|---:|---:|")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"| `{name}` | {median:,.0f} | {median / baseline:.2f}x |")


if __name__ == "__main__":
    main()
