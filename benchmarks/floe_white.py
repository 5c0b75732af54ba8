"""Where a Go with the Floe policy loses as White (bears) against a uniformly random Black.

    python -m benchmarks.floe_white                          # the shipped model, 2,000 games
    python -m benchmarks.floe_white --model runs/<run>/model.zip --games 4000 --endgames 300
    python -m benchmarks.floe_white --endgames 0 --bound-depth 3         # a tighter bound, ~9 min
    python -m benchmarks.floe_white --search-games 2000 --depth 3        # the policy + search, ~8 min
    python -m benchmarks.floe_white --search-games 2000 --first-phase heuristic --endgames 0 --bound-depth 0
    python -m benchmarks.floe_white --curve runs/<run> --games 1000      # White over a run's snapshots

Four measurements (five with ``--search-games``), all against the random seals that
``baselines.evaluate --agents ... random`` plays:

1. **Win rate as White** over many games played at once on the batch core
   (:class:`~polarzoo.envs.batch.GoWithTheFloeBatch`), the policy greedy, with its 95% Wilson
   interval, and the lost games by what was left on the board when Black won.
2. **The endgame**: the first position of each game with one seal left (one bear against one
   seal, Black to move), replayed several times from there with the policy; its win rate by the
   bear-seal king distance at that moment.
3. **Search in the endgame**: on the first ``--endgames`` of those positions, White played by an
   expectimax over the rules against the random seal (1, 2 and 3 White moves deep; a position
   where the bear stands next to the seal with White to move counts as won, any other leaf as
   0.9), beside the policy on the same positions.  The search is the ``search:D`` agent's
   (:mod:`polarzoo.baselines.agents.floe_search`: numba, bitboards, memoised).
4. **What the endgame is worth at best**: for every endgame position, the exact value of White's
   best play against the random seal lies between the expectimax with undecided leaves counted
   as lost and the one with them counted as won (``--bound-depth`` White moves searched).  The
   upper bound, summed over the endgames reached and divided by the games, bounds the win rate
   any endgame play could add to this policy's play before the first capture.
5. With ``--search-games N``: **the policy helped by the search** where it matters, N games: a
   capture chosen by the searched value of the endgame it leaves, the endgame played by the
   expectimax (the deepest ``--depth``).  ``--first-phase heuristic`` plays the moves before the
   first capture by the heuristic bears instead of the policy (each bear closes in on its
   nearest seal).

``--curve RUN`` instead measures only (1), for every snapshot of a training run (its
``snapshots/snapshot_N.zip``, then ``model.zip``), on the same seeded games: White's learning
curve against random, which the training CLI's periodic evaluations (both seats together, 20
games per seat) are too coarse to show.  It writes ``white_curve.csv`` and ``white_curve.png``
into the run folder.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents.floe_search import UNDECIDED_LEAF, best_capture, endgame_arguments, endgame_bound, play_endgame
from polarzoo.baselines.cli.runs import HelpFormatter, prog_name
from polarzoo.envs.go_with_the_floe import rules


class GreedyPolicy:
    """A saved MaskablePPO model of Go with the Floe, greedy on its masked policy, for batches of
    raw observations (B, 8, 8, C), scaled as :class:`polarzoo.wrappers.SingleAgentEnv` scales them
    for the model in training."""

    def __init__(self, path: str) -> None:
        from polarzoo.baselines.policies.weights import load_policy
        from polarzoo.envs.go_with_the_floe.env import observation_space
        from polarzoo.wrappers.single_agent import observation_scale

        model = load_policy(path)  # data only: nothing in the file runs
        space = observation_space()
        size, actions = int(np.prod(model.observation_space.shape)), getattr(model.action_space, "n", None)
        if size != int(np.prod(space.shape)) or actions != rules.NUM_ACTIONS:
            raise ValueError(
                f"this needs a Go with the Floe model ({int(np.prod(space.shape))} observation numbers, "
                f"{rules.NUM_ACTIONS} actions); this one has {size} and {actions}"
            )
        self.policy = model.policy
        self.scale = observation_scale(space)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch

        scaled = observations.reshape(len(observations), -1).astype(np.float32) * self.scale
        with torch.no_grad():
            distribution = self.policy.get_distribution(torch.as_tensor(scaled), action_masks=masks.astype(bool))
            return distribution.distribution.logits.argmax(dim=1).numpy()


def play_out(policy: GreedyPolicy, core: Any, rng: np.random.Generator, on_step: Any = None, refine: Any = None) -> np.ndarray:
    """Play every game of ``core`` to its end (White: ``policy``, Black: random); White's wins.
    ``refine(core, games, actions)`` may overwrite the policy's actions for White's ``games``;
    ``on_step(core, done, won)`` runs after each step (to watch positions go by, or to settle
    games by setting ``done`` and ``won``)."""
    size = core.batch_size
    done = core.winner >= 0
    won = core.winner == rules.WHITE
    white = np.full(size, rules.WHITE, dtype=np.int8)
    while not done.all():
        active = ~done
        actions = core.sample_actions(rng)
        bears_move = np.flatnonzero(active & (core.to_move == rules.WHITE))
        if len(bears_move):
            actions[bears_move] = policy(core.observe(white)[bears_move], core.mask[bears_move])
            if refine is not None:
                refine(core, bears_move, actions)
        actions[done] = 0
        step = core.step(actions, active, auto_reset=False)
        ended = active & step.terminated
        won[ended] = step.winner[ended] == rules.WHITE
        done |= ended
        if on_step is not None:
            on_step(core, done, won)
    return won


def load_positions(core: Any, positions: list[tuple[np.ndarray, np.ndarray, int]]) -> None:
    boards, rings, to_move = zip(*positions)
    core.set_state(board=np.stack(boards), rings=np.stack(rings), to_move=np.array(to_move), passes=0, winner=-1)


def search_endgames(positions: list[tuple[np.ndarray, np.ndarray, int]], depth: int, seed: int) -> float:
    """White's win rate from ``positions`` (the seal to move) with the bear played by expectimax
    ``depth`` White moves deep (undecided leaves :data:`UNDECIDED_LEAF`)."""
    wins = sum(
        play_endgame(*endgame_arguments(board, rings), depth, UNDECIDED_LEAF, seed + k)
        for k, (board, rings, _) in enumerate(positions)
    )
    return wins / len(positions)


def play_with_search(
    policy: GreedyPolicy, core: Any, rng: np.random.Generator, depth: int, first_phase: str = "policy"
) -> np.ndarray:
    """Play every game of ``core`` to its end, White helped by the endgame search: where captures
    are legal, the one whose endgame searches best (``depth`` White moves); once one seal is
    left, the bear played by :func:`play_endgame` (``depth`` moves deep).  Every other move (the
    first phase) by ``policy``, or with ``first_phase="heuristic"`` by the heuristic bears
    (:class:`~polarzoo.baselines.agents.FloeHeuristic`: each bear closes in on its nearest seal,
    no move after which a seal can isolate itself at once).  Black random.  White's wins."""
    if first_phase not in ("policy", "heuristic"):
        raise ValueError(f"first_phase must be 'policy' or 'heuristic', not {first_phase!r}")
    from polarzoo.baselines.agents import FloeHeuristic

    heuristic = FloeHeuristic()

    def choose_captures(core: Any, games: np.ndarray, actions: np.ndarray) -> None:
        for game in games.tolist():
            board = core.board[game]
            legal = np.flatnonzero(core.mask[game])
            capture = best_capture(board, core.rings[game], legal, depth)
            if capture >= 0:
                actions[game] = capture
            elif first_phase == "heuristic":
                state = rules.State(board.copy(), core.rings[game].astype(bool), rules.WHITE, int(core.passes[game]))
                actions[game] = heuristic.choose(state, legal, rng)

    def play_endgames(core: Any, done: np.ndarray, won: np.ndarray) -> None:
        for game in np.flatnonzero(~done & ((core.board == rules.SEAL).sum(axis=1) == 1)).tolist():
            won[game] = play_endgame(
                *endgame_arguments(core.board[game], core.rings[game]), depth, UNDECIDED_LEAF, int(rng.integers(2**31))
            )
            done[game] = True

    return play_out(policy, core, rng, on_step=play_endgames, refine=choose_captures)


def main(argv: list[str] | None = None) -> None:
    from polarzoo.baselines.agents import pretrained_path
    from polarzoo.baselines.agents.registry import model_path

    parser = argparse.ArgumentParser(prog=prog_name("benchmarks.floe_white"), description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--model", default="pretrained", help="a saved model.zip, or 'pretrained' for the shipped one")
    parser.add_argument("--games", type=int, default=2000, help="games as White against random")
    parser.add_argument("--replays", type=int, default=4, help="replays of each endgame position by the policy")
    parser.add_argument("--endgames", type=int, default=500, help="endgame positions played by expectimax (0 = skip)")
    parser.add_argument("--depth", type=int, nargs="+", default=[1, 2, 3], help="expectimax depths (White moves)")
    parser.add_argument(
        "--bound-depth",
        type=int,
        default=2,
        help="White moves searched for the bounds on the exact endgame value (0 = skip; 3 takes ~10x longer)",
    )
    parser.add_argument(
        "--search-games",
        type=int,
        default=0,
        help="games as White with the search added to the policy (captures and endgame; the deepest --depth)",
    )
    parser.add_argument(
        "--first-phase",
        choices=("policy", "heuristic"),
        default="policy",
        help="with --search-games: White's moves before the first capture by the policy or by the heuristic bears",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--curve",
        metavar="RUN",
        default=None,
        help="a training run folder: White's win rate for each of its snapshots (measurement 1 only)",
    )
    args = parser.parse_args(argv)
    for name in ("games", "replays"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.endgames < 0 or args.bound_depth < 0 or args.search_games < 0 or any(d < 1 for d in args.depth):
        parser.error("--endgames, --bound-depth and --search-games must be >= 0 and every --depth >= 1")
    if args.first_phase != "policy" and not args.search_games:
        parser.error("--first-phase only changes the --search-games games: give --search-games N too")
    if args.curve is not None:
        models = run_models(Path(args.curve))
        if not models:
            parser.error(f"--curve {args.curve}: no snapshots/snapshot_N.zip or model.zip in that folder")
        try:
            GreedyPolicy(str(models[0][1]))
        except ValueError as error:
            parser.error(f"--curve {args.curve}: {error}")
        try:
            white_curve(Path(args.curve), models, args.games, args.seed)
        except KeyboardInterrupt:
            print("interrupted: the rows above are complete", file=sys.stderr)
            sys.exit(130)
        return
    try:
        path = str(pretrained_path("go_with_the_floe_v0")) if args.model == "pretrained" else model_path(args.model)
        policy = GreedyPolicy(path)
    except (FileNotFoundError, ValueError) as error:
        parser.error(f"--model {args.model}: {error}")
    import torch

    torch.set_num_threads(1)
    try:
        report(policy, path, args)
    except KeyboardInterrupt:
        print("interrupted: the tables above are complete, the rest was not measured", file=sys.stderr)
        sys.exit(130)


def run_models(run_dir: Path) -> list[tuple[int, Path]]:
    """A run's snapshots by timestep, then its final ``model.zip`` (timestep from training.json)."""
    import json

    models = []
    for path in run_dir.glob("snapshots/snapshot_*.zip"):
        step = path.stem.removeprefix("snapshot_")
        if step.isdigit():
            models.append((int(step), path))
    models.sort()
    final = run_dir / "model.zip"
    if final.is_file():
        try:
            step = int(json.loads((run_dir / "training.json").read_text())["timesteps"])
        except (OSError, ValueError, KeyError, TypeError):
            step = models[-1][0] + 1 if models else 0
        if not models or step > models[-1][0]:
            models.append((step, final))
    return models


def white_curve(run_dir: Path, models: list[tuple[int, Path]], games: int, seed: int) -> None:
    """White's win rate against random for each model (the same seeded games for every one), as
    a table printed row by row, ``white_curve.csv`` and ``white_curve.png`` in ``run_dir``."""
    from polarzoo.baselines.evaluation.tournament import wilson_interval
    from polarzoo.envs.batch import GoWithTheFloeBatch

    rows = []
    print(f"White against random, {games} games per model: {run_dir}\n")
    print("| timesteps | model | wins | win rate [95% CI] |\n|---:|---|---:|---|")
    for step, path in models:
        won = play_out(GreedyPolicy(str(path)), GoWithTheFloeBatch(games), np.random.default_rng(seed))
        low, high = wilson_interval(int(won.sum()), games)
        rows.append((step, path.name, int(won.sum()), games, float(won.mean()), low, high))
        print(f"| {step:,} | {path.name} | {int(won.sum())} | {won.mean():.1%} [{low:.1%}, {high:.1%}] |", flush=True)
    written = []
    try:
        with (run_dir / "white_curve.csv").open("w") as handle:
            handle.write("timesteps,model,wins,games,win_rate,ci_low,ci_high\n")
            handle.writelines(",".join(map(str, row)) + "\n" for row in rows)
        written.append(run_dir / "white_curve.csv")
        from polarzoo.baselines.evaluation.evaluate import plot_win_rate_over_training

        steps, rate, low, high = (np.array([row[i] for row in rows]) for i in (0, 4, 5, 6))

        def draw(ax: Any) -> None:
            ax.plot(steps, rate, marker="o", label="White vs random (greedy)")
            ax.fill_between(steps, low, high, alpha=0.2)

        plot_win_rate_over_training(
            run_dir / "white_curve.png", f"White against random: {run_dir.name}", f"White's win rate ({games} games)", draw
        )
        written.append(run_dir / "white_curve.png")
    except OSError as error:
        print(f"could not write into {run_dir}: {error} (the table above is complete)", file=sys.stderr)
    if written:
        print("\nwritten:\n" + "\n".join(f"  {path}" for path in written))


def report(policy: GreedyPolicy, path: str, args: argparse.Namespace) -> None:
    """Print the measurements' tables, each as soon as it is done."""
    from polarzoo.baselines.evaluation.tournament import wilson_interval
    from polarzoo.envs.batch import GoWithTheFloeBatch

    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()

    # 1. Whole games, and the first position of each with one seal left.
    core = GoWithTheFloeBatch(args.games)
    endgame: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}

    def watch(core: Any, done: np.ndarray, won: np.ndarray) -> None:
        one_seal = np.flatnonzero(~done & ((core.board == rules.SEAL).sum(axis=1) == 1))
        for game in one_seal.tolist():
            if game not in endgame:
                endgame[game] = (core.board[game].copy(), core.rings[game].astype(bool), int(core.to_move[game]))

    won = play_out(policy, core, rng, watch)
    seals_left = (core.board == rules.SEAL).sum(axis=1)
    bears_left = (core.board == rules.BEAR).sum(axis=1)
    low, high = wilson_interval(int(won.sum()), args.games)
    print(f"model: {path}\n")
    print("| games as White | wins | win rate [95% CI] |\n|---:|---:|---|")
    print(f"| {args.games} | {int(won.sum())} | {won.mean():.1%} [{low:.1%}, {high:.1%}] |\n")
    print("| White lost with | games |\n|---|---:|")
    for seals, bears in sorted({(int(s), int(b)) for s, b in zip(seals_left[~won], bears_left[~won])}):
        count = int(((seals_left == seals) & (bears_left == bears) & ~won).sum())
        print(f"| {seals} seal(s), {bears} bear(s) | {count} |")
    print()

    # 2. The endgame, replayed by the policy, by bear-seal distance.
    positions = [endgame[game] for game in sorted(endgame)]
    if not positions:
        print("no game reached one seal against one bear")
        return
    replay = GoWithTheFloeBatch(len(positions) * args.replays)
    load_positions(replay, positions * args.replays)
    replay_won = play_out(policy, replay, rng).reshape(args.replays, len(positions)).mean(axis=0)
    distance = np.array(
        [rules.KING_DISTANCE[np.flatnonzero(b == rules.BEAR)[0], np.flatnonzero(b == rules.SEAL)[0]] for b, _, _ in positions]
    )
    print(f"| endgame: bear-seal distance | positions | policy's win rate ({args.replays} replays each) |\n|---|---:|---:|")
    for low_d, high_d in ((1, 1), (2, 2), (3, 3), (4, 4), (5, 7)):
        chosen = (distance >= low_d) & (distance <= high_d)
        if chosen.any():
            label = str(low_d) if low_d == high_d else f"{low_d}-{high_d}"
            print(f"| {label} | {int(chosen.sum())} | {replay_won[chosen].mean():.1%} |")
    print(f"| all | {len(positions)} | {replay_won.mean():.1%} |\n")

    # 3. Search on the same endgame positions.
    if args.endgames:
        searched = positions[: args.endgames]
        print(f"| endgame player ({len(searched)} positions) | win rate |\n|---|---:|")
        print(f"| policy (greedy, {args.replays} replays) | {replay_won[: len(searched)].mean():.1%} |")
        for depth in args.depth:
            print(f"| expectimax, {depth} White move(s) deep | {search_endgames(searched, depth, args.seed):.1%} |", flush=True)
        print()

    # 4. Bounds on the exact value of every endgame reached: no White player wins more of them.
    if args.bound_depth:
        bounds = np.array(
            [
                [endgame_bound(*endgame_arguments(board, rings), args.bound_depth, leaf) for leaf in (0.0, 1.0)]
                for board, rings, _ in positions
            ]
        )
        lower, upper = bounds.mean(axis=0)
        margin = 1.96 * bounds[:, 1].std() / np.sqrt(len(bounds))
        print(
            f"| exact endgame value, best White play against the random seal ({len(positions)} positions, "
            f"{args.bound_depth} White moves searched) | |\n|---|---:|"
        )
        print(f"| at least (undecided leaves lost) | {lower:.1%} |")
        print(f"| at most (undecided leaves won) | {upper:.1%} (+-{margin:.1%} over positions) |")
        print(
            f"| so White's win rate with this policy before the first capture, at most | {bounds[:, 1].sum() / args.games:.1%} |"
        )

    # 5. The policy with the search added where it matters: the captures and the endgame.
    if args.search_games:
        depth = max(args.depth)
        won = play_with_search(policy, GoWithTheFloeBatch(args.search_games), rng, depth, args.first_phase)
        low, high = wilson_interval(int(won.sum()), args.search_games)
        print(
            f"\n| White: {args.first_phase} + search (captures chosen by the endgame they leave, endgame by expectimax; "
            f"{depth} White moves deep) | wins | win rate [95% CI] |\n|---|---:|---|"
        )
        print(f"| {args.search_games} games | {int(won.sum())} | {won.mean():.1%} [{low:.1%}, {high:.1%}] |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
