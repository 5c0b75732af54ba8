"""The JAX twins: game steps per second with ``jax.lax.scan`` at B = 1, 64, 1024, 4096, beside
the numba batch cores and pgx's ``connect_four`` and ``othello`` in the same run (a ratio to each);
compile time apart; and the lockstep check of the twins against the numba cores.

A "step" is one game advancing one action, with a random legal action drawn inside the loop and
finished games restarted: JAX: ``lax.scan`` over ``T`` steps of (draw, ``env.step``, auto
reset) under ``jit(vmap)``, timed after a compiled warm-up call; numba: ``core.sample_actions``
+ ``core.step`` (auto reset) in a Python loop.  Every sampler is the same draw: the k-th legal
action in mask order, ``k = floor(u * count)``, one uniform per game.  Trials are interleaved and
the median is reported.

    python -m benchmarks.jax_envs                         # the table (a few minutes)
    python -m benchmarks.jax_envs --lockstep-games 100000 # plus 100,000 lockstep games per twin
    python -m benchmarks.jax_envs --sizes 4096 65536      # larger batches on an accelerator
    python -m benchmarks.jax_envs --pgx-games connect_four go_9x9   # other pgx games beside ours

``--xla-threads 1`` limits XLA's CPU thread pool to one thread (the numba cores use one core).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

#: pgx's games timed beside the twins by default: a small board and a larger one
PGX_GAMES = ("connect_four", "othello")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096], help="batch sizes (default: 1 64 1024 4096)")
    parser.add_argument("--trials", type=int, default=3, help="interleaved trials, median reported (default: 3)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per trial and size, at least (default: 1.0)")
    parser.add_argument(
        "--lockstep-games",
        type=int,
        default=0,
        help="games per twin checked in lockstep against the numba core (default: 0 = skip)",
    )
    parser.add_argument("--xla-threads", type=int, default=0, help="XLA CPU threads (0 = XLA's default, every core) (default: 0)")
    parser.add_argument(
        "--pgx-games",
        nargs="*",
        default=list(PGX_GAMES),
        metavar="GAME",
        help=f"pgx games timed beside the twins, a ratio column each (default: {' '.join(PGX_GAMES)})",
    )
    parser.add_argument("--no-numba", action="store_true", help="skip the numba cores (e.g. on an accelerator machine)")
    return parser.parse_args(argv)


def scan_length(batch: int) -> int:
    """Steps per compiled call: about 16k game-steps, at least 16 steps."""
    return max(16, min(1024, 16384 // batch))


def make_rollout(env, batch: int, length: int):
    """A jitted function (state, key) -> (state, key) playing ``length`` random steps of
    ``batch`` games with auto reset."""
    import jax
    import jax.numpy as jnp

    from polarzoo.envs._common.jax_env import sample_legal_action

    # Our twins draw from their state (the numba cores' samplers do the same); pgx's games from the mask.
    draw = getattr(env, "random_action", lambda state, key: sample_legal_action(key, state.legal_action_mask))
    sample = jax.vmap(draw)
    step = jax.vmap(env.step)
    init = jax.vmap(env.init)

    def body(carry, _):
        state, key = carry
        key, action_key, reset_key = jax.random.split(key, 3)
        state = step(state, sample(state, jax.random.split(action_key, batch)))
        fresh = init(jax.random.split(reset_key, batch))
        done = state.terminated

        def pick(a, b):
            return jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)

        return (jax.tree.map(pick, fresh, state), key), None

    @jax.jit
    def rollout(state, key):
        (state, key), _ = jax.lax.scan(body, (state, key), None, length=length)
        return state, key

    return rollout, jax.jit(init)


def time_jax(env, batch: int, seconds: float, seed: int) -> tuple[float, float]:
    """(steps/s, compile seconds) of ``env`` at ``batch``."""
    import jax

    length = scan_length(batch)
    rollout, init = make_rollout(env, batch, length)
    key = jax.random.PRNGKey(seed)
    state = init(jax.random.split(key, batch))
    start = time.perf_counter()
    state, key = rollout(state, key)
    jax.block_until_ready(state)
    compile_seconds = time.perf_counter() - start
    calls = 0
    start = time.perf_counter()
    while True:
        state, key = rollout(state, key)
        calls += 1
        jax.block_until_ready(state)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return calls * length * batch / elapsed, compile_seconds


def time_numba(core_cls: type, batch: int, seconds: float, seed: int) -> float:
    from benchmarks.batch import run

    return run(core_cls, batch, seconds, seed)[1]


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    if args.xla_threads:
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false "
            f"intra_op_parallelism_threads={args.xla_threads}"
        ).strip()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import jax
        import pgx
    except ImportError:
        sys.exit('benchmarks.jax_envs needs the JAX extra: pip install "polarzoo[jax]"')
    from polarzoo.envs import jax_envs

    device = jax.devices()[0]
    print(f"# JAX twins: steps/s (XLA threads: {args.xla_threads or 'default'})\n")
    print(
        f"JAX {jax.__version__} on {device.platform} ({device.device_kind}), pgx {pgx.__version__}; "
        f"XLA threads: {args.xla_threads or 'default'}; {os.cpu_count()} CPUs\n",
        flush=True,
    )
    twins = {name: jax_envs.make(name) for name in jax_envs.available_envs()}
    unknown = sorted(set(args.pgx_games) - set(pgx.available_envs()))
    if unknown:
        sys.exit(f"--pgx-games: pgx {pgx.__version__} has no game {unknown[0]!r}; its games: {', '.join(pgx.available_envs())}")
    for game in args.pgx_games:
        twins[f"pgx {game}"] = pgx.make(game)
    numba = {} if args.no_numba else {name: jax_envs.batch_core(name, 1).__class__ for name in jax_envs.available_envs()}
    for core in numba.values():
        time_numba(core, 2, 0.05, 0)  # compile / load the cached kernels
    rates: dict[tuple[str, int], list[float]] = {}
    compile_seconds: dict[tuple[str, int], float] = {}
    numba_rates: dict[tuple[str, int], list[float]] = {}
    for trial in range(args.trials):
        for size in args.sizes:
            for name, env in twins.items():
                rate, compiled = time_jax(env, size, args.seconds, trial)
                rates.setdefault((name, size), []).append(rate)
                compile_seconds.setdefault((name, size), compiled)
            for name, core in numba.items():
                numba_rates.setdefault((name, size), []).append(time_numba(core, size, args.seconds, trial))
        print(f"trial {trial + 1}/{args.trials} done", file=sys.stderr, flush=True)
    pgx_columns = "".join(f" pgx {game} steps/s | twin / {game} |" for game in args.pgx_games)
    print(f"| game | B | JAX twin steps/s | compile s | numba core steps/s | twin / numba |{pgx_columns}")
    print("|---|---:|---:|---:|---:|---:|" + "---:|---:|" * len(args.pgx_games))
    for name in jax_envs.available_envs():
        for size in args.sizes:
            ours = statistics.median(rates[(name, size)])
            cell = ("-", "-")
            if numba:
                theirs = statistics.median(numba_rates[(name, size)])
                cell = (f"{theirs:,.0f}", f"{ours / theirs:.2f}x")
            pgx_cells = ""
            for game in args.pgx_games:
                yardstick = statistics.median(rates[(f"pgx {game}", size)])
                pgx_cells += f" {yardstick:,.0f} | {ours / yardstick:.2f}x |"
            print(f"| {name} | {size} | {ours:,.0f} | {compile_seconds[(name, size)]:.1f} | {cell[0]} | {cell[1]} |{pgx_cells}")
    if args.lockstep_games:
        print()
        for name in jax_envs.available_envs():
            start = time.perf_counter()
            report = jax_envs.lockstep(
                name,
                games=args.lockstep_games,
                batch_size=1024,
                progress=lambda r: print(f"  {r.env_id}: {r.games:,} games", file=sys.stderr, flush=True),
            )
            print(
                f"lockstep {name}: {report.games:,} games, {report.steps:,} steps of 1,024, "
                f"mismatches {report.mismatches or 0} ({time.perf_counter() - start:.0f} s)"
                + (f"; first: {report.first_mismatch}" if report.first_mismatch else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
