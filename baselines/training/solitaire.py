"""Learn Fire & Ice Solitaire from the exact solver: every winning move as a target, then DAgger.

    python -m polarzoo.baselines.solitaire_train --deals 2000 --rounds 3 --out runs/solitaire-train

``polarzoo-solitaire-train`` is the same command (a console script installed with the package).

A reactive policy has to find a 27-move plan, and PPO with shaped rewards clears no deal.  The
solver instead says, for any position, *which* captures keep it winnable.  So:

1. **Demonstrations**: for ``--deals`` seeded deals, walk a winning line (choosing at random among
   the winning captures at each step, for variety) and label every position with the set of all
   its winning captures.
2. **Supervised training** of the board policy (:class:`~polarzoo.baselines.policies.BoardPolicy`,
   ``board="fire_and_ice_solitaire"``, equivariant under the 28,224 symmetries) to put its mass
   on that set: loss ``-log sum_{a winning} p(a)`` over the legal captures.
3. **DAgger rounds** (``--rounds``): play the greedy policy on fresh deals, label every position
   it reaches that is still winnable, add them, train again.  This teaches it to stay on a
   winning path from the positions it actually reaches.

The result is a MaskablePPO model file (``model.zip``, usable by
``python -m polarzoo.baselines.solitaire_eval --model``), with ``train.json`` (per-round data and
success on held-out deals).  Held-out evaluation deals are seeds 100000.. (the same as
``solitaire_eval``); training deals are seeds from ``--seed`` on, far from them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.cli.progress import progress
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    add_network_size,
    add_no_progress,
    add_quick,
    apply_quick,
    atomic_write,
    ctrl_c_is_one_line,
    prog_name,
    require_at_least,
    save_model,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.policies.weights import save_policy
from polarzoo.envs.fire_and_ice import solitaire_rules
from polarzoo.envs.fire_and_ice.rules import NUM_HOLES, NUM_ISLANDS, NUM_POSITIONS
from polarzoo.envs.fire_and_ice.solitaire_env import FireAndIceSolitaireEnv
from polarzoo.envs.fire_and_ice.solitaire_solver import Solver, board_bits

#: positions the solver may expand to decide one capture while labelling
LABEL_BUDGET = 300

EVAL_FIRST_SEED = 100_000


class _OverBudget(Exception):
    pass


class BudgetSolver(Solver):
    """The exact solver with a cap on positions expanded per question.

    Finding a win is fast (move ordering); proving that a position is lost can take the whole
    tree.  A capture whose check runs past the budget is left out of the target set (it is
    still legal): the set holds only proven winning captures.  Results proven so far stay in the
    transposition table, so the questions about one deal get cheaper as they go."""

    def __init__(self, budget: int) -> None:
        super().__init__()
        self.budget = budget
        self._limit = 0

    def solvable(self, own: int, other: int) -> bool:
        if self.nodes > self._limit:
            raise _OverBudget
        return super().solvable(own, other)

    def solvable_within(self, own: int, other: int) -> bool | None:
        self._limit = self.nodes + self.budget
        try:
            return self.solvable(own, other)
        except _OverBudget:
            return None


def winning_captures(solver: BudgetSolver, state: solitaire_rules.SolitaireState) -> np.ndarray:
    """The captures proven to keep the position winnable (empty if none was proven)."""
    own, other = board_bits(state)
    winning = []
    for action in np.flatnonzero(solitaire_rules.legal_action_mask(state)):
        source, target = divmod(int(action), NUM_HOLES)
        if solver.solvable_within(other ^ (1 << target), own ^ (1 << source) ^ (1 << target)):
            winning.append(int(action))
    return np.array(winning, dtype=np.int64)


def observation_of(state: solitaire_rules.SolitaireState) -> np.ndarray:
    board = state.board
    planes = np.stack([board == state.to_move + 1, board == (1 - state.to_move) + 1], axis=-1).astype(np.int8)
    return planes.reshape(NUM_ISLANDS, NUM_POSITIONS, 2)  # the env's observation (island, position, channel)


def labelled_walks(seeds: range, choose: Any) -> tuple[list, list, list, int]:
    """Play each deal with ``choose(state, winning_captures) -> action`` while the position is
    winnable, labelling every position on the way; returns (observations, legal masks, winning
    masks, deals won)."""
    observations, legal, winning = [], [], []
    won = 0
    for seed in seeds:
        env = FireAndIceSolitaireEnv()
        env.reset(seed=seed)
        state, solver = env.state, BudgetSolver(LABEL_BUDGET)
        while not solitaire_rules.is_over(state):
            wins = winning_captures(solver, state)
            if len(wins) == 0:
                break  # lost (or an unsolvable deal, never met so far)
            mask = np.zeros(solitaire_rules.NUM_ACTIONS, dtype=bool)
            mask[wins] = True
            observations.append(observation_of(state).reshape(-1))
            legal.append(solitaire_rules.legal_action_mask(state).astype(bool))
            winning.append(mask)
            state = solitaire_rules.apply(state, choose(state, wins))
        won += solitaire_rules.is_won(state)
    return observations, legal, winning, won


def demonstrations(seeds: range, rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """(observations, legal masks, winning masks) along random winning lines of the given deals."""
    return labelled_walks(seeds, lambda state, wins: int(rng.choice(wins)))[:3]


def greedy_action(model: Any, state: solitaire_rules.SolitaireState) -> int:
    action, _ = model.predict(
        observation_of(state), action_masks=solitaire_rules.legal_action_mask(state).astype(bool), deterministic=True
    )
    return int(action)


def dagger_data(model: Any, seeds: range) -> tuple[list, list, list, int]:
    """Positions the greedy policy reaches (while winnable), labelled; and how many deals it won."""
    return labelled_walks(seeds, lambda state, wins: greedy_action(model, state))


def fit(
    model: Any,
    observations: np.ndarray,
    legal: np.ndarray,
    winning: np.ndarray,
    epochs: int,
    batch_size: int,
    seed: int,
    show_progress: bool = True,
) -> list[float]:
    """Maximise the policy's mass on the winning captures (log of the summed probability)."""
    import torch

    policy = model.policy
    policy.set_training_mode(True)
    optimizer = policy.optimizer
    rng = np.random.default_rng(seed)
    obs_t = torch.as_tensor(observations, dtype=torch.float32)
    legal_t = torch.as_tensor(legal)
    win_t = torch.as_tensor(winning)
    losses = []
    bar = progress(epochs, "supervised epochs", "epoch", show_progress)
    for _ in range(epochs):
        order = rng.permutation(len(observations))
        total = 0.0
        for start in range(0, len(order), batch_size):
            index = torch.as_tensor(order[start : start + batch_size])
            features = policy.extract_features(obs_t[index])
            latent_pi, _ = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~legal_t[index], -1e9)
            log_p = torch.log_softmax(logits, dim=-1)
            loss = -(torch.logsumexp(log_p.masked_fill(~win_t[index], -1e9), dim=-1)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(index)
        losses.append(total / len(order))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{losses[-1]:.3f}")
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    return losses


def success_rate(model: Any, deals: int, first_seed: int = EVAL_FIRST_SEED) -> float:
    won = 0
    for seed in range(first_seed, first_seed + deals):
        env = FireAndIceSolitaireEnv()
        env.reset(seed=seed)
        state = env.state
        while not solitaire_rules.is_over(state):
            state = solitaire_rules.apply(state, greedy_action(model, state))
        won += solitaire_rules.is_won(state)
    return won / deals


def new_model(dim: int, blocks: int, learning_rate: float, seed: int) -> Any:
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.policies.sb3 import BoardPolicy

    env = FireAndIceSolitaireEnv(reward="shaped")
    return MaskablePPO(
        BoardPolicy,
        env,
        learning_rate=learning_rate,
        seed=seed,
        device="cpu",
        policy_kwargs={"board": "fire_and_ice_solitaire", "dim": dim, "blocks": blocks},
    )


def _main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.solitaire_train"), description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--deals", type=int, default=2000, help="deals for the first demonstrations")
    parser.add_argument("--rounds", type=int, default=3, help="DAgger rounds after the first fit")
    parser.add_argument("--dagger-deals", type=int, default=500, help="deals the policy plays per DAgger round")
    parser.add_argument("--epochs", type=int, default=8, help="supervised epochs per round")
    parser.add_argument("--batch-size", type=int, default=256, help="positions per gradient step")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="Adam learning rate")
    add_network_size(parser, dim=64, blocks=4)
    parser.add_argument("--eval-deals", type=int, default=200, help="held-out deals (seeds 100000..) checked per round")
    parser.add_argument("--seed", type=seed_type, default=0, help="training deals are seeds seed*1000000 + 1000 ..")
    parser.add_argument("--out", type=Path, default=Path("runs/solitaire-train"), help="output folder")
    add_no_progress(parser)
    add_quick(
        parser,
        {
            "deals": 40,
            "rounds": 1,
            "dagger_deals": 10,
            "epochs": 2,
            "eval_deals": 20,
            "dim": 16,
            "blocks": 1,
            "out": Path("runs/solitaire-train-quick"),
        },
    )
    args = parser.parse_args(argv)
    apply_quick(parser, args, sys.argv[1:] if argv is None else argv)
    require_at_least(parser, args, 1, "deals", "dagger_deals", "epochs", "batch_size", "dim", "blocks", "eval_deals")
    require_at_least(parser, args, 0, "rounds")
    import torch

    torch.manual_seed(args.seed)
    writable_folder_or_exit(parser, "--out", args.out)
    print(f"writing to {args.out}")
    rng = np.random.default_rng(args.seed)
    first = args.seed * 1_000_000 + 1000
    started = time.perf_counter()
    obs, legal, win = demonstrations(range(first, first + args.deals), rng)
    print(f"demonstrations: {len(obs)} positions from {args.deals} deals in {time.perf_counter() - started:.0f} s")
    model = new_model(args.dim, args.blocks, args.learning_rate, args.seed)
    report: dict[str, Any] = {"config": vars(args) | {"out": str(args.out)}, "rounds": []}
    next_seed = first + args.deals
    for round_index in range(args.rounds + 1):
        losses = fit(
            model,
            np.array(obs),
            np.array(legal),
            np.array(win),
            args.epochs,
            args.batch_size,
            args.seed + round_index,
            show_progress=not args.no_progress,
        )
        rate = success_rate(model, args.eval_deals)
        entry = {
            "round": round_index,
            "positions": len(obs),
            "loss": losses,
            "held_out_success": rate,
            "seconds": time.perf_counter() - started,
        }
        if round_index < args.rounds:
            o, l, w, won = dagger_data(model, range(next_seed, next_seed + args.dagger_deals))
            next_seed += args.dagger_deals
            obs += o
            legal += l
            win += w
            entry["dagger_won"] = won / args.dagger_deals
        report["rounds"].append(entry)
        print(f"round {round_index}: {len(obs)} positions, loss {losses[-1]:.3f}, held-out success {rate:.1%}")
        save_model(model, args.out / "model.zip")
        save_policy(model, args.out / "model.safetensors", env_id="polarzoo/FireAndIceSolitaire-v0")  # weights only, to share
        atomic_write(args.out / "train.json", json.dumps(report, indent=2))
    print(f"model: {args.out / 'model.zip'} (weights only: {args.out / 'model.safetensors'}); report: {args.out / 'train.json'}")


main = writes_fail_in_one_line(
    ctrl_c_is_one_line(
        _main,
        "the model of the last finished round (if any) is in the --out folder (model.zip, model.safetensors); run the command again to train anew",
    ),
    "files are written whole, so nothing half-written is left: make room and run the command again",
)


if __name__ == "__main__":
    main()
