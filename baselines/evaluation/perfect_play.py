"""How far from perfect: the games' sizes, what the exact searches prove, and every agent's
accuracy against perfect play.

    polarzoo-perfect size --env go_with_the_floe_v0 --plies 6          # positions by ply, Knuth's estimate
    polarzoo-perfect solve --env go_with_the_floe_v0 --plies 2         # the start and every opening after 1..2 plies
    polarzoo-perfect accuracy --env fire_and_ice_v0 --agents pretrained az:20 --games 20

``accuracy`` plays each agent against ``--opponent`` (seats alternating, two random opening
plies per pair of games, not judged) and, at each of the agent's moves (Fire & Ice: ``--max-empty`` can keep
to fuller boards), asks the exact search whether the
position is won and whether the agent's move keeps the win.  A move in a won position is
*kept* (the position after it is proven lost for the opponent), a *mistake* (proven won for the
opponent) or *undecided* (the node budget ran out).  Outputs go to a run folder: ``games.jsonl``
(one line a game, written as it ends), ``accuracy.json`` and ``accuracy.md``.

The searches: :mod:`polarzoo.envs.go_with_the_floe.solver`, :mod:`polarzoo.envs.fire_and_ice.endgame`;
the agent that plays their proofs: ``oracle`` (:mod:`polarzoo.baselines.agents.oracle`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents.oracle import MAX_EMPTY_HOLES, NODE_LIMIT, in_reach, make_solver
from polarzoo.baselines.agents.registry import make_agent
from polarzoo.baselines.cli.progress import LogProgress
from polarzoo.baselines.cli.progress import progress as progress_bar
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    LineFile,
    add_no_progress,
    atomic_write,
    ctrl_c_is_one_line,
    one_torch_thread,
    prog_name,
    run_dir_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation.tournament import play_game, wilson_interval
from polarzoo.baselines.kits import games_with, kit_of
from polarzoo.envs import game_info
from polarzoo.envs.go_with_the_floe import rules as floe_rules  # the Floe's own size and solve commands
from polarzoo.envs.go_with_the_floe.solver import count_paths, estimate_tree_size, match_value

WIN, LOSS, UNKNOWN = 1, -1, 0


def judge_game(
    env_id: str, actions: list[int], seats: list[int], solver: Any, node_limit: int, max_empty: int, opening: int = 0
) -> dict[str, int]:
    """Replay ``actions`` from the start and judge the moves of the ``seats`` given after the
    first ``opening`` plies (random moves, nobody's): counts of positions in reach, won / lost /
    undecided, and in the won ones the moves kept, the mistakes and the moves left undecided."""
    rules = game_info(env_id).raw_env().rules  # a game with a solver has a rules core (GameInfo.rules_core)
    state = rules.initial_state()
    counts = dict.fromkeys(("moves", "in_reach", "won", "lost", "undecided", "kept", "mistakes", "move_undecided"), 0)
    for ply, action in enumerate(actions):
        mover = state.to_move  # seat 0 plays the colour that moves first (Fire, Black), so seat = colour
        if mover in seats and state.winner < 0 and ply >= opening:
            counts["moves"] += 1
            if in_reach(env_id, state, max_empty):
                counts["in_reach"] += 1
                value = solver.solve(state, node_limit=node_limit).value
                if value == LOSS:
                    counts["lost"] += 1
                elif value == UNKNOWN:
                    counts["undecided"] += 1
                else:
                    counts["won"] += 1
                    child = rules.apply(state, int(action))
                    after = LOSS if child.winner == mover else solver.solve(child, node_limit=node_limit).value
                    key = {LOSS: "kept", WIN: "mistakes", UNKNOWN: "move_undecided"}[after]
                    counts[key] += 1
        rules.apply_inplace(state, int(action))
    return counts


def summarize(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of :func:`judge_game` lines for one agent, the accuracy with its 95% interval and
    the mistakes per game."""
    total = {key: sum(line["counts"][key] for line in lines) for key in lines[0]["counts"]}
    decided = total["kept"] + total["mistakes"]
    low, high = wilson_interval(total["kept"], decided) if decided else (0.0, 1.0)
    return {
        "games": len(lines),
        "score": sum(line["score"] for line in lines) / len(lines),
        **total,
        "accuracy": total["kept"] / decided if decided else None,
        "accuracy_ci95": [low, high],
        "mistakes_per_game": total["mistakes"] / len(lines),
    }


def accuracy_markdown(env_id: str, opponent: str, rows: dict[str, dict[str, Any]], config: dict[str, Any]) -> str:
    title = game_info(env_id).title
    reach = "every position" if config["max_empty"] >= 49 else f"positions with at most {config['max_empty']} empty holes"
    lines = [
        f"# Accuracy against perfect play: {title}",
        "",
        f"Each agent against `{opponent}`, {config['games']} games (seats alternating, 2 random opening plies), seed "
        f"{config['seed']}; judged: the agent's moves in {reach}, {config['node_limit']:,} nodes a search.  A move in a won "
        "position is kept (the position after it is proven lost for the opponent) or a mistake (proven won for the opponent).",
        "",
        "| agent | score vs opponent | moves judged | won | lost | undecided | kept | mistakes | accuracy [95% CI] | mistakes / game |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for name, row in sorted(rows.items(), key=lambda item: -(item[1]["accuracy"] or 0.0)):
        accuracy = (
            "-"
            if row["accuracy"] is None
            else f"{row['accuracy']:.1%} [{row['accuracy_ci95'][0]:.1%}, {row['accuracy_ci95'][1]:.1%}]"
        )
        lines.append(
            f"| `{name}` | {row['score']:.2f} | {row['in_reach']} of {row['moves']} | {row['won']} | {row['lost']} | "
            f"{row['undecided']} | {row['kept']} | {row['mistakes']} | {accuracy} | {row['mistakes_per_game']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.evaluation.perfect_play"), description=__doc__, formatter_class=HelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    size = sub.add_parser("size", help="positions after 0..K plies (every path) and Knuth's estimate of the game tree")
    size.add_argument("--env", choices=["go_with_the_floe_v0"], default="go_with_the_floe_v0")
    size.add_argument("--plies", type=int, default=6, help="count every path this deep (7: about 2 minutes, 535 million paths)")
    size.add_argument("--games", type=int, default=100_000, help="random games for Knuth's estimate")
    size.add_argument("--seed", type=seed_type, default=0)
    solve = sub.add_parser("solve", help="prove the start and every opening after 1..K plies")
    solve.add_argument("--env", choices=["go_with_the_floe_v0"], default="go_with_the_floe_v0")
    solve.add_argument("--plies", type=int, default=2, help="the openings' depth")
    solve.add_argument("--node-limit", type=int, default=20_000_000, help="nodes a position's search may spend")
    solve.add_argument("--table-bits", type=int, default=24, help="the proof table holds 2**BITS positions")
    match = sub.add_parser("match", help="the Floe's match score under perfect play: the start and each first move")
    match.add_argument("--env", choices=["go_with_the_floe_v0"], default="go_with_the_floe_v0")
    match.add_argument("--max-depth", type=int, default=16, help="plies the score search may deepen to")
    match.add_argument("--node-limit", type=int, default=200_000_000, help="nodes a position's search may spend")
    accuracy = sub.add_parser("accuracy", help="every agent's moves judged by the exact search")
    accuracy.add_argument("--env", choices=games_with("solver"), required=True)
    accuracy.add_argument("--agents", nargs="+", required=True, help="agent specs to judge")
    accuracy.add_argument("--opponent", default="heuristic", help="the agent each one plays")
    accuracy.add_argument("--games", type=int, default=20, help="games per agent (even: both seats)")
    accuracy.add_argument("--seed", type=seed_type, default=0)
    accuracy.add_argument("--node-limit", type=int, default=5 * NODE_LIMIT, help="nodes a position's search may spend")
    accuracy.add_argument(
        "--max-empty", type=int, default=MAX_EMPTY_HOLES, help="Fire & Ice: judge positions this empty or fuller"
    )
    accuracy.add_argument("--table-bits", type=int, default=24, help="the proof table holds 2**BITS positions")
    for command in (size, solve, match, accuracy):
        command.add_argument("--runs", type=Path, default=Path("runs"), help="parent folder of the run folder")
        command.add_argument("--run-name", default=None, help="the run folder's name (default: perfect-COMMAND-DATE)")
        add_no_progress(command, lines=True)
    return parser


def _size(args: argparse.Namespace, out: Path) -> None:
    state = floe_rules.initial_state()
    start = time.perf_counter()
    paths, ended = count_paths(state, args.plies)
    counted = time.perf_counter() - start
    estimate = estimate_tree_size(state, games=args.games, seed=args.seed)
    result = {"env": args.env, "paths": paths, "ended": ended, "count_seconds": counted, "knuth": estimate}
    atomic_write(out / "size.json", json.dumps(result, indent=2) + "\n")
    print("| plies | positions (every path) | games ended there |\n|---:|---:|---:|")
    for k, (n, e) in enumerate(zip(paths, ended, strict=True)):
        print(f"| {k} | {n:,} | {e:,} |")
    print(
        f"Knuth's estimate from {args.games:,} random games: about 10^{estimate['log10_leaves']:.1f} complete games "
        f"(mean random game {estimate['mean_length']:.1f} plies, longest {estimate['max_length']:.0f})"
    )


def _progress(args: argparse.Namespace, total: int, desc: str, unit: str) -> Any:
    """A bar on a terminal, steady lines in a log; ``--no-progress``: steady lines always."""
    if args.no_progress:
        return LogProgress(total, desc, unit)
    return progress_bar(total, desc, unit)


def principal_line(state: Any, max_depth: int, node_limit: int) -> list[int]:
    """The moves of perfect play for the match from ``state`` to the game's end: Black the most
    empty squares it can force, White the fewest it can leave Black."""
    line: list[int] = []
    while state.winner < 0:
        value = match_value(state, max_depth, node_limit)
        if not value.exact or value.move < 0:
            break
        line.append(value.move)
        state = floe_rules.apply(state, value.move)
    return line


def _match(args: argparse.Namespace, out: Path) -> None:
    start = floe_rules.initial_state()
    began = time.perf_counter()
    root = match_value(start, args.max_depth, args.node_limit)
    line = principal_line(start, args.max_depth, args.node_limit) if root.exact else []
    names, state = [], start
    for action in line:
        names.append(floe_rules.action_to_notation(action, state))
        state = floe_rules.apply(state, action)
    shown = root.score if root.exact else f"between {root.low} and {root.high}"
    print(f"the start: Black's score under perfect play {shown} (depth {root.depth}, {root.nodes:,} nodes); "
          f"a perfect game: {' '.join(names) or '-'} ({len(line)} plies)")  # fmt: skip
    first_moves = []
    bar = _progress(args, len(floe_rules.legal_actions(start)), "first moves", "move")
    for action in floe_rules.legal_actions(start):
        value = match_value(floe_rules.apply(start, int(action)), args.max_depth, args.node_limit)
        first_moves.append({"move": floe_rules.action_to_notation(int(action), start), "score": value.score, "low": value.low,
                            "high": value.high, "depth": value.depth, "nodes": value.nodes})  # fmt: skip
        bar.update(1)
    bar.close()
    result = {
        "env": args.env,
        "score": root.score,
        "bounds": [root.low, root.high],
        "depth": root.depth,
        "nodes": root.nodes,
        "perfect_game": names,
        "first_moves": first_moves,
        "seconds": round(time.perf_counter() - began, 1),
        "command": "python -m polarzoo.baselines.evaluation.perfect_play match "
        f"--max-depth {args.max_depth} --node-limit {args.node_limit}",
    }
    atomic_write(out / "match.json", json.dumps(result, indent=2) + "\n")
    for row in sorted(first_moves, key=lambda r: -(r["score"] if r["score"] is not None else r["low"])):
        score = row["score"] if row["score"] is not None else f"[{row['low']}, {row['high']}]"
        print(f"  {row['move']}: {score} ({row['nodes']:,} nodes)")
    print(f"written: {out / 'match.json'} ({result['seconds']} s)")


def _solve(args: argparse.Namespace, out: Path) -> None:
    solver = make_solver(args.env, args.table_bits)
    rules = floe_rules
    start = rules.initial_state()
    root = solver.solve_within(start, node_limit=args.node_limit)  # the shortest win
    print(
        f"the start: {rules.COLOUR_NAMES[root.winner] if root.winner >= 0 else 'undecided'} wins with perfect play "
        f"(proved at depth {root.depth}, {root.nodes:,} nodes, {root.seconds:.1f} s; a winning move: "
        f"{rules.action_to_notation(root.move, start) if root.move >= 0 else '-'})"
    )
    levels: list[dict[str, Any]] = []
    frontier: dict[tuple[int, ...], Any] = {(): start}
    for ply in range(1, args.plies + 1):
        nxt: dict[tuple, Any] = {}
        for line, state in frontier.items():
            if state.winner >= 0:
                continue
            for action in rules.legal_actions(state):
                nxt[(*line, int(action))] = rules.apply(state, int(action))
        frontier = nxt
        bar = _progress(args, len(frontier), f"ply {ply}", "position")
        wins = [0, 0]
        undecided, nodes, seconds = 0, 0, 0.0
        first_moves: dict[str, int] = {}
        for line, state in frontier.items():
            proof = solver.solve(state, node_limit=args.node_limit)
            nodes, seconds = nodes + proof.nodes, seconds + proof.seconds
            if proof.winner >= 0:
                wins[proof.winner] += 1
            else:
                undecided += 1
            if ply == 1:
                first_moves[rules.action_to_notation(line[0], start)] = proof.winner
            bar.update(1)
        bar.close()
        level: dict[str, Any] = {"plies": ply, "positions": len(frontier), "black_wins": wins[0], "white_wins": wins[1]}
        level.update({"undecided": undecided, "nodes": nodes, "seconds": seconds})
        if first_moves:
            level["first_moves"] = {move: rules.COLOUR_NAMES[w] if w >= 0 else "undecided" for move, w in first_moves.items()}
        levels.append(level)
        print(
            f"after {ply} plies: {len(frontier):,} openings (every path), Black wins {wins[0]:,}, White wins {wins[1]:,}, "
            f"undecided {undecided:,}; {nodes:,} nodes, {seconds:.1f} s"
        )
    result = {
        "env": args.env,
        "start": {"winner": rules.COLOUR_NAMES[root.winner] if root.winner >= 0 else None, "depth": root.depth},
        "start_nodes": root.nodes,
        "start_move": rules.action_to_notation(root.move, start) if root.move >= 0 else None,
        "openings": levels,
        "node_limit": args.node_limit,
        "table_entries": solver.entries,
    }
    atomic_write(out / "solve.json", json.dumps(result, indent=2) + "\n")


def _accuracy(args: argparse.Namespace, out: Path, parser: argparse.ArgumentParser) -> None:
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be an even number >= 2 (both seats), got {args.games}")
    try:
        agents = {spec: make_agent(spec, args.env) for spec in args.agents}
        opponent = make_agent(args.opponent, args.env)
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    solver = make_solver(args.env, args.table_bits)
    config = {key: getattr(args, key) for key in ("env", "agents", "opponent", "games", "seed", "node_limit", "max_empty")}
    atomic_write(out / "config.json", json.dumps(config, indent=2) + "\n")
    log = LineFile(out / "games.jsonl")
    lines: dict[str, list[dict[str, Any]]] = {spec: [] for spec in agents}
    bar = _progress(args, len(agents) * args.games, "judging", "game")
    try:
        for spec, agent in agents.items():
            for game in range(args.games):
                seat = game % 2
                lineup = [agent, opponent] if seat == 0 else [opponent, agent]
                seed = args.seed + game // 2  # a pair of games shares its opening, seats swapped
                # the kit's random opening plies, not judged: nobody chose them
                plies = kit_of(args.env).opening_plies
                record = play_game(args.env, lineup, seed, opening=(seed, plies))
                counts = judge_game(args.env, record.actions, [seat], solver, args.node_limit, args.max_empty, plies)
                line = {"agent": spec, "game": game, "seat": seat, "seed": seed, "score": record.scores[seat], "counts": counts}
                line["actions"] = record.actions
                log.add(json.dumps(line))
                lines[spec].append(line)
                bar.update(1)
    finally:
        log.close()
        bar.close()
    rows = {spec: summarize(found) for spec, found in lines.items()}
    result = {"config": config, "agents": rows, "table_entries": solver.entries}
    atomic_write(out / "accuracy.json", json.dumps(result, indent=2) + "\n")
    text = accuracy_markdown(args.env, args.opponent, rows, config)
    atomic_write(out / "accuracy.md", text)
    print(text)


def _main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "plies", 1) < 1:
        parser.error(f"--plies must be at least 1, got {args.plies}")
    for option in ("node_limit", "games", "table_bits", "max_depth"):
        if getattr(args, option, 1) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1, got {getattr(args, option)}")
    if not 0 <= getattr(args, "max_empty", 0) <= 49:
        parser.error(f"--max-empty must be in 0..49 (Fire & Ice has 49 holes), got {args.max_empty}")
    if not 10 <= getattr(args, "table_bits", 20) <= 30:
        parser.error(f"--table-bits must be in 10..30, got {args.table_bits}")
    out = run_dir_or_exit(parser, args.runs, args.run_name, f"perfect-{args.command}")
    print(f"run folder: {out}", file=sys.stderr)
    one_torch_thread()
    if args.command == "size":
        _size(args, out)
    elif args.command == "solve":
        _solve(args, out)
    elif args.command == "match":
        _match(args, out)
    else:
        _accuracy(args, out, parser)


main = writes_fail_in_one_line(
    ctrl_c_is_one_line(_main, "the games judged so far are in the run folder's games.jsonl; run the command again for the table"),
    "files are written whole (games.jsonl up to its last whole line): make room and run the command again",
)


if __name__ == "__main__":
    main()
