"""Where a Go with the Floe policy loses as White (bears) against a uniformly random Black.

    python -m benchmarks.floe_white                          # the shipped model, 2,000 games
    python -m benchmarks.floe_white --model runs/<run>/model.zip --games 4000 --endgames 300

Three measurements, all against the random seals that ``baselines.evaluate --agents ... random``
plays:

1. **Win rate as White** over many games played at once on the batch core
   (:class:`~polarzoo.envs.batch.GoWithTheFloeBatch`), the policy greedy, with its 95% Wilson
   interval, and the lost games by what was left on the board when Black won.
2. **The endgame**: the first position of each game with one seal left (one bear against one
   seal, Black to move), replayed several times from there with the policy; its win rate by the
   bear-seal king distance at that moment.
3. **Search in the endgame**: on the first ``--endgames`` of those positions, White played by an
   expectimax over the rules against the random seal (1 and 2 White moves deep; a position where
   the bear stands next to the seal with White to move counts as won, any other leaf as 0.9),
   beside the policy on the same positions.  How far search gets shows how much of the loss is
   the policy's and how much the game's.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from polarzoo.baselines.runs import HelpFormatter, prog_name
from polarzoo.envs.go_with_the_floe import rules

#: Leaf value of an undecided endgame position in the expectimax (a bear next to the seal with
#: White to move is a capture, so a win: 1.0).
UNDECIDED_LEAF = 0.9


class GreedyPolicy:
    """A saved MaskablePPO model of Go with the Floe, greedy on its masked policy, for batches of
    raw observations (B, 8, 8, C), scaled as :class:`polarzoo.wrappers.SingleAgentEnv` scales them
    for the model in training."""

    def __init__(self, path: str) -> None:
        from sb3_contrib import MaskablePPO

        from polarzoo.envs.go_with_the_floe.env import observation_space
        from polarzoo.wrappers.single_agent import observation_scale

        model = MaskablePPO.load(path, device="cpu")
        space = observation_space()
        size, actions = int(np.prod(model.observation_space.shape)), getattr(model.action_space, "n", None)
        if size != int(np.prod(space.shape)) or actions != rules.NUM_ACTIONS:
            raise ValueError(f"this needs a Go with the Floe model ({int(np.prod(space.shape))} observation numbers, "
                             f"{rules.NUM_ACTIONS} actions); this one has {size} and {actions}")
        self.policy = model.policy
        self.scale = observation_scale(space)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch

        scaled = observations.reshape(len(observations), -1).astype(np.float32) * self.scale
        with torch.no_grad():
            distribution = self.policy.get_distribution(torch.as_tensor(scaled), action_masks=masks.astype(bool))
            return distribution.distribution.logits.argmax(dim=1).numpy()


def play_out(policy: GreedyPolicy, core: Any, rng: np.random.Generator, on_step: Any = None) -> np.ndarray:
    """Play every game of ``core`` to its end (White: ``policy``, Black: random); White's wins.
    ``on_step(core, done)`` runs after each step (to watch positions go by)."""
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
        actions[done] = 0
        step = core.step(actions, active, auto_reset=False)
        ended = active & step.terminated
        won[ended] = step.winner[ended] == rules.WHITE
        done |= ended
        if on_step is not None:
            on_step(core, done)
    return won


def load_positions(core: Any, positions: list[tuple[np.ndarray, np.ndarray, int]]) -> None:
    boards, rings, to_move = zip(*positions)
    core.set_state(board=np.stack(boards), rings=np.stack(rings), to_move=np.array(to_move), passes=0, winner=-1)


def _leaf(state: rules.State) -> float | None:
    if state.winner >= 0:
        return 1.0 if state.winner == rules.WHITE else 0.0
    bears, seals = np.flatnonzero(state.board == rules.BEAR), np.flatnonzero(state.board == rules.SEAL)
    if rules.KING_DISTANCE[bears[:, None], seals[None, :]].min() <= 1:
        return 1.0  # White to move captures the last seal
    return None


def expectimax(state: rules.State, depth: int) -> tuple[float, int]:
    """(value, best action) of White to move: the mean over the random seal's replies, ``depth``
    White moves deep."""
    best_value, best_action = -1.0, rules.PASS
    for action in rules.legal_actions(state).tolist():
        after = rules.apply_inplace(state.copy(), action)
        if after.winner >= 0:
            value = 1.0 if after.winner == rules.WHITE else 0.0
        else:
            values = []
            for reply in rules.legal_actions(after).tolist():
                position = rules.apply_inplace(after.copy(), reply)
                leaf = _leaf(position)
                if leaf is None:
                    leaf = UNDECIDED_LEAF if depth == 1 else expectimax(position, depth - 1)[0]
                values.append(leaf)
            value = float(np.mean(values))
        if value > best_value:
            best_value, best_action = value, action
    return best_value, best_action


def search_endgames(positions: list[tuple[np.ndarray, np.ndarray, int]], depth: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    wins = 0
    for board, rings, to_move in positions:
        state = rules.State(board.astype(np.int8), rings.astype(bool), to_move)
        while state.winner < 0:
            if state.to_move == rules.BLACK:
                action = int(rng.choice(rules.legal_actions(state)))
            else:
                action = expectimax(state, depth)[1]
            rules.apply_inplace(state, action)
        wins += state.winner == rules.WHITE
    return wins / len(positions)


def main(argv: list[str] | None = None) -> None:
    from polarzoo.baselines.agents import _model_path, pretrained_path

    parser = argparse.ArgumentParser(prog=prog_name("benchmarks.floe_white"), description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--model", default="pretrained", help="a saved model.zip, or 'pretrained' for the shipped one")
    parser.add_argument("--games", type=int, default=2000, help="games as White against random")
    parser.add_argument("--replays", type=int, default=4, help="replays of each endgame position by the policy")
    parser.add_argument("--endgames", type=int, default=200, help="endgame positions searched by expectimax (0 = skip)")
    parser.add_argument("--depth", type=int, nargs="+", default=[1, 2], help="expectimax depths (White moves)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("games", "replays"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.endgames < 0 or any(d < 1 for d in args.depth):
        parser.error("--endgames must be >= 0 and every --depth >= 1")
    try:
        path = str(pretrained_path("go_with_the_floe_v0")) if args.model == "pretrained" else _model_path(args.model)
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


def report(policy: GreedyPolicy, path: str, args: argparse.Namespace) -> None:
    """Print the three measurements' tables, each as soon as it is done."""
    from polarzoo.baselines.tournament import wilson_interval
    from polarzoo.envs.batch import GoWithTheFloeBatch

    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()

    # 1. Whole games, and the first position of each with one seal left.
    core = GoWithTheFloeBatch(args.games)
    endgame: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}

    def watch(core: Any, done: np.ndarray) -> None:
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
    distance = np.array([rules.KING_DISTANCE[np.flatnonzero(b == rules.BEAR)[0], np.flatnonzero(b == rules.SEAL)[0]]
                         for b, _, _ in positions])
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
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
