"""Thin Ice random play, A/B: this checkout against another commit of the project, in one run.

Each side plays seeded random 2-player games (``raw_env()`` defaults, uniformly random legal
actions) in its own subprocess for ``--seconds`` after three warm-up games (numba compiles or
loads its kernels), alternately (A B A B ...: a change in machine
load hits both sides alike), with PettingZoo ``connect_four_v3.env()`` random steps/s measured
between the rounds.  The other commit is exported with ``git archive`` into a temporary folder
and imported from there (nothing is installed).  Each side first plays 5 seeded games with the
spec's settle window (25 steps, the only one older code has) and hashes their results and final
MuJoCo states: equal hashes mean the code changes between the sides changed no number.  Reported: env steps/s and placements/s per side
(median over rounds), the speed-up, each side as a multiple of connect four's steps/s, and the
share of its wall time spent inside ``mujoco.mj_step`` (measured in a second phase of each round,
half as long, with the step timed through a wrapper, or, in code that steps the piles from
compiled code, by the clock reads of ``physics.time_mj_step``; n/a where the code bound the
function before the wrapper was put in).

    python -m benchmarks.thin_ice_ab --baseline 9dc0992 --rounds 3 --seconds 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import write_json

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import hashlib, json, sys, time
import numpy as np
from polarzoo.envs import thin_ice_v0
seconds, seed = float(sys.argv[1]), int(sys.argv[2])


def play(env, rng, game_seed):
    # one random game; returns the number of actions
    env.reset(seed=game_seed)
    actions = 0
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        actions += 1
    return actions


# Bit-identity: 5 seeded games with the spec's physics (older code has no such arguments and
# always used it), their results and final MuJoCo states hashed.
try:  # the spec's physics: 25 steps, and (code that has the choice) all 15 pieces in one scene
    reference = thin_ice_v0.raw_env(settle_steps=25, idle_pieces="parked")
except TypeError:
    try:
        reference = thin_ice_v0.raw_env(settle_steps=25)
    except TypeError:
        reference = thin_ice_v0.raw_env()
digest, rng = hashlib.sha256(), np.random.default_rng(seed)
for game in range(5):
    play(reference, rng, seed + game)
    digest.update(json.dumps(reference.unwrapped.result(), sort_keys=True).encode())
    for pile in reference.unwrapped.piles.piles:
        digest.update(pile.data.qpos.tobytes())
# Speed: each side's own defaults, after a warm-up (numba compiling or loading its kernels).
env = thin_ice_v0.raw_env()
warm = np.random.default_rng(10**6)
for game in range(3):
    play(env, warm, 10**6 + game)
rng = np.random.default_rng(seed)
steps = placements = games = 0
start = time.perf_counter()
while time.perf_counter() - start < seconds:
    steps += play(env, rng, seed + games)
    placements += env.unwrapped.piles.placements
    games += 1
elapsed = time.perf_counter() - start
# The share of a placement's time inside MuJoCo's step: the same play (the next games) with
# mujoco.mj_step timed through a wrapper looked up where the code calls it (about 0.3 us of
# wrapper a call beside 40-60 us of step), apart from the speed above so that it costs it nothing.
import mujoco
real_step, in_step = mujoco.mj_step, [0.0, 0]


def timed_step(*args):
    begin = time.perf_counter()
    real_step(*args)
    in_step[0] += time.perf_counter() - begin
    in_step[1] += 1


mujoco.mj_step = timed_step
# Code that steps the piles in compiled code (kernels.settle_pile) times each mj_step there.
from polarzoo.envs.thin_ice import physics
clocked = hasattr(physics, "time_mj_step")
if clocked:
    physics.time_mj_step(True)
    clock_before = physics.STEP_CLOCK.copy()
share_start, share_games = time.perf_counter(), 0
while time.perf_counter() - share_start < seconds / 2:
    play(env, rng, seed + games + share_games)
    share_games += 1
share_elapsed = time.perf_counter() - share_start
mujoco.mj_step = real_step
if clocked:
    physics.time_mj_step(False)
    in_step[0] += (physics.STEP_CLOCK[0] - clock_before[0]) / 1e9
    in_step[1] += int(physics.STEP_CLOCK[1] - clock_before[1])
print(json.dumps({"steps_per_second": steps / elapsed, "placements_per_second": placements / elapsed, "games": games,
                  "mj_step_share": in_step[0] / share_elapsed if in_step[1] else None, "mj_steps": in_step[1],
                  "first_games_sha256": digest.hexdigest(), "source": __import__("polarzoo").__file__}))
"""


def export_commit(commit: str, folder: Path) -> Path:
    """``git archive`` of ``commit`` into ``folder``; returns a folder to put first on sys.path."""
    source = folder / "src"
    source.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "polarzoo", "envs", "wrappers", "baselines"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    shim = folder / "shim" / "polarzoo"
    shutil.copytree(source / "polarzoo", shim)
    for name in ("envs", "wrappers", "baselines"):  # the package-dir mapping of pyproject.toml
        (shim / name).symlink_to(source / name, target_is_directory=True)
    return shim.parent


def play(path: Path | None, seconds: float, seed: int) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(seconds), str(seed)], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir()
    )
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "the child failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="9dc0992", help="commit to compare against (default: 9dc0992, before this work)")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds, median reported (default: 3)")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of play per side and round (default: 20)")
    parser.add_argument("--seed", type=int, default=0, help="first game seed (default: 0)")
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    from benchmarks.batch import connect_four_steps

    sides: dict[str, list[dict]] = {"baseline": [], "this checkout": []}
    connect_four: list[float] = []
    with tempfile.TemporaryDirectory(prefix="thin-ice-ab-") as folder:
        baseline = export_commit(args.baseline, Path(folder))
        for round_ in range(args.rounds):
            connect_four.append(connect_four_steps(2.0, round_))
            sides["baseline"].append(play(baseline, args.seconds, args.seed))
            sides["this checkout"].append(play(None, args.seconds, args.seed))
        connect_four.append(connect_four_steps(2.0, args.rounds))
    c4 = statistics.median(connect_four)
    print(
        f"Thin Ice random play (2 players, defaults), {args.rounds} rounds x {args.seconds:.0f} s per side; "
        f"connect_four_v3.env() {c4:,.0f} steps/s (median of {len(connect_four)})\n"
    )
    print("| code | env steps/s | placements/s | x connect four steps/s | time inside mj_step |\n|---|---:|---:|---:|---:|")
    medians = {}
    for name, runs in sides.items():
        steps = statistics.median(r["steps_per_second"] for r in runs)
        placements = statistics.median(r["placements_per_second"] for r in runs)
        shares = [r["mj_step_share"] for r in runs if r.get("mj_step_share") is not None]
        share = statistics.median(shares) if shares else None
        medians[name] = {
            "steps_per_second": steps,
            "placements_per_second": placements,
            "ratio_to_connect_four": steps / c4,
            "mj_step_share": share,
            "runs": runs,
        }
        label = f"{args.baseline} (baseline)" if name == "baseline" else "this checkout"
        print(f"| {label} | {steps:.1f} | {placements:.1f} | {steps / c4:.4f} | {'n/a' if share is None else f'{share:.0%}'} |")
    digests = {r["first_games_sha256"] for runs in sides.values() for r in runs}
    same = len(digests) == 1 and None not in digests
    print(
        f"\n5 seeded games with the spec's settle window (25 steps) on both sides, results and final MuJoCo states: "
        f"{'bit-identical' if same else 'DIFFERENT'}"
    )
    speedup = medians["this checkout"]["steps_per_second"] / medians["baseline"]["steps_per_second"]
    placement_speedup = medians["this checkout"]["placements_per_second"] / medians["baseline"]["placements_per_second"]
    print(f"\nspeed-up: {speedup:.2f}x env steps/s, {placement_speedup:.2f}x placements/s")
    write_json(
        args.json,
        {
            "baseline": args.baseline,
            "connect_four_steps_per_second": c4,
            "sides": medians,
            "speedup_steps": speedup,
            "speedup_placements": placement_speedup,
            "first_games_bit_identical": same,
        },
    )


if __name__ == "__main__":
    main()
