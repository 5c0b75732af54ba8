"""The cost of the arena's process protocol per move: a ``proc:`` agent that answers at once
against the same choice made in polarzoo's process (``benchmarks/arena.py``).

    python -m benchmarks.arena --env go_with_the_floe_v0 --moves 2000

Both pick the first legal action; the process agent's time per move includes building the JSON
message (the state, the observation, the legal moves in notation), the pipe both ways and
parsing the reply.  Reported: the median and 95th percentile per move of each, and the overhead.
``--isolated-moves N`` also times an isolated Python agent (``--isolate``: polarzoo's host plays
``random`` on the env the rater pickles and sends each turn).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import write_json
from polarzoo.baselines.agents.process import ProcessAgent, isolated
from polarzoo.envs import ENVIRONMENTS

ANSWER_AT_ONCE = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps({'action': json.loads(line)['legal_actions'][0]}), flush=True)\n"
)


class FirstLegal:
    name = "first-legal"

    def act(self, env, agent, rng):  # noqa: ANN001, ANN201
        return int(np.flatnonzero(env.legal_action_mask())[0])


def times(env_id: str, agent, moves: int) -> list[float]:  # noqa: ANN001
    spent: list[float] = []
    rng = np.random.default_rng(0)
    game = 0
    while len(spent) < moves:
        env = ENVIRONMENTS[env_id].raw_env()
        env.reset(seed=game)
        game += 1
        for name in env.agent_iter():
            if env.terminations[name] or env.truncations[name]:
                env.step(None)
                continue
            started = time.perf_counter()
            action = agent.act(env, name, rng)
            spent.append(time.perf_counter() - started)
            env.step(action)
        if hasattr(agent, "game_over"):
            agent.game_over()
    return spent[:moves]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="go_with_the_floe_v0", choices=sorted(ENVIRONMENTS), help="the game")
    parser.add_argument("--moves", type=int, default=2000, help="moves timed for each agent")
    parser.add_argument("--isolated-moves", type=int, default=0, help="moves timed for an isolated Python agent (0: none)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "answer_at_once.py"
        script.write_text(ANSWER_AT_ONCE)
        process = times(args.env, ProcessAgent([sys.executable, str(script)], move_time=10.0), args.moves)
    local = times(args.env, FirstLegal(), args.moves)
    row = {
        "env": args.env,
        "moves": args.moves,
        "process_median_ms": 1000 * statistics.median(process),
        "process_p95_ms": 1000 * float(np.percentile(process, 95)),
        "in_process_median_ms": 1000 * statistics.median(local),
        "overhead_median_ms": 1000 * (statistics.median(process) - statistics.median(local)),
    }
    if args.isolated_moves:
        hosted = times(args.env, isolated("random", args.env), args.isolated_moves)
        row["isolated_median_ms"] = 1000 * statistics.median(hosted)
        row["isolated_p95_ms"] = 1000 * float(np.percentile(hosted, 95))
        print(
            f"isolated (--isolate) random: median {row['isolated_median_ms']:.3f} ms, p95 {row['isolated_p95_ms']:.3f} ms a move"
        )
    print("| env | moves | proc: median ms | proc: p95 ms | in-process median ms | overhead, median ms |")
    print("|---|---:|---:|---:|---:|---:|")
    print(
        f"| {row['env']} | {row['moves']} | {row['process_median_ms']:.3f} | {row['process_p95_ms']:.3f} | "
        f"{row['in_process_median_ms']:.4f} | {row['overhead_median_ms']:.3f} |"
    )
    write_json(args.json, row)


if __name__ == "__main__":
    main()
