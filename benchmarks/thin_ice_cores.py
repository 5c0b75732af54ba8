"""How busy the cores are while Thin Ice trains with its default config, at 2-6 players.

    python -m benchmarks.thin_ice_cores --players 2 3 4 5 6 --timesteps 2048

Thin Ice's kit trains with its envs in subprocesses (``vec_env: subproc``, four envs) and
``rollouts: async`` (each env stepped again as soon as its step is back, rather than every env
waiting for the slowest; ``baselines/training/rollouts.py``).  For each table size and each
rollout mode (``--rollouts``), this runs the default config for ``--timesteps`` timesteps with no
evaluations and reads the CPU time (``/proc/<pid>/stat``) of the trainer's process and every
process under it (the env workers) from the moment every worker is up to the moment the envs are
closed.  Busy cores = that CPU time / the wall time; the share of the machine = busy cores / the
cores this process may use.  Linux only (``/proc``).  An idle machine is the measurement: the
one-minute load is printed beside each row.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import write_json

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_tree_ticks(root: int) -> dict[int, int]:
    """CPU ticks (user + system, every thread) of ``root`` and each process under it, by pid."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # the process ended while the folder was read
            continue
        # fields after the command's name, which is in parentheses and may hold spaces
        fields = text[text.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = int(fields[11]) + int(fields[12])
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return {pid: ticks[pid] for pid in tree if pid in ticks}


def measure(players: int, rollouts: str, timesteps: int, seed: int) -> dict[str, Any]:
    """One short default training at ``players``; its wall time, CPU time and busy cores."""
    from polarzoo.baselines.training import ppo

    window: dict[str, Any] = {}
    build = ppo.make_vec_env

    def make_vec_env(*args: Any, **kwargs: Any) -> Any:
        vec_env = build(*args, **kwargs)
        vec_env.get_attr("render_mode")  # every worker has started and built its env
        window["start"], window["ticks"] = time.perf_counter(), process_tree_ticks(os.getpid())
        close = vec_env.close

        def timed_close() -> None:
            window["end"], window["end_ticks"] = time.perf_counter(), process_tree_ticks(os.getpid())
            close()

        vec_env.close = timed_close
        return vec_env

    config = ppo.load_config(
        "thin_ice_v0",
        {
            "total_timesteps": timesteps,
            "rollouts": rollouts,
            "eval_every": 0,
            "checkpoint_every": timesteps,
            "env_kwargs": {"num_players": players},
        },
    )
    ppo.make_vec_env = make_vec_env
    try:
        with tempfile.TemporaryDirectory() as folder:
            ppo.train(config, Path(folder) / "run", seed=seed, progress_bar=False, final_eval=False)
    finally:
        ppo.make_vec_env = build
    start, end = window["ticks"], window["end_ticks"]
    learner = (end.get(os.getpid(), 0) - start.get(os.getpid(), 0)) / TICKS
    workers = sum(ticks - start.get(pid, 0) for pid, ticks in end.items() if pid != os.getpid()) / TICKS
    wall = window["end"] - window["start"]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return {
        "players": players,
        "rollouts": rollouts,
        "n_envs": config["n_envs"],
        "timesteps": timesteps,
        "wall_seconds": round(wall, 2),
        "timesteps_per_second": round(timesteps / wall, 1),
        "cpu_seconds_trainer": round(learner, 2),
        "cpu_seconds_env_workers": round(workers, 2),
        "busy_cores": round((learner + workers) / wall, 3),
        "cores": cores,
        "share_of_cores": round((learner + workers) / wall / cores, 3),
        "load_1min": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6], help="table sizes (default: 2 3 4 5 6)")
    parser.add_argument(
        "--rollouts",
        nargs="+",
        choices=["async", "lockstep"],
        default=["async", "lockstep"],
        help="rollout modes to compare (default: async lockstep; the kit trains with async)",
    )
    parser.add_argument("--timesteps", type=int, default=2048, help="training timesteps per row (default: 2048, two updates)")
    parser.add_argument("--seed", type=int, default=0, help="training seed (default: 0)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    if args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1, got {args.timesteps}")
    if bad := [n for n in args.players if not 2 <= n <= 6]:
        parser.error(f"--players: Thin Ice seats 2 to 6 players, got {bad[0]}")
    if not Path("/proc/self/stat").exists():
        parser.error("this benchmark reads CPU times from /proc (Linux)")

    rows = []
    print("| players | rollouts | timesteps/s | wall | CPU: trainer + env workers | busy cores | of the cores | load |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for players in args.players:
        for rollouts in args.rollouts:
            row = measure(players, rollouts, args.timesteps, args.seed)
            rows.append(row)
            print(
                f"| {players} | {rollouts} | {row['timesteps_per_second']:.0f} | {row['wall_seconds']:.1f} s | "
                f"{row['cpu_seconds_trainer']:.1f} + {row['cpu_seconds_env_workers']:.1f} s | {row['busy_cores']:.2f} | "
                f"{100 * row['share_of_cores']:.0f}% of {row['cores']} | {row['load_1min']:.2f} |",
                flush=True,
            )
    command = "python -m benchmarks.thin_ice_cores " + " ".join(argv if argv is not None else sys.argv[1:])
    write_json(args.json, {"command": command, "rows": rows})


if __name__ == "__main__":
    main()
