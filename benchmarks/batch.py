"""Batch cores: game steps per second at B = 1, 64, 1024, 4096 on one core, beside PettingZoo's
``connect_four_v3.env()`` and a memory-bandwidth bound measured in the same run.

A "step" is one game advancing one action; ``step()`` validates the actions, plays them, writes
every game's next observation and dense int8 mask, and resets finished games (compiled kernels,
``polarzoo.envs.<game>.kernels``).  "incl. sampling" adds ``core.sample_actions(rng)``, the
compiled random-legal sampler (Fire & Ice: from the state's bitboards; otherwise
``sample_legal_actions`` over the mask).
Trials are interleaved and the median of ``--trials`` is reported.

Columns: steps/s of ``step()`` alone and with sampling, each also as a multiple of connect
four's ``env()`` random steps/s; bytes the step writes per game (observation, mask, final
observation, rewards and flags, state); and the bound: steps/s if a step cost nothing but a
``numpy.copyto`` of that many bytes (measured here, per B), and how far ``step()`` is from it.

    python -m benchmarks.batch --trials 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def run(core_cls: type, batch: int, seconds: float, seed: int) -> tuple[float, float]:
    core = core_cls(batch, seed=seed)
    core.reset()
    rng = np.random.default_rng(seed)
    steps = 0
    step_time = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = core.sample_actions(rng)
        t0 = time.perf_counter()
        core.step(actions)
        step_time += time.perf_counter() - t0
        steps += batch
    total = time.perf_counter() - start
    return steps / step_time, steps / total


def copy_bound(nbytes_per_game: int, batch: int, seconds: float) -> float:
    """Games/s if a step only wrote ``nbytes_per_game`` bytes per game: ``np.copyto`` between
    two fresh-size buffers of B games (the same bytes the step returns)."""
    source = np.ones(batch * nbytes_per_game, dtype=np.int8)
    target = np.empty_like(source)
    copies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        np.copyto(target, source)
        copies += 1
    return copies * batch / (time.perf_counter() - start)


def connect_four_steps(seconds: float, seed: int) -> float:
    from pettingzoo.classic import connect_four_v3

    from benchmarks.env_steps import steps_per_second

    steps = 2000
    rate = steps_per_second(connect_four_v3.env, steps, seed)
    return steps_per_second(connect_four_v3.env, max(steps, int(rate * seconds)), seed)


def main(argv: list[str] | None = None) -> None:
    from polarzoo.envs.batch import BATCH_CORES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=3, help="interleaved trials (median reported) (default: 3)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per trial and size (default: 1.0)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096], help="batch sizes (default: 1 64 1024 4096)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    for core in BATCH_CORES.values():  # compile (or load the cached kernels) before timing
        run(core, 2, 0.05, 0)
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    bounds: dict[tuple[str, int], list[float]] = {}
    connect_four: list[float] = []
    for trial in range(args.trials):
        connect_four.append(connect_four_steps(args.seconds, trial))
        for name, core in BATCH_CORES.items():
            written = core(1).nbytes_written_per_game_step()
            for size in args.sizes:
                results.setdefault((name, size), []).append(run(core, size, args.seconds, trial))
                bounds.setdefault((name, size), []).append(copy_bound(written, size, args.seconds / 4))
    baseline = statistics.median(connect_four)
    print(f"PettingZoo connect_four_v3.env(), random legal steps: {baseline:,.0f} steps/s (median of {args.trials})\n")
    print(
        "| core | B | steps/s, step() | x connect four | steps/s, incl. sampling | x connect four "
        "| bytes written per game-step | copy bound, steps/s | step() / bound |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (name, size), values in results.items():
        step_only = statistics.median(v[0] for v in values)
        with_sampling = statistics.median(v[1] for v in values)
        bound = statistics.median(bounds[(name, size)])
        written = BATCH_CORES[name](1).nbytes_written_per_game_step()
        print(
            f"| {name} | {size} | {step_only:,.0f} | {step_only / baseline:.0f}x | {with_sampling:,.0f} | "
            f"{with_sampling / baseline:.0f}x | {written:,} | {bound:,.0f} | {step_only / bound:.0%} |"
        )


if __name__ == "__main__":
    main()
