"""Multi-agent self-play PPO on Ray RLlib, locally or on a Ray cluster.

    python -m polarzoo.baselines.rllib_train --env fire_and_ice_v0 --iterations 20
    python -m polarzoo.baselines.rllib_train --env go_with_the_floe_v0 --iterations 50 --num-env-runners 8 \\
        --address auto                      # an existing cluster (see README: ray start --head)

``polarzoo-rllib-train`` is the same command (a console script installed with the package).

**One shared policy plays every seat** (self-play): RLlib's ``PettingZooEnv`` gives each agent
its own observation on its turn (the observation is always from the mover's side, so one network
serves both seats), and every seat's transitions, the loser's -1 included, train the same
module.  The module (:class:`BoardRLModule`) is the board network of
:mod:`polarzoo.baselines.policies.networks` (equivariant Fano net for Fire & Ice, mirrored CNN for Go with
the Floe) with RLlib's new API stack; illegal actions get ``log(0)`` logits from the mask.

Prints one line per iteration, saves a checkpoint (``algo.save_to_path``) to
``OUT/checkpoint`` after every iteration, and at the end plays ``--eval-games`` games per seat
against the uniformly random agent with the greedy policy (``OUT/eval.json``).  Needs the
``rllib`` extra: ``pip install torch==2.13.0 && pip install -e ".[rllib]"`` (Ray pins
gymnasium 1.2.2, so keep it in its own venv next to the SB3 one).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.cli.runs import HelpFormatter, add_network_size, atomic_write, prog_name, require_at_least
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.envs import GAMES

#: the games this trainer's self-play setup takes: every game of two seats exactly
TWO_PLAYER_ENVS = tuple(env_id for env_id, info in GAMES.items() if info.players == (2, 2))


def _rl_module_class() -> type:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    from polarzoo.baselines.policies.networks import build_network

    class BoardRLModule(TorchRLModule, ValueFunctionAPI):
        """Action-masking RLModule around a board network.

        ``model_config``: ``board`` (required), ``dim``, ``blocks``, ``symmetrize``.  Reads the
        ``{"observations", "action_mask"}`` observation of :class:`~polarzoo.wrappers.rllib.RLlibObservation`."""

        def setup(self) -> None:
            config: dict[str, Any] = dict(self.model_config or {})  # type: ignore[arg-type]
            space: Any = self.observation_space
            size = int(np.prod(space["observations"].shape))
            self.net = build_network(
                config["board"], size, config.get("dim", 32), config.get("blocks", 3), config.get("symmetrize", True)
            )
            self.value_head = torch.nn.Linear(self.net.latent_dim_vf, 1)

        def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            observation = batch[Columns.OBS]
            logits, latent = self.net(observation["observations"].float())
            masked = logits + torch.clamp(torch.log(observation["action_mask"].float()), min=FLOAT_MIN)
            return {Columns.ACTION_DIST_INPUTS: masked, Columns.EMBEDDINGS: latent}

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            if embeddings is None:
                _, embeddings = self.net(batch[Columns.OBS]["observations"].float())
            return self.value_head(embeddings).squeeze(-1)

    return BoardRLModule


def build_config(
    env_id: str,
    num_env_runners: int,
    seed: int,
    batch_size: int,
    minibatch_size: int,
    epochs: int,
    lr: float,
    model: dict[str, Any],
) -> Any:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from polarzoo.baselines.policies.networks import board_for_env
    from polarzoo.wrappers.rllib import register_env

    name = register_env(env_id)
    spec = RLModuleSpec(module_class=_rl_module_class(), model_config={"board": board_for_env(env_id), **model})
    return (
        PPOConfig()
        # RLlib's env check steps unmasked random actions (an illegal move ends a game): skip it.
        .environment(name, env_config={}, disable_env_checking=True)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"shared": spec}))
        .env_runners(num_env_runners=num_env_runners)
        .training(
            train_batch_size_per_learner=batch_size, minibatch_size=minibatch_size, num_epochs=epochs, lr=lr, entropy_coeff=0.01
        )
        .debugging(seed=seed)
    )


def _episode_progress(every: float, batch_size: int) -> Any:
    """An ``on_episode_end`` callback printing episodes and env steps so far, every ``every`` s."""
    state = {"started": time.perf_counter(), "last": time.perf_counter(), "episodes": 0, "steps": 0}

    def on_episode_end(*, episode: Any = None, **kwargs: Any) -> None:
        state["episodes"] += 1
        state["steps"] += len(episode) if episode is not None else 0
        now = time.perf_counter()
        if every > 0 and now - state["last"] >= every:
            state["last"] = now
            rate = state["steps"] / max(now - state["started"], 1e-9)
            print(
                f"  sampling: {state['episodes']} episodes, {state['steps']:,} env steps ({rate:.0f}/s; an iteration is "
                f"{batch_size:,})",
                flush=True,
            )

    return on_episode_end


def greedy_action(module: Any, observation: dict[str, np.ndarray]) -> int:
    import torch
    from ray.rllib.core.columns import Columns

    batch = {Columns.OBS: {key: torch.as_tensor(value[None]) for key, value in observation.items()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
    logits = np.where(observation["action_mask"] > 0, logits, -np.inf)
    return int(np.argmax(logits))


def evaluate_vs_random(module: Any, env_id: str, games: int, seed: int = 20_000) -> dict[str, Any]:
    """Greedy module vs uniformly random, ``games`` per seat; wins per seat."""
    from polarzoo.envs import ENVIRONMENTS
    from polarzoo.wrappers.rllib import RLlibObservation

    rng = np.random.default_rng(seed)
    wins = {}
    for seat in (0, 1):
        won = 0
        for game in range(games):
            env = RLlibObservation(ENVIRONMENTS[env_id].env())
            env.reset(seed=seed + 1000 * seat + game)
            learner = env.possible_agents[seat]
            for agent in env.agent_iter():
                observation, reward, termination, truncation, info = env.last()
                if termination or truncation:
                    if agent == learner:
                        won += reward > 0
                    env.step(None)
                elif agent == learner:
                    env.step(greedy_action(module, observation))
                else:
                    env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        wins[f"seat_{seat}"] = won
    total = sum(wins.values())
    return {"games_per_seat": games, "wins": wins, "win_rate": total / (2 * games)}


def save_checkpoint(algo: Any, target: Path) -> None:
    """``algo.save_to_path(target)`` whole or not at all: written beside it, then swapped in (a
    Ctrl-C or a kill during the save leaves the previous checkpoint as it was)."""
    import shutil

    temporary, old = target.with_name(target.name + ".tmp"), target.with_name(target.name + ".old")
    shutil.rmtree(temporary, ignore_errors=True)
    algo.save_to_path(str(temporary.resolve()))
    if target.exists():
        target.rename(old)
    temporary.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=prog_name("polarzoo.baselines.rllib_train"), description=__doc__, formatter_class=HelpFormatter
    )
    parser.add_argument("--env", required=True, choices=TWO_PLAYER_ENVS, help="a two-player env id")
    parser.add_argument("--iterations", type=int, default=20, help="PPO iterations")
    parser.add_argument("--num-env-runners", type=int, default=0, help="remote env runners, 0 = sample in the driver")
    parser.add_argument(
        "--address", default=None, help="Ray cluster address (e.g. auto or HOST:6379); default: start a local Ray"
    )
    parser.add_argument(
        "--batch-size", type=int, default=2000, help="env steps per iteration (2,000: about a minute an iteration on 2 cores)"
    )
    parser.add_argument("--minibatch-size", type=int, default=256, help="transitions per gradient step")
    parser.add_argument("--epochs", type=int, default=4, help="passes over each batch")
    parser.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    add_network_size(parser, dim=32, blocks=3)
    parser.add_argument("--eval-games", type=int, default=20, help="games per seat against random at the end")
    parser.add_argument("--seed", type=seed_type, default=0, help="RLlib's seed (env runners and learner)")
    every = "seconds between progress lines inside an iteration (sampling in this process); 0 = none"
    parser.add_argument("--log-every", type=float, default=30.0, help=every)
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: runs/rllib-<env>-<time>)")
    args = parser.parse_args(argv)
    require_at_least(parser, args, 1, "iterations", "batch_size", "minibatch_size", "epochs", "dim", "blocks")
    require_at_least(parser, args, 0, "num_env_runners", "eval_games", "log_every")
    try:
        import ray
    except ImportError:
        parser.error('Ray RLlib is not installed: pip install -e ".[rllib]" (in its own venv: it pins gymnasium 1.2.2)')
    out = args.out or Path("runs") / f"rllib-{args.env}-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    print(f"writing to {out}")
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=max(1, args.num_env_runners + 1), include_dashboard=False, log_to_driver=False)
    print(f"ray: {ray.cluster_resources().get('CPU', 0):.0f} CPUs in the cluster")
    config = build_config(
        args.env,
        args.num_env_runners,
        args.seed,
        args.batch_size,
        args.minibatch_size,
        args.epochs,
        args.lr,
        {"dim": args.dim, "blocks": args.blocks},
    )
    if args.num_env_runners == 0:
        # Sampling happens in this process: a progress line every --log-every seconds inside an
        # iteration (an iteration is --batch-size env steps; on 2 cores about a minute by default).
        config.callbacks(on_episode_end=_episode_progress(args.log_every, args.batch_size))
    algo = config.build_algo()
    history: list[dict[str, Any]] = []
    error = None
    interrupted = False
    steps_before: float = 0
    try:
        for iteration in range(1, args.iterations + 1):
            started = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - started
            runners = result.get("env_runners", {})
            line = {
                "iteration": iteration,
                "seconds": round(seconds, 2),
                "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                "episodes": int(runners.get("num_episodes_lifetime", 0)),
                "episode_len_mean": float(runners.get("episode_len_mean", float("nan"))),
            }
            history.append(line)
            print(
                f"iteration {iteration}: {line['seconds']:.1f} s, {line['env_steps']} env steps, "
                f"{line['episodes']} episodes, mean length {line['episode_len_mean']:.1f}",
                flush=True,
            )
            if line["env_steps"] <= steps_before:
                cpus = ray.cluster_resources().get("CPU", 0)
                error = (
                    f"iteration {iteration} sampled no env steps, so it trained nothing: the likely cause is env runners "
                    f"that could not start or died (--num-env-runners {args.num_env_runners} needs "
                    f"{args.num_env_runners + 1} CPUs, the cluster has {cpus:.0f}); try --num-env-runners 0"
                )
                break
            steps_before = line["env_steps"]
            save_checkpoint(algo, out / "checkpoint")
    except KeyboardInterrupt:
        interrupted = True
        where = f"the last checkpoint is {out / 'checkpoint'}" if (out / "checkpoint").is_dir() else "no checkpoint yet"
        print(f"\ninterrupted; {where} (no evaluation)", flush=True)
    evaluation = {}
    if error is None and not interrupted and args.eval_games and history:
        evaluation = evaluate_vs_random(algo.get_module("shared"), args.env, args.eval_games)
    settings = {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()}
    atomic_write(
        out / "eval.json",
        json.dumps(
            {"config": settings, "iterations": history, "vs_random": evaluation, "error": error, "interrupted": interrupted},
            indent=2,
        ),
    )
    if evaluation:
        print(f"vs random ({args.eval_games} games per seat): win rate {evaluation['win_rate']:.0%} {evaluation['wins']}")
    algo.stop()
    ray.shutdown()
    if error is not None:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
    if interrupted:
        sys.exit(130)
    print(f"checkpoint: {out / 'checkpoint'}; results: {out / 'eval.json'}")


if __name__ == "__main__":
    main()
