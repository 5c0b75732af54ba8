"""Thin Ice at 2-6 players: random play's env steps and placements per second, and a game's length
and time, by table size (more piles: more bodies in the world, though only the pieces in play are
simulated).

    python -m benchmarks.thin_ice_players --games 20 --json docs/results/thin_ice_players.json

Each count plays the same number of seeded games (random agents, default settings) on one core;
the machine's load at the start is recorded beside the numbers (speed depends on it).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from benchmarks import write_json
from polarzoo.envs import thin_ice_v0
from polarzoo.envs.thin_ice import rules


def play(players: int, games: int, seed: int) -> dict[str, float]:
    steps = placements = 0
    lengths = []
    started = time.perf_counter()
    for game in range(games):
        env = thin_ice_v0.raw_env(num_players=players)
        env.reset(seed=seed + game)
        rng = np.random.default_rng(seed + game)
        length = 0
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            action = int(rng.choice(np.flatnonzero(env.legal_action_mask())))
            placements += rules.NUM_CALLS <= action < rules.NUM_CALLS + 3 * env.num_targets
            env.step(action)
            steps += 1
            length += 1
        lengths.append(length)
    seconds = time.perf_counter() - started
    return {
        "players": players,
        "games": games,
        "steps_per_second": steps / seconds,
        "placements_per_second": placements / seconds,
        "ms_per_placement": 1000 * seconds / max(placements, 1),
        "seconds_per_game": seconds / games,
        "mean_length": float(np.mean(lengths)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20, help="seeded random games per table size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args()
    play(2, 1, args.seed + 10_000)  # warm-up: the compiled kernels and MuJoCo's first model
    load = os.getloadavg()[0]
    rows = [play(n, args.games, args.seed) for n in range(2, 7)]
    print(f"Thin Ice random play, {args.games} games per table size, one core (load {load:.2f} at the start)")
    print("| players | steps/s | placements/s | ms a placement | s a game | steps a game |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['players']} | {r['steps_per_second']:.0f} | {r['placements_per_second']:.0f} | "
            f"{r['ms_per_placement']:.1f} | {r['seconds_per_game']:.2f} | {r['mean_length']:.0f} |"
        )
    write_json(args.json, {"machine": platform.processor() or platform.machine(), "load_at_start": load, "rows": rows})


if __name__ == "__main__":
    main()
