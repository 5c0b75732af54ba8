"""The games inside OpenSpiel: random-play throughput beside the PettingZoo env, and OpenSpiel's
own MCTSBot (random rollouts) against its uniform random bot.

    python -m benchmarks.openspiel_games --seconds 5 --mcts-games 20 --simulations 1000 --workers 2

Throughput: states per second of uniformly random play through ``pyspiel`` (``legal_actions``,
``apply_action``, and ``is_terminal`` per state, as an OpenSpiel algorithm's playout does) and
PettingZoo ``env()`` random steps per second (``benchmarks.env_steps``: every ``step`` call, the
dead steps at a game's end included), measured alternately in one run.  MCTS:
``open_spiel.python.algorithms.mcts.MCTSBot`` (UCT constant 2, ``--simulations`` per move,
``RandomRolloutEvaluator`` with one rollout) against ``pyspiel.make_uniform_random_bot``,
``--mcts-games`` games per seat on Fire & Ice; win rate with its 95% Wilson interval and the
MCTS bot's mean seconds per move.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from benchmarks import write_json


def pyspiel_states_per_second(name: str, seconds: float, seed: int) -> float:
    import pyspiel

    import polarzoo.wrappers.openspiel  # noqa: F401

    game = pyspiel.load_game(name)
    rng = np.random.default_rng(seed)
    warm = game.new_initial_state()  # numba loads the compiled masks on first use
    while not warm.is_terminal():
        warm.apply_action(warm.legal_actions()[0])
    states, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            states += 1
    return states / (time.perf_counter() - start)


def pettingzoo_steps_per_second(env_id: str, seconds: float, seed: int) -> float:
    """``env()`` random play (``benchmarks.env_steps``), sized to take about ``seconds``."""
    from benchmarks.env_steps import steps_per_second
    from polarzoo.envs import ENVIRONMENTS

    env_fn = ENVIRONMENTS[env_id].env
    rate = steps_per_second(env_fn, 2000, seed)
    return steps_per_second(env_fn, max(2000, int(rate * seconds)), seed)


def mcts_game(task: tuple[int, int, int]) -> tuple[int, float, float, int]:
    """(mcts seat, game, simulations) -> (mcts seat, mcts return, seconds thinking, mcts moves)."""
    import pyspiel
    from open_spiel.python.algorithms import mcts

    import polarzoo.wrappers.openspiel  # noqa: F401

    seat, game_index, simulations = task
    game = pyspiel.load_game("polarzoo_fire_and_ice")
    rng = np.random.RandomState(1000 * seat + game_index)
    bot = mcts.MCTSBot(game, 2.0, simulations, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    opponent = pyspiel.make_uniform_random_bot(1 - seat, 7919 * game_index + seat)
    state = game.new_initial_state()
    thinking, moves = 0.0, 0
    while not state.is_terminal():
        if state.current_player() == seat:
            start = time.perf_counter()
            action = bot.step(state)
            thinking += time.perf_counter() - start
            moves += 1
        else:
            action = opponent.step(state)
        state.apply_action(action)
    return seat, state.returns()[seat], thinking, moves


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per throughput trial (default: 5)")
    parser.add_argument("--trials", type=int, default=3, help="alternating throughput trials, median reported (default: 3)")
    parser.add_argument("--mcts-games", type=int, default=20, help="MCTS games per seat, 0 = none (default: 20)")
    parser.add_argument("--simulations", type=int, default=1000, help="MCTS simulations per move (default: 1000)")
    parser.add_argument("--workers", type=int, default=1, help="processes for the MCTS games (default: 1)")
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    from polarzoo.baselines.evaluation.tournament import wilson_interval

    report: dict = {"throughput": {}}
    print("| game | pyspiel random play states/s | PettingZoo env() steps/s | ratio |\n|---|---:|---:|---:|")
    for env_id, name in (("fire_and_ice_v0", "polarzoo_fire_and_ice"), ("go_with_the_floe_v0", "polarzoo_go_with_the_floe")):
        spiel, zoo = [], []
        for trial in range(args.trials):
            spiel.append(pyspiel_states_per_second(name, args.seconds, trial))
            zoo.append(pettingzoo_steps_per_second(env_id, args.seconds, trial))
        s, z = statistics.median(spiel), statistics.median(zoo)
        report["throughput"][name] = {"pyspiel_states_per_second": s, "pettingzoo_steps_per_second": z}
        print(f"| {name} | {s:,.0f} | {z:,.0f} | {s / z:.2f} |", flush=True)
    if args.mcts_games:
        tasks = [(seat, game, args.simulations) for seat in (0, 1) for game in range(args.mcts_games)]
        if args.workers > 1:
            with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                results = list(pool.map(mcts_game, tasks))
        else:
            results = [mcts_game(task) for task in tasks]
        wins = sum(r[1] > 0 for r in results)
        by_seat = {seat: sum(r[1] > 0 for r in results if r[0] == seat) for seat in (0, 1)}
        seconds_per_move = sum(r[2] for r in results) / max(sum(r[3] for r in results), 1)
        low, high = wilson_interval(wins, len(results))
        print(
            f"\nMCTSBot ({args.simulations} simulations, random rollouts) vs uniform random, Fire & Ice, "
            f"{args.mcts_games} games per seat: {wins}/{len(results)} = {wins / len(results):.0%} [{low:.0%}, {high:.0%}] "
            f"(as fire {by_seat[0]}/{args.mcts_games}, as ice {by_seat[1]}/{args.mcts_games}); "
            f"{seconds_per_move:.2f} s per MCTS move ({args.workers} worker(s))"
        )
        report["mcts"] = {
            "simulations": args.simulations,
            "games": len(results),
            "wins": wins,
            "by_seat": by_seat,
            "win_rate_ci95": [low, high],
            "seconds_per_move": seconds_per_move,
            "workers": args.workers,
        }
    write_json(args.json, report)


if __name__ == "__main__":
    main()
