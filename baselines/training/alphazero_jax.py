"""AlphaZero on the JAX twins: self-play with DeepMind's ``mctx`` (Gumbel MuZero search) on the
game's own rules, a small grid network in plain JAX, ``optax``; then play it in PettingZoo.

    python -m polarzoo.baselines.alphazero_jax --env fire_and_ice                  # default run (~25 min, 2 cores)
    python -m polarzoo.baselines.alphazero_jax --env fire_and_ice --iterations 2 --simulations 4   # a smoke run
    python -m polarzoo.baselines.alphazero_jax --resume runs/az-fire_and_ice-20261201-130000
    python -m polarzoo.baselines.evaluate --env fire_and_ice_v0 --agents az-jax:runs/az-.../model.npz heuristic

Each iteration plays ``--games`` self-play games at once for ``--plies`` plies (finished games
restart; positions whose game has not ended by then are not trained on), every move chosen by
Gumbel MuZero search with ``--simulations`` network evaluations on the twin, then trains the
network for ``--epochs`` passes over those positions (policy: the search's improved policy;
value: the game's result for the player to move).  Every ``--eval-every`` iterations the search
plays ``--eval-games`` games against uniformly random play inside JAX (both seats).

The run folder (announced) holds ``config.json``, ``command.txt``, ``checkpoint.npz`` (network,
optimiser, random key, evaluations: written after every iteration, so Ctrl-C or a kill loses at
most the iteration under way; ``--resume`` continues bit for bit on the same machine),
``evaluations.csv``, ``learning_curve.png``, ``model.npz`` + ``model.json`` (the network for
``make_agent("az-jax:PATH")``) and the final evaluation against random and the heuristic in the
PettingZoo env (``eval.json``, ``eval.md``).

The network: each cell of the observation grid (a hole of Fire & Ice's 7 x 7, a square of the
Floe's 8 x 8) is a token; residual blocks mix every token with the means of its row, its column
and the whole grid (for Fire & Ice: the holes of the same island and of the same position, the
two ways a peg moves); the value is read from the pooled tokens; Fire & Ice's move logits are
source-token x destination-token products (plus a pass logit), the Floe's 16 per square.
Needs ``pip install "polarzoo[jax]"`` (and ``[train]`` for the plot and the final evaluation).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.alphazero_jax import AlphaZeroJaxAgent
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    add_network_size,
    add_quick,
    apply_quick,
    atomic_write,
    prog_name,
    require_at_least,
    run_dir_or_exit,
    save_figure,
    writes_fail_in_one_line,
)
from polarzoo.baselines.cli.runs import seed as seed_type
from polarzoo.baselines.evaluation.tournament import head_to_head
from polarzoo.baselines.policies.alphazero_jax import (
    MODEL_FORMAT,
    NetworkConfig,
    forward,
    init_params,
    make_search,
    masked_logits,
    require_jax,
    twin_facts,
    twins,
)
from polarzoo.envs.utils import loads_json, read_json_file

MODULE = "polarzoo.baselines.alphazero_jax"


# ----------------------------------------------------------------------------------- training
@dataclass
class AlphaZeroConfig:
    env: str = "fire_and_ice"
    iterations: int = 25
    games: int = 128
    plies: int = 128
    simulations: int = 16
    learning_rate: float = 1e-3
    minibatch: int = 512
    epochs: int = 2
    dim: int = 32
    blocks: int = 2
    eval_every: int = 5
    eval_games: int = 64
    final_eval_games: int = 50
    seed: int = 0


class Sample(NamedTuple):
    observation: Any
    mask: Any
    policy: Any
    reward: Any  # to the player who moved
    terminated: Any
    live: Any  # the position was a live game


_BUILT: dict[tuple, dict[str, Callable]] = {}
#: The settings that change what :func:`build` compiles (not the budget or the evaluation schedule).
_COMPILED_FIELDS = ("env", "games", "plies", "simulations", "learning_rate", "dim", "blocks", "eval_games")


def build(config: AlphaZeroConfig) -> dict[str, Callable]:
    """The jitted pieces of a run (self-play, an update step, evaluation against random), shared
    by runs with the same compiled settings in one process (a resume compiles nothing again)."""
    signature = tuple(getattr(config, name) for name in _COMPILED_FIELDS)
    if signature not in _BUILT:
        _BUILT[signature] = _build(config)
    return _BUILT[signature]


def _build(config: AlphaZeroConfig) -> dict[str, Callable]:
    jax, jnp = require_jax()
    import optax

    from polarzoo.envs import jax_envs

    env = jax_envs.make(config.env)
    net = NetworkConfig(config.env, config.dim, config.blocks)
    search = make_search(env, net, config.simulations)
    greedy_search = make_search(env, net, config.simulations, gumbel_scale=0.0)
    optimiser = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(config.learning_rate))
    init_batch = jax.vmap(env.init)
    step_batch = jax.vmap(env.step)
    games = config.games

    @jax.jit
    def selfplay(params, key):
        key, start = jax.random.split(key)
        state = init_batch(jax.random.split(start, games))

        def ply(carry, _):
            state, key = carry
            key, search_key, reset_key = jax.random.split(key, 3)
            out = search(params, search_key, state)
            mover = state.current_player
            after = step_batch(state, out.action)
            sample = Sample(
                state.observation,
                state.legal_action_mask,
                out.action_weights,
                after.rewards[jnp.arange(games), mover],
                after.terminated,
                ~state.terminated,
            )
            fresh = init_batch(jax.random.split(reset_key, games))
            done = after.terminated
            state = jax.tree.map(lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b), fresh, after)
            return (state, key), sample

        _, samples = jax.lax.scan(ply, (state, key), None, length=config.plies)

        def back(value, sample):  # ``value``: the result for the player to move after this ply
            target = sample.reward + jnp.where(sample.terminated, 0.0, -value)
            return target, target

        _, targets = jax.lax.scan(back, jnp.zeros(games), samples, reverse=True)
        # A position counts only if its game ended inside this segment.
        resolved = jnp.flip(jnp.cumsum(jnp.flip(samples.terminated, 0), 0), 0) > 0
        weight = (resolved & samples.live).astype(jnp.float32)
        return samples, targets, weight

    def loss_fn(params, observation, mask, policy, target, weight):
        logits, value = forward(net, params, observation)
        logits = masked_logits(logits, mask)
        policy_loss = optax.softmax_cross_entropy(logits, policy)
        value_loss = (value - target) ** 2
        total = weight.sum() + 1e-8
        return ((policy_loss + value_loss) * weight).sum() / total, (
            (policy_loss * weight).sum() / total,
            (value_loss * weight).sum() / total,
        )

    @jax.jit
    def update(params, opt_state, batch):
        (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, *batch)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss, parts

    @jax.jit
    def versus_random(params, key):
        """Search (greedy, player 0) against uniform random play (player 1), ``eval_games`` at
        once for ``plies`` plies (a game still going then counts as not won): (wins as colour
        0, games as colour 0, wins as colour 1, games as colour 1)."""
        n = config.eval_games
        key, start = jax.random.split(key)
        state = init_batch(jax.random.split(start, n))
        first = state.first_player

        def ply(carry, _):
            state, key, won = carry
            key, search_key, random_key = jax.random.split(key, 3)
            ours = greedy_search(params, search_key, state).action
            theirs = jax.vmap(env.random_action)(state, jax.random.split(random_key, n))
            action = jnp.where(state.current_player == 0, ours, theirs)
            after = step_batch(state, action)
            won = won | (after.rewards[:, 0] > 0)
            return (after, key, won), None

        (state, _, won), _ = jax.lax.scan(ply, (state, key, jnp.zeros(n, bool)), None, length=config.plies)
        as_first = first == 0
        return (jnp.sum(won & as_first), jnp.sum(as_first), jnp.sum(won & ~as_first), jnp.sum(~as_first))

    def new_state(key):
        params = init_params(net, key)
        return params, optimiser.init(params)

    return {"selfplay": selfplay, "update": update, "versus_random": versus_random, "new_state": new_state, "net": net}


@dataclass
class Progress:
    iteration: int = 0
    positions: int = 0
    seconds: float = 0.0
    evaluations: list[dict[str, float]] = field(default_factory=list)


def check_config(config: AlphaZeroConfig) -> None:
    """``ValueError`` for a config.json whose values no run could have written."""
    if config.env not in twins():
        raise ValueError(f"env must be one of {sorted(twins())}, got {config.env!r}")
    for name in ("iterations", "games", "plies", "simulations", "minibatch", "epochs", "dim", "blocks", "eval_games"):
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if (
        not isinstance(config.learning_rate, (int, float))
        or not math.isfinite(config.learning_rate)
        or not 0 < config.learning_rate <= 1
    ):
        raise ValueError(f"learning_rate must be in (0, 1], got {config.learning_rate!r}")


def check_checkpoint(blob: Any, config: AlphaZeroConfig) -> None:
    """``ValueError`` for a checkpoint that is not one :func:`save_checkpoint` wrote for ``config``."""
    if not isinstance(blob, dict) or not {"params", "opt_state", "key", "progress"} <= set(blob):
        raise ValueError(f"{CHECKPOINT} lacks the network, the optimiser, the key or the progress")
    Progress(**blob["progress"])
    embed = np.asarray(blob["params"]["embed"])
    if embed.shape[1] != config.dim or not np.all(np.isfinite(embed)):
        raise ValueError(
            f"{CHECKPOINT}'s network does not match config.json (width {embed.shape[1]}, config {config.dim}) "
            "or holds non-finite weights"
        )


#: the run folder's resume point: arrays only (npz read with allow_pickle=False) and the progress as JSON
CHECKPOINT = "checkpoint.npz"


def save_checkpoint(run_dir: Path, params: Any, opt_state: Any, key: Any, progress: Progress) -> None:
    """The network, the optimiser's state, the key and the progress as arrays (no pickle: a run
    folder from someone else is data); their tree structure comes from the config at load."""
    jax, _ = require_jax()
    arrays = {f"params/{i:04d}": np.asarray(leaf) for i, leaf in enumerate(jax.tree_util.tree_leaves(jax.device_get(params)))}
    arrays.update(
        {f"opt/{i:04d}": np.asarray(leaf) for i, leaf in enumerate(jax.tree_util.tree_leaves(jax.device_get(opt_state)))}
    )
    arrays["key"] = np.asarray(jax.device_get(key))
    arrays["progress"] = np.asarray(json.dumps(asdict(progress)))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    atomic_write(run_dir / CHECKPOINT, buffer.getvalue())


def read_checkpoint(run_dir: Path, config: AlphaZeroConfig) -> dict[str, Any]:
    """What :func:`save_checkpoint` wrote, rebuilt on the tree structure of ``config``'s network and
    optimiser; ``ValueError`` (one line) for anything else, a pickle of older versions included."""
    jax, _ = require_jax()
    if not (run_dir / CHECKPOINT).exists() and (run_dir / "checkpoint.pkl").exists():
        raise ValueError(
            "its checkpoint.pkl is a pickle (written by polarzoo 0.1), which is not loaded: "
            "loading a pickle runs code; start the run again"
        )
    with np.load(run_dir / CHECKPOINT, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    params, opt_state = build(config)["new_state"](jax.random.PRNGKey(0))  # the structure (and shapes) to fill

    def filled(template: Any, prefix: str) -> Any:
        leaves, tree = jax.tree_util.tree_flatten(template)
        stored = sorted(name for name in arrays if name.startswith(prefix + "/"))
        if len(stored) != len(leaves):
            raise ValueError(f"{CHECKPOINT} holds {len(stored)} {prefix} arrays; config.json's network has {len(leaves)}")
        for name, leaf in zip(stored, leaves):
            if arrays[name].shape != np.shape(leaf):
                raise ValueError(
                    f"{CHECKPOINT}'s {name} has shape {arrays[name].shape}; config.json's network needs {np.shape(leaf)}"
                )
        return jax.tree_util.tree_unflatten(tree, [jax.numpy.asarray(arrays[name]) for name in stored])

    if "key" not in arrays or "progress" not in arrays:
        raise ValueError(f"{CHECKPOINT} lacks the key or the progress")
    progress = loads_json(str(arrays["progress"]), what=f"{CHECKPOINT} progress")
    if not isinstance(progress, dict):
        raise ValueError(f"{CHECKPOINT}: damaged progress")
    blob = {"params": filled(params, "params"), "opt_state": filled(opt_state, "opt"), "key": arrays["key"], "progress": progress}
    check_checkpoint(blob, config)
    return blob


def export_model(path: Path, config: AlphaZeroConfig, params: Any) -> None:
    """``model.npz`` (flat ``a/b`` keys) and ``model.json`` (how to rebuild the network)."""
    jax, _ = require_jax()
    flat = {
        "/".join(str(getattr(k, "key", k)) for k in key_path): np.asarray(value)
        for key_path, value in jax.tree_util.tree_flatten_with_path(jax.device_get(params))[0]
    }
    temporary = path.with_name(path.stem + ".tmp.npz")
    np.savez(temporary, **flat)  # type: ignore[arg-type]
    os.replace(temporary, path)
    meta = {
        "env": config.env,
        "dim": config.dim,
        "blocks": config.blocks,
        "simulations": config.simulations,
        "format": MODEL_FORMAT,
    }
    atomic_write(path.with_suffix(".json"), json.dumps(meta, indent=2).encode())


def write_curve(run_dir: Path, evaluations: list[dict[str, float]]) -> None:
    with open(run_dir / "evaluations.csv.tmp", "w", newline="") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["iteration", "positions", "minutes", "win_rate", "win_rate_first", "win_rate_second"]
        )
        writer.writeheader()
        writer.writerows(evaluations)
    os.replace(run_dir / "evaluations.csv.tmp", run_dir / "evaluations.csv")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if not evaluations:
        return
    fig, ax = plt.subplots(figsize=(6, 3.5))
    minutes = [e["minutes"] for e in evaluations]
    for key, label in (("win_rate", "both seats"), ("win_rate_first", "moving first"), ("win_rate_second", "moving second")):
        ax.plot(minutes, [e[key] for e in evaluations], marker="o", label=label)
    ax.set_xlabel("training minutes")
    ax.set_ylabel("win rate vs random")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"AlphaZero (mctx) on the JAX twin: {run_dir.name}")
    save_figure(fig, run_dir / "learning_curve.png")


def train(
    config: AlphaZeroConfig, run_dir: Path, resume: dict[str, Any] | None = None, log: Callable[[str], None] = print
) -> Progress:
    """Run (or continue) training into ``run_dir``; returns the progress reached."""
    jax, _ = require_jax()
    parts = build(config)
    if resume is None:
        key = jax.random.PRNGKey(config.seed)
        key, init_key = jax.random.split(key)
        params, opt_state = parts["new_state"](init_key)
        progress = Progress()
    else:
        params, opt_state = resume["params"], resume["opt_state"]
        key = jax.numpy.asarray(resume["key"])
        progress = Progress(**resume["progress"])
    started = time.perf_counter() - progress.seconds
    session_start, first_iteration = time.perf_counter(), progress.iteration
    while progress.iteration < config.iterations:
        key, play_key, eval_key = jax.random.split(key, 3)
        samples, targets, weight = parts["selfplay"](params, play_key)
        flat = [
            np.asarray(a).reshape(-1, *a.shape[2:]) for a in (samples.observation, samples.mask, samples.policy, targets, weight)
        ]
        resolved = np.flatnonzero(flat[4] > 0)  # positions whose game ended inside the segment
        flat = [a[resolved] for a in flat]
        count = len(resolved)
        losses = []
        order_rng = np.random.default_rng([config.seed, progress.iteration])
        for _ in range(config.epochs):
            order = order_rng.permutation(count)
            for start in range(0, count, config.minibatch):
                rows = order[start : start + config.minibatch]
                if len(rows) < config.minibatch:  # a full minibatch (one compiled shape): top up at random
                    rows = np.concatenate([rows, order_rng.choice(count, config.minibatch - len(rows))])
                params, opt_state, loss, _ = parts["update"](params, opt_state, tuple(a[rows] for a in flat))
                losses.append(float(loss))
        progress.iteration += 1
        progress.positions += count
        progress.seconds = time.perf_counter() - started
        trained = (
            f"loss {np.mean(losses):.3f}"
            if losses
            else (f"no game ended inside the {config.plies}-ply segment, nothing to train on (raise --plies)")
        )
        line = (
            f"iteration {progress.iteration}/{config.iterations}: {progress.positions:,} positions trained, "
            f"{trained}, {progress.seconds / 60:.1f} min"
        )
        if config.eval_every and (progress.iteration % config.eval_every == 0 or progress.iteration == config.iterations):
            won_first, n_first, won_second, n_second = (int(v) for v in parts["versus_random"](params, eval_key))
            entry = {
                "iteration": progress.iteration,
                "positions": progress.positions,
                "minutes": round(progress.seconds / 60, 2),
                "win_rate": (won_first + won_second) / max(1, n_first + n_second),
                "win_rate_first": won_first / max(1, n_first),
                "win_rate_second": won_second / max(1, n_second),
            }
            progress.evaluations.append(entry)
            write_curve(run_dir, progress.evaluations)
            line += (
                f"; vs random: {entry['win_rate']:.0%} (first {entry['win_rate_first']:.0%}, "
                f"second {entry['win_rate_second']:.0%})"
            )
        if progress.iteration < config.iterations:
            per_iteration = (time.perf_counter() - session_start) / (progress.iteration - first_iteration)
            line += f", ETA {per_iteration * (config.iterations - progress.iteration) / 60:.0f} min"
        save_checkpoint(run_dir, params, opt_state, key, progress)
        log(line)
    export_model(run_dir / "model.npz", config, params)
    return progress


# ----------------------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    defaults = AlphaZeroConfig()
    parser = argparse.ArgumentParser(prog=prog_name(MODULE), description=__doc__, formatter_class=HelpFormatter)
    parser.add_argument("--env", choices=sorted(twins()), default=defaults.env, help="which twin to train on")
    parser.add_argument(
        "--resume", type=Path, help="continue a run from its folder (its config.json; --iterations may raise the total)"
    )
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="parent folder of run folders")
    parser.add_argument("--run-name", help="run folder name (default: az-<env>-<time>)")
    parser.add_argument("--seed", type=seed_type, default=defaults.seed, help="training seed")
    parser.add_argument("--iterations", type=int, default=defaults.iterations, help="self-play + training iterations")
    parser.add_argument("--games", type=int, default=defaults.games, help="self-play games played at once")
    parser.add_argument("--plies", type=int, default=defaults.plies, help="plies per self-play segment")
    parser.add_argument("--simulations", type=int, default=defaults.simulations, help="search simulations per move")
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate, help="Adam learning rate")
    parser.add_argument("--minibatch", type=int, default=defaults.minibatch, help="positions per gradient step")
    parser.add_argument("--epochs", type=int, default=defaults.epochs, help="passes over each iteration's positions")
    add_network_size(parser, dim=defaults.dim, blocks=defaults.blocks)
    parser.add_argument(
        "--eval-every",
        type=int,
        default=defaults.eval_every,
        help="iterations between evaluations against random (0 = only at the end)",
    )
    parser.add_argument(
        "--eval-games", type=int, default=defaults.eval_games, help="games per evaluation against random (in JAX)"
    )
    parser.add_argument(
        "--final-eval-games",
        type=int,
        default=defaults.final_eval_games,
        help="games per seat in the final PettingZoo evaluation against random and the heuristic",
    )
    parser.add_argument("--no-final-eval", action="store_true", help="skip the final PettingZoo evaluation")
    add_quick(
        parser,
        {
            "iterations": 2,
            "games": 16,
            "plies": 64,
            "simulations": 4,
            "minibatch": 128,
            "epochs": 1,
            "dim": 16,
            "blocks": 1,
            "eval_every": 1,
            "eval_games": 8,
            "final_eval_games": 2,
        },
    )
    return parser


def _final_evaluation(run_dir: Path, config: AlphaZeroConfig, log: Callable[[str], None]) -> None:
    env_id = twin_facts(config.env)["pettingzoo"]
    ours = AlphaZeroJaxAgent(run_dir / "model.npz", env_id)
    summary: dict[str, Any] = {"agent": ours.name, "games_per_seat": config.final_eval_games, "opponents": {}}
    lines = [f"| {ours.name} vs | wins | draws | losses | win rate | by seat (W-D-L) |", "|---|---:|---:|---:|---:|---|"]
    for opponent_spec in ("random", "heuristic"):
        opponent = make_agent(opponent_spec, env_id)
        result = head_to_head(env_id, ours, opponent, config.final_eval_games, seed=config.seed + 1)
        wins, draws, losses = (sum(seat[i] for seat in result.by_seat.values()) for i in range(3))
        games = wins + draws + losses
        summary["opponents"][opponent_spec] = {
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "win_rate": wins / games,
            "by_seat": result.seat_tallies(),
        }
        seats = ", ".join(f"{seat} {t['wins']}-{t['draws']}-{t['losses']}" for seat, t in result.seat_tallies().items())
        lines.append(f"| {opponent_spec} | {wins} | {draws} | {losses} | {wins / games:.0%} | {seats} |")
        log(f"final evaluation vs {opponent_spec}: {wins}/{games} won ({wins / games:.0%}); by seat (W-D-L): {seats}")
    atomic_write(run_dir / "eval.json", json.dumps(summary, indent=2).encode())
    atomic_write(run_dir / "eval.md", ("\n".join(lines) + "\n").encode())


def _main_writes(argv: list[str] | None = None) -> None:
    # SIGTERM (a scheduler's stop) ends a run like Ctrl-C: the last finished iteration is kept.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    apply_quick(parser, args, sys.argv[1:] if argv is None else argv)
    require_at_least(
        parser, args, 1, "iterations", "games", "plies", "simulations", "minibatch", "epochs", "dim", "blocks", "eval_games"
    )
    require_at_least(parser, args, 0, "eval_every", "final_eval_games")
    if not math.isfinite(args.learning_rate) or not 0 < args.learning_rate <= 1:
        parser.error(f"--learning-rate must be a number in (0, 1], got {args.learning_rate}")
    try:
        require_jax()
    except ImportError as error:
        parser.error(str(error))
    raw = sys.argv[1:] if argv is None else argv
    resume_blob = None
    if args.resume:
        run_dir = args.resume
        try:
            config = AlphaZeroConfig(**read_json_file(run_dir / "config.json", "run config", 1024 * 1024))
            check_config(config)
            if (run_dir / CHECKPOINT).exists() or (run_dir / "checkpoint.pkl").exists():
                resume_blob = read_checkpoint(run_dir, config)
            else:  # stopped before its first iteration ended: nothing to continue, the run starts
                print(f"note: {run_dir} has no finished iteration yet; the run starts from its first", flush=True)
        except Exception as error:  # any damage: name the folder, not the unpickler's internals
            parser.error(f"--resume {run_dir}: not a readable alphazero_jax run folder ({type(error).__name__}: {error})")
        if any(a == "--iterations" or a.startswith("--iterations=") for a in raw):
            config.iterations = args.iterations
    else:
        fields = {name: getattr(args, name) for name in asdict(AlphaZeroConfig()) if hasattr(args, name)}
        config = AlphaZeroConfig(**fields)
        if config.minibatch > config.games * config.plies:
            parser.error(
                f"--minibatch {config.minibatch} is more than an iteration's positions ({config.games} x {config.plies})"
            )
        run_dir = run_dir_or_exit(parser, args.runs, args.run_name, f"az-{config.env}")
        atomic_write(run_dir / "config.json", json.dumps(asdict(config), indent=2))
        atomic_write(run_dir / "command.txt", " ".join([prog_name(MODULE), *raw]) + "\n")
    print(f"run folder: {run_dir}", flush=True)

    def log(line: str) -> None:
        print(line, flush=True)

    try:
        progress = train(config, run_dir, resume_blob, log)
    except KeyboardInterrupt:
        kept = (
            f"{run_dir / CHECKPOINT} keeps the last finished iteration"
            if (run_dir / CHECKPOINT).exists()
            else "no iteration had finished (nothing to keep)"
        )
        print(f"\ninterrupted: {kept}; continue with --resume {run_dir}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        # Straight out: XLA's threads, stopped mid-computation, can abort the interpreter's own
        # exit ("double free or corruption"); every file is already written whole.
        os._exit(130)
    print(f"model: {run_dir / 'model.npz'} ({progress.positions:,} positions, {progress.seconds / 60:.1f} min)", flush=True)
    if not args.no_final_eval and config.final_eval_games:
        try:
            _final_evaluation(run_dir, config, log)
        except KeyboardInterrupt:
            print(f"\ninterrupted during the final evaluation; the model is kept: {run_dir / 'model.npz'}", file=sys.stderr)
            sys.exit(130)


main = writes_fail_in_one_line(
    _main_writes,
    "checkpoints are written whole, so the run folder keeps the last complete one: make room, then continue with --resume RUN_FOLDER",
)


if __name__ == "__main__":
    main()
