"""Batch cores: game steps per second at B = 1, 64, 1024, 4096 on one core, and bytes per game.

A "step" is one game advancing one action; ``step()`` computes the next observations and masks
of all B games and resets finished ones.  Random legal actions are drawn from the masks with a
vectorised sampler; the table shows steps/s of ``step()`` alone and including the sampling.
Trials are interleaved and the median of ``--trials`` is reported.

    python -m benchmarks.batch --trials 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from polarzoo.envs.batch.core import sample_legal_actions


def run(core_cls: type, batch: int, seconds: float, seed: int) -> tuple[float, float]:
    core = core_cls(batch, seed=seed)
    _, mask = core.reset()
    rng = np.random.default_rng(seed)
    steps = 0
    step_time = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = sample_legal_actions(mask, rng)
        t0 = time.perf_counter()
        result = core.step(actions)
        step_time += time.perf_counter() - t0
        mask = result.action_mask
        steps += batch
    total = time.perf_counter() - start
    return steps / step_time, steps / total


def main(argv: list[str] | None = None) -> None:
    from polarzoo.envs.batch import BATCH_CORES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per trial")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for trial in range(args.trials):
        for name, core in BATCH_CORES.items():
            for size in args.sizes:
                results.setdefault((name, size), []).append(run(core, size, args.seconds, trial))
    print("| core | B | steps/s, step() | steps/s, incl. random sampling | bytes per game |")
    print("|---|---:|---:|---:|---:|")
    for (name, size), values in results.items():
        step_only = statistics.median(v[0] for v in values)
        with_sampling = statistics.median(v[1] for v in values)
        bytes_per_game = BATCH_CORES[name](size).nbytes_per_game()
        print(f"| {name} | {size} | {step_only:,.0f} | {with_sampling:,.0f} | {bytes_per_game:.0f} |")


if __name__ == "__main__":
    main()
