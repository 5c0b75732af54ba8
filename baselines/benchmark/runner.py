"""``polarzoo-benchmark``: seeds x algorithms x games under the protocol, then the aggregate.

    python -m polarzoo.baselines.benchmark run --games fire_and_ice_v0 --out runs/benchmark   # short budget, 5 seeds
    python -m polarzoo.baselines.benchmark run --games thin_ice_v0 --algorithms ppo-mlp ppo-board --workers 2
    python -m polarzoo.baselines.benchmark run --address auto ...     # tasks on a running Ray cluster
    python -m polarzoo.baselines.benchmark aggregate --out runs/benchmark

Every run (game, algorithm, seed) has its own folder ``OUT/<budget>/<game>/<algorithm>/seed<k>/``:
``train/`` (the trainer's run folder: checkpoints, ``evaluations.csv``), ``rating/`` (its league
rating, :mod:`polarzoo.baselines.evaluation.league`), ``eval/`` (games against the named
opponents), ``log.txt`` and, last, ``result.json``.  A run with a ``result.json`` is never
trained again (when its game's league has a new version since it was rated, its model is rated
again against the new league, its finished games kept); any other run continues where it stopped (training resumes exactly from its last
checkpoint, the evaluations keep their finished games), so after Ctrl-C or ``kill -9`` the same
command continues.  ``--workers N`` runs N at once in local processes; ``--address`` sends each
run to a Ray cluster as a task (``--address local`` starts a Ray instance on this machine; on a
cluster, ``OUT`` must be a folder every node sees).  The aggregate (``aggregate.md``,
``aggregate.json``, ``profiles.png``, ``curves.png``) is written after the runs, or on its own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

import polarzoo.baselines.benchmark.protocol as protocol
from polarzoo.baselines.agents import make_agent
from polarzoo.baselines.agents.alphazero_jax import AlphaZeroJaxAgent
from polarzoo.baselines.agents.policy import PolicyAgent
from polarzoo.baselines.benchmark.aggregate import aggregate, exploitability_by_seat, read_result
from polarzoo.baselines.cli.runs import (
    HelpFormatter,
    LineFile,
    atomic_write,
    lock_folder_or_exit,
    prog_name,
    writable_folder_or_exit,
    writes_fail_in_one_line,
)
from polarzoo.baselines.evaluation.evaluate import finished_games
from polarzoo.baselines.evaluation.league import load_league
from polarzoo.baselines.evaluation.league_rate import rate
from polarzoo.baselines.evaluation.tournament import game_key, head_to_head, multiplayer_table, wilson_interval
from polarzoo.baselines.kits import kit_of
from polarzoo.baselines.training import alphazero_jax, ppo
from polarzoo.baselines.training.exploit import BestResponse, agent_training_timesteps, exploit_one
from polarzoo.envs import GAMES

MODULE = "polarzoo.baselines.benchmark"


@dataclass(frozen=True)
class RunSpec:
    game: str
    algorithm: str
    seed: int
    budget: str

    def folder(self, out: Path) -> Path:
        return out / self.budget / self.game / self.algorithm / f"seed{self.seed}"

    @property
    def label(self) -> str:
        return f"{self.game} {self.algorithm} seed {self.seed}"


def schedule(games: Sequence[str], algorithms: Sequence[str], seeds: Sequence[int], budget: str) -> list[RunSpec]:
    """The runs of the protocol, seed-major (every algorithm and game gets its first seeds first)."""
    return [
        RunSpec(game, algorithm, seed, budget)
        for seed in seeds
        for game in games
        for algorithm in algorithms
        if protocol.applicable(algorithm, game)
    ]


# ------------------------------------------------------------------------------ one run
def execute(spec: RunSpec, out: str, leagues: str | None = None) -> dict[str, Any]:
    """Train, rate and evaluate one run in its folder (continuing whatever is there); returns
    its ``result.json``.  A top-level function: local worker processes and Ray tasks call it."""
    folder = spec.folder(Path(out))
    done = folder / "result.json"
    stale = read_result(folder, warn=lambda _: None)  # (a damaged one: run_all said so; it is finished again)
    if stale is not None and not rerate_due(spec, Path(out), leagues):
        return stale
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    # One core per run, for the training (PPO_FIXED) and the games alike: a network's sums depend
    # on the thread count, and a run resumed after its training must rate the model as one never stopped.
    import torch

    torch.set_num_threads(1)
    log_path = folder / "log.txt"
    try:
        with log_path.open("a") as log, contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            print(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}: {spec.label}, budget {spec.budget}", flush=True)
            if stale is not None:
                # Rated against an older league: the same model, its finished games kept; only the
                # games the new league's schedule adds are played (as a fresh rating would play them).
                print(
                    f"re-rating against league v{_league(spec.game, leagues).version} (was v{stale.get('league_version')})",
                    flush=True,
                )
                agent, result = _trained_agent(spec, folder / "train"), dict(stale)
            else:
                started = time.perf_counter()
                agent, trained = _train(spec, folder / "train")
                train_seconds = time.perf_counter() - started
                result = {**asdict(spec), **trained, "train_seconds_this_session": round(train_seconds, 1)}
            started = time.perf_counter()
            result.update(_evaluate(spec, agent, folder, leagues))
            # the rating and the win rates (for a re-rating, only the games the new league adds)
            result["evaluation_seconds_this_session"] = round(time.perf_counter() - started, 1)
            print(
                f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}: done: rating {result['rating']:.0f} {result['rating_ci95']}, "
                f"win rates {result['win_rate']}",
                flush=True,
            )
    except OSError:
        if log_path.exists() and log_path.stat().st_size == 0:  # a full disk: no empty log left behind
            log_path.unlink()
        raise
    atomic_write(done, json.dumps(result, indent=2) + "\n")
    return result


def _has_checkpoint(run_dir: Path) -> bool:
    """Whether the training in ``run_dir`` left a checkpoint to resume from.  A kill during the
    very first checkpoint can leave its model without its state (nothing to fall back on): the
    run then starts afresh, as nothing of it was kept."""
    try:
        ppo.read_checkpoint_state(run_dir)
    except ValueError:
        return False
    return True


def _train(spec: RunSpec, run_dir: Path) -> tuple[Any, dict[str, Any]]:
    algorithm = protocol.ALGORITHMS[spec.algorithm]
    settings = protocol.budget_settings(spec.budget, spec.game, algorithm.trainer)
    if algorithm.trainer == "ppo":
        config = protocol.ppo_config(spec.game, spec.algorithm, spec.budget)
        ppo.check_config(config)
        model = run_dir / "model.zip"
        if not model.exists():
            resume = _has_checkpoint(run_dir)
            if not resume:
                _start_afresh(run_dir)
            run_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(run_dir / "config.json", json.dumps(config, indent=2))
            ppo.train(
                config,
                run_dir,
                resume=resume,
                seed=spec.seed,
                progress_bar=False,
                final_eval=False,
                log_every=60,
                again="the same polarzoo-benchmark run command (it resumes this run exactly)",
            )
        stats = json.loads((run_dir / "training.json").read_text()) if (run_dir / "training.json").exists() else {}
        return _trained_agent(spec, run_dir), {"timesteps": config["total_timesteps"], "train_seconds": stats.get("seconds")}
    config = alphazero_jax.AlphaZeroConfig(env=protocol.TWIN_GAMES[spec.game], seed=spec.seed, final_eval_games=0, **settings)
    model = run_dir / "model.npz"
    checkpoint = run_dir / alphazero_jax.CHECKPOINT
    if not model.exists():
        if not checkpoint.exists():
            _start_afresh(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(run_dir / "config.json", json.dumps(asdict(config), indent=2))
        saved = alphazero_jax.read_checkpoint(run_dir, config) if checkpoint.exists() else None
        alphazero_jax.train(config, run_dir, saved, log=lambda line: print(line, flush=True))
    with np.load(checkpoint, allow_pickle=False) as data:  # data only: the progress is JSON
        seconds = json.loads(str(data["progress"]))["seconds"]
    return _trained_agent(spec, run_dir), {"iterations": config.iterations, "train_seconds": seconds}


def _model_path(spec: RunSpec, run_dir: Path) -> Path:
    return run_dir / ("model.zip" if protocol.ALGORITHMS[spec.algorithm].trainer == "ppo" else "model.npz")


def _trained_agent(spec: RunSpec, run_dir: Path) -> Any:
    """The finished run's model as an agent (named as when it was first rated)."""
    name = f"{spec.algorithm}-seed{spec.seed}"
    model = _model_path(spec, run_dir)
    if protocol.ALGORITHMS[spec.algorithm].trainer == "ppo":
        return PolicyAgent(model, name=name)
    agent = AlphaZeroJaxAgent(model, protocol.env_of(spec.game))
    agent.name = name
    return agent


def _league(game: str, leagues: str | None) -> Any:
    env_id = protocol.env_of(game)
    return load_league(Path(leagues) / f"{env_id}.json" if leagues else env_id)


def rerate_due(spec: RunSpec, out: Path, leagues: str | None = None) -> bool:
    """Whether a finished run was rated against another version of its game's league than the
    current one and its model is here to be rated again (a run folder from a clean clone has
    its records but not its model: it keeps its old rating, and the aggregate says which
    league each rating is on)."""
    done = read_result(spec.folder(out), warn=lambda _: None)  # (a damaged one is said where it is run)
    if done is None:
        return False
    version = done.get("league_version")
    return version != _league(spec.game, leagues).version and _model_path(spec, spec.folder(out) / "train").exists()


def _start_afresh(run_dir: Path) -> None:
    """Training starts from scratch (no checkpoint here, e.g. a folder committed without its
    checkpoints): what an earlier start left (its evaluations, the rating and games of its
    model) must not be mixed with the new run's."""
    for stale in (run_dir, run_dir.parent / "rating", run_dir.parent / "eval"):
        if stale.exists():
            print(f"starting afresh: removing {stale} (no checkpoint to continue from)", flush=True)
            shutil.rmtree(stale)


def _evaluate(spec: RunSpec, agent: Any, folder: Path, leagues: str | None) -> dict[str, Any]:
    evaluation = protocol.EVALUATIONS[spec.budget]
    env_id = protocol.env_of(spec.game)
    league = _league(spec.game, leagues)
    rating = rate(
        env_id,
        agent,
        league,
        folder / "rating",
        width=evaluation.league_width,
        max_games=evaluation.league_max_games,
        seed=evaluation.seed + spec.seed,
        log=lambda line: print(line, flush=True),
    )
    atomic_write(folder / "rating" / "rating.json", json.dumps(asdict(rating), indent=2) + "\n")
    out = folder / "eval"
    out.mkdir(parents=True, exist_ok=True)
    seed = evaluation.seed + 1000 * spec.seed
    finished = finished_games(out, env_id, seed)
    win_rate, intervals = {}, {}
    # The finished games are kept whole; head_to_head hands them back too, and they are not written twice.
    games = LineFile(out / "games.jsonl", [json.dumps(record) for record in finished.values()])

    def on_game(record: dict[str, Any]) -> None:
        if game_key(record) not in finished:
            games.add(json.dumps(record))

    # (score name, opponent, env arguments): each opponent, then the game's match play against the
    # last one, its games named apart
    match = dict(kit_of(env_id).match_env_kwargs)
    matches = [(f"{evaluation.opponents[-1]}-match", evaluation.opponents[-1], match)] if match else []
    try:
        for name, opponent_spec, env_kwargs in [*((name, name, None) for name in evaluation.opponents), *matches]:
            opponent = make_agent(opponent_spec, env_id)
            if env_kwargs:
                opponent.name = name
            result = head_to_head(
                env_id,
                agent,
                opponent,
                evaluation.games_per_seat,
                seed=seed,
                env_kwargs=env_kwargs,
                finished={k: v for k, v in finished.items() if k[1] == opponent.name},
                on_game=on_game,
            )
            win_rate[name] = result.wins / result.games
            intervals[name] = list(wilson_interval(result.wins, result.games))
    finally:
        games.close()
    scores = {
        "rating": rating.rating,
        "rating_ci95": list(rating.ci95),
        "rating_games": rating.games,
        "league_version": league.version,
        "win_rate": win_rate,
        "win_rate_ci95": intervals,
        "games_per_seat": evaluation.games_per_seat,
    }
    scores.update(_exploitability(spec, agent, folder, evaluation))
    if spec.game in protocol.TRACKS:
        scores["by_players"] = {
            str(players): _score_table(spec, agent, folder, league, players)
            for players in protocol.TRACKS[spec.game].eval_players
        }
    return scores


def _exploitability(spec: RunSpec, agent: Any, folder: Path, evaluation: protocol.Evaluation) -> dict[str, Any]:
    """What a best response takes from a PPO run's model (both seats pooled): one fine-tuned from
    it with ``exploit_fraction`` of its training timesteps, in ``folder/exploit`` (kept, resumed)."""
    if evaluation.exploit_fraction <= 0 or protocol.ALGORITHMS[spec.algorithm].trainer != "ppo":
        return {}
    env_id = protocol.env_of(spec.game)
    model = _model_path(spec, folder / "train")
    own = (
        agent_training_timesteps(f"model:{model}", env_id)
        or protocol.ppo_config(spec.game, spec.algorithm, spec.budget)["total_timesteps"]
    )
    job = BestResponse(
        env=env_id,
        agent=f"model:{model}",
        timesteps=max(1, round(evaluation.exploit_fraction * own)),
        init=str(model),
        games=evaluation.exploit_games,
        torch_threads=1,
        base_config=protocol.ppo_config(spec.game, spec.algorithm, spec.budget),
    )
    print(
        f"exploitability: a best response of {job.timesteps:,} timesteps ({evaluation.exploit_fraction:.0%} of {own:,})",
        flush=True,
    )
    result = exploit_one(job, agent, evaluation.seed + 1000 * spec.seed + 500, folder / "exploit",
                         again="the same polarzoo-benchmark run command (it resumes this run)")  # fmt: skip
    total = result["overall"]
    return {
        "exploitability": total["win_rate"],
        "exploitability_ci95": total["win_rate_ci95"],
        "exploitability_as": exploitability_by_seat(result),
        "exploit_timesteps": job.timesteps,
    }


def _score_table(spec: RunSpec, agent: Any, folder: Path, league: Any, players: int) -> dict[str, Any]:
    """A track's run at a table of ``players``: first place and mean points against
    ``players - 1`` of the evaluation's table opponent (every seat in turn), and its league rating
    at that count; games in ``rating-<N>p/`` and ``eval-<N>p/`` (kept across an interruption)."""
    evaluation = protocol.EVALUATIONS[spec.budget]
    env_id = protocol.env_of(spec.game)
    rating = rate(
        env_id,
        agent,
        league,
        folder / f"rating-{players}p",
        width=evaluation.league_width,
        max_games=evaluation.table_league_max_games,
        players=players,
        seed=evaluation.seed + spec.seed,
        log=lambda line: print(line, flush=True),
    )
    atomic_write(folder / f"rating-{players}p" / "rating.json", json.dumps(asdict(rating), indent=2) + "\n")
    out = folder / f"eval-{players}p"
    out.mkdir(parents=True, exist_ok=True)
    seed = evaluation.seed + 1000 * spec.seed
    finished = finished_games(out, env_id, seed)
    games = LineFile(out / "games.jsonl", [json.dumps(record) for record in finished.values()])

    def on_game(record: dict[str, Any]) -> None:
        if game_key(record) not in finished:
            games.add(json.dumps(record))

    lineup = [agent] + [make_agent(evaluation.table_opponent, env_id) for _ in range(players - 1)]
    for index, opponent in enumerate(lineup[1:], start=1):
        opponent.name = f"{evaluation.table_opponent} ({index})"
    try:
        stats = multiplayer_table(
            env_id,
            lineup,
            evaluation.table_games,
            seed=seed,
            env_kwargs=GAMES[env_id].env_kwargs(players),
            on_game=on_game,
            finished=finished,
        )
    finally:
        games.close()
    mine = next(entry for entry in stats if entry.name == agent.name)
    table = mine.as_dict()
    first = sum(rank == 1 for rank in mine.ranks)
    return {
        "rating": rating.rating,
        "rating_ci95": list(rating.ci95),
        "rating_games": rating.games,
        "opponents": f"{players - 1} x {evaluation.table_opponent}",
        "games": table["games"],
        "first_place": first / table["games"],
        "first_place_ci95": list(wilson_interval(first, table["games"])),
        "mean_points": table["mean_points"],
        "mean_points_ci95": table["mean_points_ci95"],
        "opponents_mean_points": float(np.mean([p for entry in stats if entry is not mine for p in entry.points])),
    }


# ------------------------------------------------------------------------------ many runs
def run_all(
    specs: Sequence[RunSpec],
    out: Path,
    workers: int = 1,
    address: str | None = None,
    leagues: str | None = None,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Every run of ``specs`` not finished yet, ``workers`` at a time (or as Ray tasks)."""
    rerate = [s for s in specs if rerate_due(s, out, leagues)]
    pending = rerate + [s for s in specs if read_result(s.folder(out), warn=log) is None]
    log(
        f"{len(specs)} runs, {len(specs) - len(pending) + len(rerate)} finished before, {len(pending) - len(rerate)} to run"
        + (f", {len(rerate)} to rate again (rated against an older league)" if rerate else "")
        + f" ({'Ray at ' + address if address else f'{workers} local worker(s)'})"
    )
    started = time.perf_counter()
    results = []

    def report(index: int, spec: RunSpec, result: dict[str, Any]) -> None:
        rates = ", ".join(f"{rate:.0%} vs {name}" for name, rate in result["win_rate"].items())
        low, high = result["rating_ci95"]
        log(
            f"[{index}/{len(pending)}] {spec.label}: rating {result['rating']:.0f} [{low:.0f}, {high:.0f}], {rates} "
            f"({(time.perf_counter() - started) / 60:.1f} min so far)"
        )

    if address:
        ray = _ray(address)
        task = ray.remote(num_cpus=1)(execute)
        futures = {task.remote(spec, str(out.resolve()), leagues): spec for spec in pending}
        remaining = list(futures)
        while remaining:
            ready, remaining = ray.wait(remaining, num_returns=1)
            result = ray.get(ready[0])
            results.append(result)
            report(len(results), futures[ready[0]], result)
    elif workers > 1 and len(pending) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(execute, spec, str(out), leagues): spec for spec in pending}
            try:
                for future in as_completed(futures):
                    results.append(future.result())
                    report(len(results), futures[future], results[-1])
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        for spec in pending:
            results.append(execute(spec, str(out), leagues))
            report(len(results), spec, results[-1])
    return results


def ray_address_problem(address: str, timeout: float = 5.0) -> str | None:
    """Why a Ray cluster at ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``) cannot be reached,
    found in ``timeout`` seconds (Ray itself waits minutes for an address that never answers);
    None when it answers or the address is ``auto`` / ``local`` (Ray says those at once)."""
    if address in ("auto", "local"):
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        return "not a Ray address (auto, local, HOST:PORT or ray://HOST:PORT)"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        return f"nothing answers there within {timeout:g} s ({error.strerror or error}); start the cluster (ray start --head) or check the address"
    return None


def _ray(address: str) -> Any:
    from polarzoo.envs.utils import require

    ray = require("ray", "the benchmark on a Ray cluster (--address)")
    if not ray.is_initialized():
        if address == "local":
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    return ray


# ------------------------------------------------------------------------------ CLI
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog_name(MODULE), description=__doc__, formatter_class=HelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="{run,aggregate}", help="what to do (each has its own --help)")
    commands.required = True
    run = commands.add_parser("run", help="train, rate and evaluate the runs, then aggregate", formatter_class=HelpFormatter)
    run.add_argument("--games", nargs="+", choices=protocol.benchmark_games(), default=list(protocol.GAMES), help="the games "
                     "(the protocol's; a registered game whose kit declares budgets of its own too)")  # fmt: skip
    run.add_argument(
        "--algorithms",
        nargs="+",
        choices=sorted(protocol.ALGORITHMS),
        default=sorted(protocol.ALGORITHMS),
        help="the algorithms (az-jax runs on the board games only)",
    )
    run.add_argument(
        "--seeds", nargs="+", type=int, default=list(protocol.DEFAULT_SEEDS), help="training seeds (at least 5 to publish)"
    )
    run.add_argument("--budget", choices=sorted(protocol.BUDGETS), default="short", help="the protocol's training budget")
    run.add_argument(
        "--out", type=Path, default=Path("runs/benchmark"), help="the benchmark's folder (finished runs in it are kept)"
    )
    run.add_argument("--workers", type=int, default=1, help="runs at once in local processes (each on one core)")
    run.add_argument("--address", default=None, help="a Ray cluster's address (auto, HOST:PORT), or local to start one here")
    run.add_argument("--leagues", default=None, help="a folder of <env>.json leagues to rate against (default: the shipped ones)")
    agg = commands.add_parser("aggregate", help="the aggregate of the finished runs", formatter_class=HelpFormatter)
    agg.add_argument("--out", type=Path, default=Path("runs/benchmark"), help="the benchmark's folder")
    agg.add_argument("--budget", choices=sorted(protocol.BUDGETS), default="short", help="which budget's runs")
    return parser


def _main_writes(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "aggregate":
        if not (args.out / args.budget).is_dir():
            parser.error(f"--out {args.out}: no {args.budget} runs there")
        written = aggregate(args.out, args.budget)
        if not written:
            print(f"error: no finished run in {args.out / args.budget}: nothing to aggregate", file=sys.stderr)
            sys.exit(1)
        for path in written:
            print(f"written: {path}")
        return
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if len(set(args.seeds)) != len(args.seeds) or any(s < 0 for s in args.seeds):
        parser.error("--seeds must be distinct whole numbers >= 0")
    for game in args.games:
        try:
            _league(game, args.leagues)
        except ValueError as error:
            parser.error(f"{game}: {error}")
    writable_folder_or_exit(parser, "--out", args.out)
    specs = schedule(args.games, args.algorithms, args.seeds, args.budget)
    if not specs:
        parser.error("no run: az-jax runs on the board games only")
    for spec in specs:  # before any training: a game of a kit may declare some budgets only
        try:
            protocol.budget_settings(spec.budget, spec.game, protocol.ALGORITHMS[spec.algorithm].trainer)
        except ValueError as error:
            parser.error(str(error))
    if args.address:
        problem = ray_address_problem(args.address)
        if problem:
            parser.error(f"--address {args.address}: {problem}")
    lock = lock_folder_or_exit(parser, "--out", args.out, "another `benchmark run`")
    try:
        print(f"benchmark folder: {args.out} (budget {args.budget})", flush=True)
        try:
            run_all(specs, args.out, args.workers, args.address, args.leagues, log=lambda line: print(line, flush=True))
        except (KeyboardInterrupt, SystemExit) as stop:
            # (a run's trainer ends a Ctrl-C with SystemExit(130) after saving its checkpoint)
            if isinstance(stop, SystemExit) and stop.code != 130:
                raise
            print(
                f"\ninterrupted: finished runs are kept in {args.out}; runs under way keep their last checkpoint; "
                "the same command continues",
                file=sys.stderr,
            )
            sys.exit(130)
        for path in aggregate(args.out, args.budget):
            print(f"written: {path}")
    finally:
        os.close(lock)


main = writes_fail_in_one_line(
    _main_writes,
    "each run keeps what it finished (its last checkpoint, its games): make room, then run the same command again (it continues)",
)


if __name__ == "__main__":
    main()
