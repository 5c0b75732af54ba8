"""Self-play: the opponent pool (reference agents and the learner's frozen snapshots, in the
config's order: an env draws an index into it, so the order is part of the run), the vectorised
envs that play it, and the callback that adds snapshots, evaluates and writes checkpoints at
update boundaries."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any

from polarzoo.baselines.agents import PolicyAgent, make_agent
from polarzoo.baselines.cli.runs import LineFile, save_model
from polarzoo.baselines.evaluation.tournament import head_to_head, seat_names, wilson_interval
from polarzoo.baselines.training.checkpoints import capture_update_boundary, save_checkpoint
from polarzoo.baselines.training.config import (
    REFERENCE_AGENTS,
    SeedSchedule,
    TrainConfig,
    TrainingState,
    evaluation_env_kwargs,
)


def opponent_pool(config: TrainConfig, snapshots: list[str]) -> tuple[list[Any], list[float]]:
    """The opponents and their weights, in the order of ``config.opponents`` (then the
    snapshots): an env draws an index into this list, so the order is part of the run."""
    agents: list[Any] = []
    weights: list[float] = []
    mixture = dict(config.opponents)
    self_weight = float(mixture.pop("self", 0.0))
    for spec, weight in mixture.items():
        agents.append(make_agent(spec, config.env))
        weights.append(float(weight))
    if snapshots and self_weight > 0:
        for path in snapshots:
            agents.append(PolicyAgent(path, deterministic=False))
            weights.append(self_weight / len(snapshots))
    return agents, weights


def make_vec_env(config: TrainConfig, snapshots: list[str], seed: int) -> Any:
    from stable_baselines3.common.monitor import Monitor

    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.wrappers.checkpointing import Checkpointable
    from polarzoo.wrappers.opponent_batching import OpponentBatchingVecEnv
    from polarzoo.wrappers.subproc import MaskCachingSubprocVecEnv

    def factory(rank: int):  # noqa: ANN202
        def build() -> Any:
            if config.vec_env == "subproc":
                import torch

                # One process per env on a few cores: the snapshot opponents' small forward
                # passes gain nothing from threads that would only contend with the other envs.
                torch.set_num_threads(1)
            agents, weights = opponent_pool(config, snapshots)
            env = SingleAgentEnv(
                config.env,
                opponents=agents,
                opponent_weights=weights,
                learner_seat=config.learner_seat,
                env_kwargs=config.env_kwargs,
            )
            if config.shaping:
                from polarzoo.wrappers.shaping import PotentialShaping

                # Monitor inside: the logged episode returns stay the game's own.
                return Checkpointable(PotentialShaping(Monitor(env), scale=config.shaping, gamma=config.gamma))
            # Outermost: the whole stack can be saved at an update and put back (exact --resume).
            return Checkpointable(Monitor(env))

        return build

    # dummy: one process, the snapshot opponents' moves batched across the envs (one forward pass
    # for all instead of one per env); subproc: one process per env, the masks sent with the steps.
    cls = MaskCachingSubprocVecEnv if config.vec_env == "subproc" else OpponentBatchingVecEnv
    vec_env = cls([factory(i) for i in range(config.n_envs)])
    vec_env.seed(seed)
    return vec_env


def training_callback(
    run_dir: Path,
    config: TrainConfig,
    state: TrainingState,
    log_every: float,
    counters: dict[str, Any] | None,
    seconds_before: float,
    threads: tuple[int, int],
) -> Any:
    """The run's :class:`SelfPlayCallback` (SB3's ``BaseCallback``: the train extra).
    ``threads``: the learner's torch threads while collecting and in the update (0 = leave as
    they are)."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    collect_threads, update_threads = threads

    class SelfPlayCallback(BaseCallback):
        """Checkpoints, snapshots into the opponent pool, periodic evaluation."""

        def __init__(self) -> None:
            super().__init__()
            self.next_checkpoint = state.timesteps + config.checkpoint_every
            self.next_snapshot = state.timesteps + config.snapshot_every if config.snapshot_every else None
            self.next_eval = state.timesteps + config.eval_every if config.eval_every else None
            if counters:  # an exact resume: the schedule of the run it continues
                self.next_checkpoint, self.next_snapshot, self.next_eval = (
                    counters["next_checkpoint"],
                    counters["next_snapshot"],
                    counters["next_eval"],
                )
            #: the state at the start of the current rollout (the last update boundary)
            self.boundary: dict[str, Any] | None = None
            self.started, self.steps_at_start, self.last_log = time.perf_counter(), state.timesteps, time.perf_counter()
            self.last_eval = ""
            #: wall seconds spent in periodic evaluations (not training): kept out of
            #: ``timing.csv``'s ``train_seconds`` so the time to a win rate is the training's own
            self.eval_seconds = 0.0

        def _log_progress(self) -> None:
            # Without a terminal (a log file, a cluster job) a progress bar shows nothing until
            # the end: one line at a steady interval instead.
            now = time.perf_counter()
            if not log_every or now - self.last_log < log_every:
                return
            self.last_log = now
            done, total = self.num_timesteps, config.total_timesteps
            fps = (done - self.steps_at_start) / max(now - self.started, 1e-9)
            eta = max(total - done, 0) / fps if fps > 0 else float("inf")  # the last rollout may overshoot
            eta_text = time.strftime("%H:%M:%S", time.gmtime(eta)) if eta < 360_000 else "?"
            print(
                f"{done:,}/{total:,} timesteps ({100 * done / max(total, 1):.0f}%), {fps:.0f} fps, ETA {eta_text}"
                f"{self.last_eval}",
                flush=True,
            )

        def _on_step(self) -> bool:
            steps = self.num_timesteps
            self._log_progress()
            for done, info in zip(self.locals.get("dones", ()), self.locals.get("infos", ())):
                if done and (info.get("final_infos") or {}).get("physics_error"):
                    # Thin Ice: the simulation went unstable, the env rolled back and truncated
                    # the episode; count it and carry on.
                    state.physics_failures += 1
                    self.logger.record("rollout/physics_failures", state.physics_failures)
            if self.next_snapshot is not None and steps >= self.next_snapshot:
                self._snapshot()
                self.next_snapshot += config.snapshot_every
            if self.next_eval is not None and steps >= self.next_eval:
                self._evaluate()
                self.next_eval += config.eval_every
            return True

        def next_env_event(self) -> int | None:
            """The timesteps at which ``on_step`` next touches the envs (a snapshot into their
            pools) or plays games (an evaluation): the async collector runs the callbacks up to
            there with every env idle, as a lock step would."""
            events = [event for event in (self.next_snapshot, self.next_eval) if event is not None]
            return min(events) if events else None

        def counters(self) -> dict[str, Any]:
            return {"next_checkpoint": self.next_checkpoint, "next_snapshot": self.next_snapshot, "next_eval": self.next_eval}

        def _on_rollout_end(self) -> None:
            if update_threads and update_threads != collect_threads:
                torch.set_num_threads(update_threads)

        def _on_rollout_start(self) -> None:
            if collect_threads and update_threads != collect_threads:
                torch.set_num_threads(collect_threads)
            # Between two updates: the one place a run can be continued exactly.  Checkpoints
            # are written here, and a Ctrl-C during the rollout or the update saves this state.
            due = self.num_timesteps >= self.next_checkpoint
            while self.next_checkpoint <= self.num_timesteps:
                self.next_checkpoint += config.checkpoint_every
            # The training time up to this boundary travels with it: a resumed run's
            # training.json then counts every part, not only the last learn() call.
            state.train_seconds = seconds_before + time.perf_counter() - self.started
            self.boundary = capture_update_boundary(self.model, self.counters(), state)
            if due:
                save_checkpoint(run_dir, self.model, state, self.boundary)

        def _snapshot(self) -> None:
            path = run_dir / "snapshots" / f"snapshot_{self.num_timesteps}.zip"
            save_model(self.model, path)
            state.snapshots = (state.snapshots + [str(path)])[-config.max_snapshots :]
            agents, weights = opponent_pool(config, state.snapshots)
            env = self.training_env
            # Replace each env's pool: references + the newest snapshots.
            for i in range(env.num_envs):
                env.env_method("set_pool", agents, weights, indices=[i])

        def _evaluate(self) -> None:
            eval_started = time.perf_counter()
            trained_for = seconds_before + eval_started - self.started - self.eval_seconds
            learner = PolicyAgent(model=self.model, name="learner")
            rows = []
            games = evaluation_env_kwargs(config)
            for env_kwargs in games:
                # Several player counts (Thin Ice): a row per count, its opponent named with it.
                suffix = f" ({env_kwargs['num_players']} players)" if len(games) > 1 else ""
                tag = f"_{env_kwargs['num_players']}p" if len(games) > 1 else ""
                for spec in REFERENCE_AGENTS:
                    try:
                        opponent = make_agent(spec, config.env)
                    except ValueError:
                        continue
                    result = head_to_head(
                        config.env,
                        learner,
                        opponent,
                        config.eval_games,
                        seed=SeedSchedule.PERIODIC_EVALUATION,
                        env_kwargs=env_kwargs,
                    )
                    low, high = wilson_interval(result.wins, result.games)
                    rate = result.wins / result.games
                    self.logger.record(f"eval/win_rate_vs_{spec}{tag}", rate)
                    row = {
                        "timesteps": self.num_timesteps,
                        "opponent": spec + suffix,
                        "win_rate": rate,
                        "ci_low": low,
                        "ci_high": high,
                        "games": result.games,
                        "illegal": result.illegal,
                    }
                    # Both seats together can hide a seat that never learns (the Floe's bears did):
                    # each seat's own win rate too.
                    for index, seat in enumerate(seat_names(config.env, env_kwargs)):
                        wins, draws, losses = result.by_seat.get(index, [0, 0, 0])
                        seat_rate = wins / max(1, wins + draws + losses)
                        row[f"win_rate_as_{seat}"] = seat_rate
                        self.logger.record(f"eval/win_rate_vs_{spec}{tag}_as_{seat}", seat_rate)
                    rows.append(row)
            self.last_eval = (
                "; last evaluation ("
                + f"{self.num_timesteps:,}): "
                + ", ".join(f"{row['win_rate']:.0%} vs {row['opponent']}" for row in rows)
            )
            if log_every:
                print(
                    f"evaluation at {self.num_timesteps:,} timesteps: "
                    + ", ".join(
                        f"{row['win_rate']:.0%} [{row['ci_low']:.0%}, {row['ci_high']:.0%}] vs {row['opponent']}" for row in rows
                    ),
                    flush=True,
                )
            path = run_dir / "evaluations.csv"
            new = not path.exists() or path.stat().st_size == 0
            fields = list(dict.fromkeys(key for row in rows for key in row))  # every seat of every player count
            if not new:  # a run resumed from an older version keeps its file's columns
                with path.open(newline="") as handle:
                    fields = next(csv.reader(handle), fields)
            table = io.StringIO()
            writer = csv.DictWriter(table, fieldnames=fields, extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerows(rows)
            lines = LineFile(path)  # appended whole or cut back: a full disk never leaves half a row
            for csv_line in table.getvalue().splitlines():
                lines.add(csv_line)
            lines.close()
            self.eval_seconds += time.perf_counter() - eval_started
            # Wall times depend on the machine: kept out of evaluations.csv (a result of the seed
            # and config), in a log of their own (a resumed run may repeat a line: the last counts).
            timing = LineFile(run_dir / "timing.csv")
            if not timing.path.exists():
                timing.add("timesteps,train_seconds,evaluation_seconds")
            timing.add(f"{self.num_timesteps},{trained_for:.2f},{time.perf_counter() - eval_started:.2f}")
            timing.close()

    return SelfPlayCallback()
