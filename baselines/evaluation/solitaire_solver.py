"""Solve Fire & Ice Solitaire deals exactly.

    python -m polarzoo.baselines.solitaire_solver --deals 1000      # fraction solvable, time distribution
    python -m polarzoo.baselines.solitaire_solver --seed 7          # that deal (env.reset(seed=7)) and its solution

``polarzoo-solve`` is the same command (a console script installed with the package).

Deal ``k`` is exactly the board ``FireAndIceSolitaireEnv().reset(seed=k)`` deals.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from polarzoo.baselines.cli import runs
from polarzoo.baselines.cli.progress import progress as progress_bar
from polarzoo.envs.fire_and_ice import render
from polarzoo.envs.fire_and_ice.rules import action_to_notation
from polarzoo.envs.fire_and_ice.solitaire_env import FireAndIceSolitaireEnv
from polarzoo.envs.fire_and_ice.solitaire_solver import solve


def deal_for_seed(seed: int):  # noqa: ANN201 - SolitaireState
    env = FireAndIceSolitaireEnv()
    env.reset(seed=seed)
    assert env.state is not None
    return env.state


def run_deals(num_deals: int, first_seed: int = 0, progress: bool = True) -> dict:
    times, nodes, solvable = [], [], 0
    seeds = range(first_seed, first_seed + num_deals)
    bar = progress_bar(num_deals, "solving", "deal", progress)
    for seed in seeds:
        state = deal_for_seed(seed)
        start = time.perf_counter()
        result = solve(state)
        times.append(time.perf_counter() - start)
        nodes.append(result.nodes)
        solvable += result.solvable
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    ms = np.array(times) * 1000
    return {
        "deals": num_deals,
        "first_seed": first_seed,
        "solvable": solvable,
        "fraction_solvable": solvable / num_deals,
        "time_ms": {
            "median": float(np.median(ms)),
            "p90": float(np.percentile(ms, 90)),
            "p99": float(np.percentile(ms, 99)),
            "max": float(ms.max()),
            "mean": float(ms.mean()),
        },
        "nodes": {"median": float(statistics.median(nodes)), "max": int(max(nodes))},
    }


def _main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=runs.prog_name("polarzoo.baselines.solitaire_solver"), description=__doc__, formatter_class=runs.HelpFormatter
    )
    parser.add_argument("--deals", type=int, default=1000, help="number of deals to solve (seeds first-seed..)")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first deal")
    parser.add_argument("--seed", type=runs.seed, default=None, help="solve only this deal and print it with its solution")
    parser.add_argument("--json", type=Path, default=None, help="also write the summary to this JSON file")
    runs.add_no_progress(parser)
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    if args.seed is not None:
        state = deal_for_seed(args.seed)
        print(render.render_ansi(state.board, f"Deal for seed {args.seed}: 14 Fire, 14 Ice, Fire to move", show_control=False))
        start = time.perf_counter()
        result = solve(state)
        elapsed = (time.perf_counter() - start) * 1000
        if result.solution is None:
            print(f"No solution: proved unsolvable in {elapsed:.1f} ms ({result.nodes} positions).")
        else:
            moves = [action_to_notation(a) for a in result.solution]
            print(f"Solution ({len(moves)} captures, found in {elapsed:.1f} ms, {result.nodes} positions):")
            for i in range(0, len(moves), 8):
                print("  " + "  ".join(f"{i + j + 1}. {m}" for j, m in enumerate(moves[i : i + 8])))
        return
    if args.json:
        runs.writable_folder_or_exit(parser, "--json", args.json.parent)
    summary = run_deals(args.deals, args.first_seed, progress=not args.no_progress)
    t = summary["time_ms"]
    print("| deals | solvable | median ms | p90 ms | p99 ms | max ms | median nodes | max nodes |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {summary['deals']} | {summary['solvable']} ({summary['fraction_solvable']:.1%}) | {t['median']:.2f} | "
        f"{t['p90']:.2f} | {t['p99']:.2f} | {t['max']:.1f} | {summary['nodes']['median']:.0f} | {summary['nodes']['max']} |"
    )
    if args.json:
        try:
            runs.atomic_write(args.json, json.dumps(summary, indent=2))
        except OSError as error:
            print(
                f"error: could not save {args.json} ({error.strerror or error}); the table above is the result", file=sys.stderr
            )
            sys.exit(1)


main = runs.writes_fail_in_one_line(
    runs.ctrl_c_is_one_line(
        _main, "nothing was written (the summary is written when every deal is solved); run the command again"
    )
)


if __name__ == "__main__":
    main()
