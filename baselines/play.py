"""Play and print one seeded game between two random agents.

    python -m polarzoo.baselines.play --env fire_and_ice_v0 --seed 0

``polarzoo-play`` is the same command (a console script installed with the package).
"""

from __future__ import annotations

import argparse

import numpy as np

from polarzoo.envs import ENVIRONMENTS


def play(env_id: str, seed: int, quiet: bool = False) -> dict[str, float]:
    """Play one game with uniformly random legal actions; return each agent's total reward."""
    env = ENVIRONMENTS[env_id].env(render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = {agent: 0.0 for agent in env.possible_agents}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        if not quiet:
            print(f"{agent} plays {env.unwrapped.action_to_notation(action)}")
        env.step(action)
    if not quiet:
        print(env.unwrapped._render_ansi())
        print("rewards:", totals)
    env.close()
    return totals


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="fire_and_ice_v0", choices=sorted(ENVIRONMENTS), help="environment id")
    parser.add_argument("--seed", type=int, default=0, help="seed for the env and the random agents")
    args = parser.parse_args(argv)
    play(args.env, args.seed)


if __name__ == "__main__":
    main()
