"""MCTS simulations per second, with the compiled random playouts (``kernels.playout_winner``)
and with the readable rules' Python playouts, from a few seeded positions of each game.

    python -m benchmarks.mcts --simulations 300 --positions 4
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def simulations_per_second(env_id: str, simulations: int, positions: int, compiled: bool) -> float:
    from polarzoo.baselines.agents import MCTSAgent
    from polarzoo.envs import ENVIRONMENTS

    agent = MCTSAgent(simulations, compiled_rollouts=compiled)
    rates = []
    for seed in range(positions):
        env = ENVIRONMENTS[env_id].raw_env()
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(6 + 2 * seed):  # a few random plies in, so positions differ
            env.step(int(rng.choice(np.flatnonzero(env.legal_action_mask()))))
        start = time.perf_counter()
        agent.act(env, env.agent_selection, rng)
        rates.append(simulations / (time.perf_counter() - start))
    return statistics.median(rates)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulations", type=int, default=300, help="simulations per move (default: 300)")
    parser.add_argument("--positions", type=int, default=4, help="positions per game (default: 4)")
    args = parser.parse_args(argv)
    print("| game | sims/s, Python playouts | sims/s, compiled playouts | speed-up |")
    print("|---|---:|---:|---:|")
    for env_id in ("fire_and_ice_v0", "go_with_the_floe_v0"):
        simulations_per_second(env_id, 20, 1, True)  # load the cached kernels
        python = simulations_per_second(env_id, args.simulations, args.positions, False)
        compiled = simulations_per_second(env_id, args.simulations, args.positions, True)
        print(f"| {env_id} | {python:,.0f} | {compiled:,.0f} | {compiled / python:.1f}x |")


if __name__ == "__main__":
    main()
