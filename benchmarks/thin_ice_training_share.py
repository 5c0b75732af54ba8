"""How much of a Thin Ice training's wall time is MuJoCo's step, and how much is everything else
(the env's rules and observations, the opponents, the policy's forward passes, the updates).

    python -m benchmarks.thin_ice_training_share --timesteps 4096

Thin Ice's default training config (its kit's settings: the pile policy, its batch and epochs),
its envs in this process (``vec_env: dummy``, so that one clock sees every step; the default
config steps them in subprocesses, one per core), no evaluations, one torch thread.  Every
``mujoco.mj_step`` is timed: those the compiled settle loop calls by its own clock
(``physics.time_mj_step``), the others through a wrapper (about 0.3 us a call beside tens of
microseconds a step).  Prints the share inside and outside the step.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import write_json


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=4096, help="training timesteps (default: 4096)")
    parser.add_argument("--seed", type=int, default=0, help="training seed (default: 0)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    if args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1, got {args.timesteps}")

    import mujoco

    from polarzoo.baselines.training import ppo
    from polarzoo.envs.thin_ice import physics

    real_step, outside_loop = mujoco.mj_step, [0.0, 0]

    def timed_step(*step_args: object) -> None:
        begin = time.perf_counter()
        real_step(*step_args)
        outside_loop[0] += time.perf_counter() - begin
        outside_loop[1] += 1

    config = ppo.load_config(
        "thin_ice_v0",
        {"total_timesteps": args.timesteps, "vec_env": "dummy", "rollouts": "lockstep", "eval_every": 0, "update_threads": 1},
    )
    mujoco.mj_step = timed_step
    physics.time_mj_step(True)
    clock = physics.STEP_CLOCK.copy()
    try:
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            ppo.train(config, Path(folder) / "run", seed=args.seed, progress_bar=False, final_eval=False)
            wall = time.perf_counter() - started
            record = json.loads((Path(folder) / "run" / "training.json").read_text())
    finally:
        mujoco.mj_step = real_step
        physics.time_mj_step(False)
    in_loop = (physics.STEP_CLOCK[0] - clock[0]) / 1e9
    steps = int(physics.STEP_CLOCK[1] - clock[1]) + outside_loop[1]
    inside = in_loop + outside_loop[0]
    training = float(record["seconds"])
    result = {
        "command": "python -m benchmarks.thin_ice_training_share " + " ".join(argv if argv is not None else sys.argv[1:]),
        "timesteps": record["timesteps"],
        "training_seconds": round(training, 1),
        "wall_seconds_with_setup": round(wall, 1),
        "mj_steps": steps,
        "seconds_in_mj_step": round(inside, 1),
        "share_in_mj_step": round(inside / training, 3),
        "share_outside_mj_step": round(1 - inside / training, 3),
        "load_1min": os.getloadavg()[0],
    }
    print(
        f"{record['timesteps']:,} timesteps in {training:.1f} s of training: {inside:.1f} s inside mj_step "
        f"({steps:,} steps), {100 * (1 - inside / training):.0f}% of the time outside it (load {result['load_1min']:.1f})"
    )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
