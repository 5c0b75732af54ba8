"""Seconds per move of agents (is it fast enough to play against a person?), on one core.

Each agent plays ``--games`` seeded games against ``--opponent``, in both seats alternately; every
one of its own ``act`` calls is timed (the opponent's are not).  Reported per agent: moves timed,
median, 95th percentile and slowest move in milliseconds.  Torch runs on one thread.

    python -m benchmarks.move_time --env thin_ice_v0 --agents pretrained search:4 vsearch:4 --games 10
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import write_json


def move_times(env_id: str, spec: str, opponent_spec: str, games: int, seed: int = 0) -> list[float]:
    """Seconds of each ``act`` call of ``spec``'s agent in ``games`` seeded games against ``opponent_spec``."""
    from polarzoo.baselines.agents import make_agent
    from polarzoo.envs import ENVIRONMENTS

    agent, opponent = make_agent(spec, env_id), make_agent(opponent_spec, env_id)
    times: list[float] = []
    for game in range(games):
        env = ENVIRONMENTS[env_id].raw_env()
        env.reset(seed=seed + game)
        rng = np.random.default_rng(seed + game)
        mine = env.possible_agents[game % len(env.possible_agents)]
        for name in env.agent_iter():
            if env.terminations[name] or env.truncations[name]:
                env.step(None)
                continue
            if name == mine:
                start = time.perf_counter()
                action = agent.act(env, name, rng)
                times.append(time.perf_counter() - start)
            else:
                action = opponent.act(env, name, rng)
            env.step(int(action))
    return times


def summary(times: list[float]) -> dict[str, Any]:
    ms = np.asarray(times) * 1000.0
    return {
        "moves": len(ms),
        "median_ms": float(np.median(ms)),
        "p95_ms": float(np.percentile(ms, 95)),
        "max_ms": float(ms.max()),
    }


def main(argv: list[str] | None = None) -> None:
    from polarzoo.envs import ENVIRONMENTS

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.move_time", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", required=True, choices=sorted(ENVIRONMENTS), help="the game")
    parser.add_argument("--agents", nargs="+", required=True, help="agent specs to time")
    parser.add_argument("--opponent", default="heuristic", help="agent spec they play against (default: heuristic)")
    parser.add_argument("--games", type=int, default=10, help="seeded games per agent, seats alternating (default: 10)")
    parser.add_argument("--seed", type=int, default=0, help="first game seed (default: 0)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    rows = {}
    print(f"{args.env}: seconds per move against {args.opponent}, {args.games} games per agent, one core")
    print("| agent | moves | median ms | 95th percentile ms | slowest ms |")
    print("|---|---:|---:|---:|---:|")
    for spec in args.agents:
        try:
            times = move_times(args.env, spec, args.opponent, args.games, args.seed)
        except (ValueError, FileNotFoundError) as error:
            sys.exit(f"{spec}: {error}")
        rows[spec] = row = summary(times)
        print(f"| {spec} | {row['moves']} | {row['median_ms']:.1f} | {row['p95_ms']:.1f} | {row['max_ms']:.1f} |", flush=True)
    write_json(args.json, {"env": args.env, "opponent": args.opponent, "games": args.games, "seed": args.seed, "agents": rows})


if __name__ == "__main__":
    main()
