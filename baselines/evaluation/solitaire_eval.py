"""Fire & Ice Solitaire: random policy vs a trained MaskablePPO policy vs the exact solver.

    python -m polarzoo.baselines.solitaire_eval --timesteps 100000 --deals 200

``polarzoo-solitaire-eval`` is the same command (a console script installed with the package).

Trains MaskablePPO on ``polarzoo/FireAndIceSolitaire-v0`` (shaped reward: 1/27 per capture plus
1 for clearing the board), then plays the same seeded deals with a uniformly random legal
policy, the trained policy (greedy), and the solver's line, and reports the success rate with a
95% Wilson interval and the mean number of pegs left.  Writes ``solitaire.json`` and the model
to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import SOLITAIRE_PRETRAINED
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    atomic_write,
    ctrl_c_is_one_line,
    prog_name,
    save_model,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation.tournament import wilson_interval
from polarzoo.baselines.policies.weights import ModelFileError, load_policy, save_policy
from polarzoo.envs.fire_and_ice.solitaire_env import FireAndIceSolitaireEnv
from polarzoo.envs.fire_and_ice.solitaire_solver import solve

Policy = Callable[[FireAndIceSolitaireEnv, np.ndarray, np.random.Generator], int]


def random_policy(env: FireAndIceSolitaireEnv, observation: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


class SolverPolicy:
    """Solves each deal once, then plays the winning line (any capture when there is none)."""

    def __init__(self) -> None:
        self._plans: dict[int, list[int]] = {}

    def __call__(self, env: FireAndIceSolitaireEnv, observation: np.ndarray, rng: np.random.Generator) -> int:
        assert env.state is not None
        if env.state.captures == 0 or id(env) not in self._plans:
            self._plans = {id(env): list(solve(env.state).solution or [])}
        plan = self._plans[id(env)]
        return plan.pop(0) if plan else random_policy(env, observation, rng)


def play(policy: Policy, deals: int, first_seed: int) -> dict[str, Any]:
    successes, pegs_left = 0, []
    rng = np.random.default_rng(first_seed)
    for seed in range(first_seed, first_seed + deals):
        env = FireAndIceSolitaireEnv()
        observation, info = env.reset(seed=seed)
        terminated = False
        while not terminated:
            observation, _, terminated, _, info = env.step(policy(env, observation, rng))
        successes += info["is_success"]
        pegs_left.append(info["pegs_left"])
    low, high = wilson_interval(successes, deals)
    return {
        "deals": deals,
        "solved": successes,
        "success_rate": successes / deals,
        "ci95": [low, high],
        "mean_pegs_left": float(np.mean(pegs_left)),
    }


def _main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.solitaire_eval"), description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--timesteps", type=int, default=100_000, help="MaskablePPO training timesteps")
    parser.add_argument("--deals", type=int, default=200, help="evaluation deals (seeds 100000..)")
    parser.add_argument("--out", type=Path, default=Path("runs/solitaire"), help="output folder")
    parser.add_argument(
        "--seed", type=seed_type, default=0, help="training seed (the evaluation deals are always seeds 100000..)"
    )
    parser.add_argument(
        "--model",
        default=None,
        help="evaluate this saved model instead of training one ('pretrained': the model shipped in the package)",
    )
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, got {args.deals}")
    if args.timesteps < 1:
        parser.error(f"--timesteps must be at least 1, got {args.timesteps}")
    if args.model not in (None, "pretrained") and not Path(args.model).is_file():
        parser.error(f"--model {args.model}: no model file there (give a saved model.zip, or 'pretrained')")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger

    torch.set_num_threads(1)
    started = time.perf_counter()
    if args.model is not None:  # read (and refused) before the output folder is made
        if args.model == "pretrained":
            args.model = SOLITAIRE_PRETRAINED
        try:
            model = load_policy(args.model)  # data only: nothing in the file runs
        except ModelFileError as error:  # a truncated file or not a model: one line naming it
            parser.error(f"--model {error}")
        expected = FireAndIceSolitaireEnv().observation_space.shape
        if model.observation_space.shape != expected:
            parser.error(
                f"--model {args.model}: not a solitaire model (it reads observations of shape "
                f"{model.observation_space.shape}; the solitaire env gives {expected})"
            )
        args.timesteps = int(model.num_timesteps)
    writable_folder_or_exit(parser, "--out", args.out)
    if args.model is None:
        venv = make_vec_env(lambda: FireAndIceSolitaireEnv(reward="shaped"), n_envs=8, seed=args.seed)
        model = MaskablePPO(
            "MlpPolicy",
            venv,
            n_steps=256,
            batch_size=512,
            n_epochs=5,
            learning_rate=3e-4,
            seed=args.seed,
            policy_kwargs={"net_arch": [256, 256]},
            device="cpu",
            verbose=0,
        )
        # No logger set: SB3 would make an empty folder in /tmp on every learn(); this run's
        # numbers go to its report, so the logger writes nowhere.
        model.set_logger(Logger(folder=None, output_formats=[]))
        model.learn(args.timesteps, progress_bar=True)
        save_model(model, args.out / "model.zip")
        save_policy(model, args.out / "model.safetensors", env_id="polarzoo/FireAndIceSolitaire-v0")  # weights only, to share
    seconds = time.perf_counter() - started

    def trained(env: FireAndIceSolitaireEnv, observation: np.ndarray, rng: np.random.Generator) -> int:
        action, _ = model.predict(observation, action_masks=env.action_masks(), deterministic=True)
        return int(action)

    first = 100_000
    results = {
        "random": play(random_policy, args.deals, first),
        "trained": play(trained, args.deals, first),
        "solver": play(SolverPolicy(), args.deals, first),
        "training": {"timesteps": args.timesteps, "seconds": None if args.model else seconds},
    }
    written = True
    try:
        atomic_write(args.out / "solitaire.json", json.dumps(results, indent=2))
    except OSError as error:
        written = False
        print(
            f"warning: cannot write {args.out / 'solitaire.json'} ({error.strerror or error}); the table below is the result",
            file=sys.stderr,
        )
    print("| policy | deals | solved | success rate [95% CI] | mean pegs left |")
    print("|---|---:|---:|---|---:|")
    for name in ("random", "trained", "solver"):
        r = results[name]
        print(
            f"| {name} | {r['deals']} | {r['solved']} | {r['success_rate']:.1%} [{r['ci95'][0]:.1%}, {r['ci95'][1]:.1%}] | "
            f"{r['mean_pegs_left']:.1f} |"
        )
    how = (
        f"loaded {args.model} ({args.timesteps} timesteps)"
        if args.model
        else f"trained for {args.timesteps} timesteps in {seconds:.0f} s"
    )
    print(
        f"\n{how}; " + (f"results in {args.out / 'solitaire.json'}" if written else "nothing was written (see the warning above)")
    )
    if not written:
        sys.exit(1)


main = writes_fail_in_one_line(
    ctrl_c_is_one_line(
        _main,
        "the evaluation is written only when it ends; run the command again (a model it trained is in its --out folder once saved)",
    ),
    "files are written whole, so nothing half-written is left: make room and run the command again",
)


if __name__ == "__main__":
    main()
