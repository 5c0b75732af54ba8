"""Thin Ice physics cost: ms per placement by pile size, placements/s on one core, what dominates
the cost, and the memory of one env instance.

Piles are built by seeded random placements (sizes, lattice points, non-upright orientations,
hand tremor on); a placement that puts the pile out is timed and then undone, so piles of
every size up to 15 pieces occur.  Each ``PilePhysics.place`` (lower, release, settle with the
rule checks at every step) is timed with the number of pieces already in the pile.

    python -m benchmarks.thin_ice_physics --piles 6

Speed is also reported as a ratio measured in the same run (machines differ up to 3x): median
placements/s divided by PettingZoo ``connect_four_v3.env()`` random steps/s.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np

from benchmarks import write_json


def measure(piles: int, seed: int) -> tuple[dict[int, list[float]], pstats.Stats]:
    """Build ``piles`` piles of up to 15 pieces by random placements with the spec's defaults
    (tremor included); a placement that puts the pile out is timed, then undone (snapshot)."""
    from polarzoo.envs.thin_ice import physics

    rng = np.random.default_rng(seed)
    timings: dict[int, list[float]] = defaultdict(list)
    grid, pitch = 7, 0.007
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(piles):
        pile = physics.PilePhysics()
        attempts = 0
        while not pile.in_play.all() and attempts < 80:
            attempts += 1
            left = [size for size in range(3) if any(not pile.in_play[p] for p in range(5 * size, 5 * size + 5))]
            size = int(rng.choice(left))
            cell = int(rng.integers(grid * grid))
            point = ((cell % grid - 3) * pitch, (cell // grid - 3) * pitch)
            orientation = int(rng.integers(1, physics.NUM_ORIENTATIONS))  # upright on a pile nests at once
            saved = pile.snapshot()
            pieces = int(pile.in_play.sum())
            start = time.perf_counter()
            outcome = pile.place(size, point, orientation, rng)
            timings[pieces].append((time.perf_counter() - start) * 1000)
            if outcome.eliminated:
                pile.restore(saved)
    profiler.disable()
    return timings, pstats.Stats(profiler)


def cost_breakdown(stats: pstats.Stats) -> dict[str, float]:
    """Share of placement time in MuJoCo stepping, rule checks, and lowering to first contact."""
    totals = {"mj_step (physics)": 0.0, "rule checks per step": 0.0, "lowering (collision queries)": 0.0, "place total": 0.0}
    for (filename, _, name), (_, _, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        if name == "mj_step" or name.endswith("mj_step>"):
            totals["mj_step (physics)"] += tottime
        elif (filename.endswith("kernels.py") and name == "check_pile") or (
            filename.endswith("physics.py") and name == "_check_warnings"
        ):
            # the compiled per-step check (soundness, rules T/A/N, speeds) and MuJoCo's warnings
            totals["rule checks per step"] += cumtime
        elif filename.endswith("physics.py") and name == "_penetrates":
            totals["lowering (collision queries)"] += cumtime
        elif filename.endswith("physics.py") and name == "place":
            totals["place total"] += cumtime
    return totals


def peak_rss_mb() -> dict[str, float]:
    """Peak RSS of a fresh process: after imports (numpy, mujoco, gymnasium, pettingzoo), and
    after one 2-player env played 30 random actions."""
    code = """
import resource, numpy as np, mujoco
import polarzoo.envs.thin_ice_v0 as t
from polarzoo.baselines.agents import RandomAgent
def rss_kb():
    return int(next(l for l in open('/proc/self/status') if l.startswith('VmRSS')).split()[1])
base = rss_kb()
env = t.raw_env(num_players=2)
env.reset(seed=0)
rng = np.random.default_rng(0)
for _ in range(30):
    if all(env.terminations.values()):
        env.reset(seed=1)
    env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
print(base, rss_kb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    base, current, peak = (int(x) / 1024 for x in out)
    return {"imports_mb": base, "with_env_mb": current, "env_mb": current - base, "peak_mb": peak}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--piles", type=int, default=6, help="piles to build (up to 15 pieces each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    parser.add_argument(
        "--equivalence-seeds",
        type=int,
        default=0,
        help="instead: the equivalence check (envs/thin_ice/equivalence.py) of the default physics "
        "against the spec's settings (settle window 25 steps, idle pieces parked) with this many tremor seeds per scenario",
    )
    args = parser.parse_args(argv)
    if args.equivalence_seeds:
        from polarzoo.envs.thin_ice.equivalence import compare
        from polarzoo.envs.thin_ice.physics import PhysicsConfig

        started = time.perf_counter()
        default = PhysicsConfig()
        comparison = compare(PhysicsConfig(settle_steps=25, idle_pieces="parked"), default, args.equivalence_seeds)
        print(
            f"reference: the spec's settings (settle_steps=25, idle_pieces='parked'); candidate: the default "
            f"(settle_steps={default.settle_steps}, idle_pieces={default.idle_pieces!r}); "
            f"{args.equivalence_seeds} seeds per scenario, {time.perf_counter() - started:.0f} s\n"
        )
        print(comparison.table())
        disagreements = comparison.disagreements()
        print(
            "\nequivalent: every scenario and outcome within overlapping 95% Wilson intervals"
            if not disagreements
            else "\nNOT equivalent:\n" + "\n".join(disagreements)
        )
        return
    from benchmarks.batch import connect_four_steps

    # Connect four is measured before, between and after the piles (median of the three), so
    # that a change in machine load during the run hits both sides of the ratio alike.
    connect_four_runs = [connect_four_steps(2.0, args.seed)]
    half = max(args.piles // 2, 1)
    timings, stats = measure(half, args.seed)
    connect_four_runs.append(connect_four_steps(2.0, args.seed + 1))
    if args.piles > half:
        more, more_stats = measure(args.piles - half, args.seed + 1)
        for pieces, values in more.items():
            timings[pieces].extend(values)
        stats.add(more_stats)
    connect_four_runs.append(connect_four_steps(2.0, args.seed + 2))
    connect_four = float(np.median(connect_four_runs))
    buckets = {"0-2": range(0, 3), "3-5": range(3, 6), "6-9": range(6, 10), "10+": range(10, 100)}
    everything = np.array([t for values in timings.values() for t in values])
    print("| pieces already in the pile | placements | median ms | p90 ms |")
    print("|---|---:|---:|---:|")
    rows = {}
    for label, sizes in buckets.items():
        bucket = np.array([t for s in sizes for t in timings.get(s, [])])
        if len(bucket):
            rows[label] = {"n": len(bucket), "median": float(np.median(bucket)), "p90": float(np.percentile(bucket, 90))}
            print(f"| {label} | {len(bucket)} | {np.median(bucket):.1f} | {np.percentile(bucket, 90):.1f} |")
    print(f"| all | {len(everything)} | {np.median(everything):.1f} | {np.percentile(everything, 90):.1f} |")
    rate = 1000 / everything.mean()
    by_median = 1000 / np.median(everything)
    print(f"\nplacements per second (one core, mean): {rate:.1f}; by the median: {by_median:.1f}")
    print(
        f"PettingZoo connect_four_v3.env() random steps/s in the same run (median of 3): {connect_four:,.0f}; "
        f"placements/s (median) / connect four steps/s = {by_median / connect_four:.4f}"
    )
    costs = cost_breakdown(stats)
    total = costs.pop("place total") or 1.0
    print("\n| share of placement time | % |\n|---|---:|")
    for name, seconds in costs.items():
        print(f"| {name} | {100 * seconds / total:.0f}% |")
    memory = peak_rss_mb()
    print(
        f"\nRSS: {memory['imports_mb']:.1f} MB after imports, {memory['with_env_mb']:.1f} MB with one 2-player env "
        f"(+{memory['env_mb']:.1f} MB); peak RSS of that process {memory['peak_mb']:.1f} MB"
    )
    write_json(
        args.json,
        {
            "buckets": rows,
            "placements_per_second": rate,
            "median_ms": float(np.median(everything)),
            "connect_four_steps_per_second": connect_four,
            "ratio_to_connect_four": by_median / connect_four,
            "costs": costs,
            "memory": memory,
        },
    )


if __name__ == "__main__":
    main()
