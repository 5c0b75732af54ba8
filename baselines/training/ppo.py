"""Train a MaskablePPO agent on one of our games, against random / heuristic opponents and a
growing pool of its own frozen snapshots; then evaluate it.

    python -m polarzoo.baselines.train --env fire_and_ice_v0                  # default config (~10 min)
    python -m polarzoo.baselines.train --env go_with_the_floe_v0 --total-timesteps 20000
    python -m polarzoo.baselines.train --resume runs/fire_and_ice_v0-20261129-141500

``polarzoo-train`` is the same command (a console script installed with the package).

Each run writes ``runs/<env>-<time>/``: ``config.yaml`` (resolved), ``command.txt``,
``checkpoints/`` (latest model + state), ``snapshots/``, ``tb/`` (TensorBoard), ``evaluations.csv``
(periodic win rates), ``model.zip`` and the final evaluation (``eval.json``, ``eval.md``,
``winrate.png``, ``learning_curve.png``).  ``--resume`` continues from the last checkpoint (Ctrl-C
saves one first; a kill loses at most ``checkpoint_every`` timesteps).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shlex
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents import PolicyAgent, make_agent, pretrained_path
from polarzoo.baselines.policies.weights import ModelFileError, load_policy_weights, save_policy
from polarzoo.envs.utils import UnsafePickle, restricted_loads
from polarzoo.baselines.cli.runs import (HelpFormatter, atomic_write, prog_name, save_model, run_dir_or_exit, seed as seed_type,
                                         writable_folder_or_exit)
from polarzoo.baselines.evaluation.evaluate import evaluate
from polarzoo.baselines.evaluation.tournament import head_to_head, seat_names, wilson_interval
from polarzoo.baselines.training.imitation import clone, collect_demonstrations
from polarzoo.wrappers.single_agent import player_counts

try:
    import yaml
except ImportError:  # a base install: --help still works; training says which extra it needs
    yaml = None  # type: ignore[assignment]

CONFIG_PATH = Path(__file__).with_name("hyperparams.yaml")
REFERENCE_AGENTS = ("random", "heuristic")


#: Config keys added after runs were published or started, with the value that trains as the
#: code before them did: a run's saved config without the key (``--resume``, the benchmark's
#: published configs) takes this value, not today's default.
ADDED_KEYS: dict[str, Any] = {"update_threads": 0, "rollouts": "lockstep"}

#: ``--quick``: settings of a smoke run (about a minute on 2 cores, every game; every output written)
QUICK: dict[str, Any] = {
    "total_timesteps": 1024, "n_envs": 2, "vec_env": "dummy", "rollouts": "lockstep", "n_steps": 128, "batch_size": 128, "n_epochs": 1,
    "eval_every": 512, "eval_games": 2, "final_eval_games": 2, "checkpoint_every": 512, "snapshot_every": 512,
}
#: ``--quick`` with a config that clones a teacher first: a few games and one epoch of it
QUICK_BC: dict[str, Any] = {"bc_games": 4, "bc_epochs": 1}


def load_config(env_id: str, overrides: dict[str, Any] | None = None, path: Path = CONFIG_PATH) -> dict[str, Any]:
    """The packaged ``default`` and ``env_id`` sections, then (for another ``path``) that file's
    ``default`` and ``env_id`` sections on top, then ``overrides``: a user's file only needs the
    keys it changes."""
    config: dict[str, Any] = {}
    for source in dict.fromkeys([CONFIG_PATH, Path(path)]):
        table = yaml.safe_load(Path(source).read_text()) or {}
        if not isinstance(table, dict):
            raise ValueError("expected a mapping of env ids to settings")
        for section in ("default", env_id):
            extra = table.get(section) or {}
            if not isinstance(extra, dict):
                raise ValueError(f"section {section!r} must be a mapping")
            unknown = sorted(set(extra) - set(config)) if config else []
            if unknown:
                raise ValueError(f"unknown config key(s) {unknown} in {section!r}; known: {sorted(config)}")
            config.update(extra)
    for key, value in (overrides or {}).items():
        if value is not None:
            if key not in config:
                raise ValueError(f"unknown config key {key!r}; known: {sorted(config)}")
            config[key] = value
    config["env"] = env_id
    return config


def saved_run_config(saved: dict[str, Any]) -> dict[str, Any]:
    """The config a run folder's ``config.yaml`` (``saved``) trains with on ``--resume``: keys
    added to the packaged defaults since the run started take the value that trains as the code
    of its start did (:data:`ADDED_KEYS`) where there is one, else today's default."""
    return {**load_config(saved["env"]), **ADDED_KEYS, **saved}


def policy_and_kwargs(config: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The MaskablePPO policy named by ``config["policy"]``: ``board`` (the board network of
    :mod:`polarzoo.baselines.policies`) or ``mlp`` (SB3's flat MLP of ``net_arch``)."""
    if config["policy"] == "mlp":
        return "MlpPolicy", {"net_arch": list(config["net_arch"])}
    if config["policy"] == "board":
        from polarzoo.baselines.policies.sb3 import BoardPolicy, board_for_env

        board = board_for_env(config["env"])
        kwargs = {"board": board, **dict(config.get("board_policy") or {})}
        if board == "thin_ice":  # the network places targets on the env's own lattice
            kwargs.setdefault("pitch_mm", float((config.get("env_kwargs") or {}).get("pitch_mm", 7.0)))
        return BoardPolicy, kwargs
    raise ValueError(f"policy must be 'board' or 'mlp', got {config['policy']!r}")


def _opponent_pool(config: dict[str, Any], snapshots: list[str]) -> tuple[list[Any], list[float]]:
    """The opponents and their weights, in the order of ``config["opponents"]`` (then the
    snapshots): an env draws an index into this list, so the order is part of the run."""
    agents: list[Any] = []
    weights: list[float] = []
    mixture = dict(config["opponents"])
    self_weight = float(mixture.pop("self", 0.0))
    for spec, weight in mixture.items():
        agents.append(make_agent(spec, config["env"]))
        weights.append(float(weight))
    if snapshots and self_weight > 0:
        for path in snapshots:
            agents.append(PolicyAgent(path, deterministic=False))
            weights.append(self_weight / len(snapshots))
    return agents, weights


def make_vec_env(config: dict[str, Any], snapshots: list[str], seed: int) -> Any:
    from stable_baselines3.common.monitor import Monitor

    from polarzoo.wrappers import SingleAgentEnv
    from polarzoo.wrappers.checkpointing import Checkpointable
    from polarzoo.wrappers.opponent_batching import OpponentBatchingVecEnv
    from polarzoo.wrappers.subproc import MaskCachingSubprocVecEnv

    def factory(rank: int):  # noqa: ANN202
        def build() -> Any:
            if config["vec_env"] == "subproc":
                import torch

                # One process per env on a few cores: the snapshot opponents' small forward
                # passes gain nothing from threads that would only contend with the other envs.
                torch.set_num_threads(1)
            agents, weights = _opponent_pool(config, snapshots)
            env = SingleAgentEnv(
                config["env"], opponents=agents, opponent_weights=weights, learner_seat=config["learner_seat"],
                env_kwargs=config["env_kwargs"],
            )
            if config["shaping"]:
                from polarzoo.wrappers.shaping import PotentialShaping

                # Monitor inside: the logged episode returns stay the game's own.
                return Checkpointable(PotentialShaping(Monitor(env), scale=config["shaping"], gamma=config["gamma"]))
            # Outermost: the whole stack can be saved at an update and put back (exact --resume).
            return Checkpointable(Monitor(env))

        return build

    # dummy: one process, the snapshot opponents' moves batched across the envs (one forward pass
    # for all instead of one per env); subproc: one process per env, the masks sent with the steps.
    cls = MaskCachingSubprocVecEnv if config["vec_env"] == "subproc" else OpponentBatchingVecEnv
    vec_env = cls([factory(i) for i in range(config["n_envs"])])
    vec_env.seed(seed)
    return vec_env


def capture_update_boundary(model: Any, counters: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Everything a run needs to continue exactly from here, between two PPO updates: the
    weights and optimizer (also in the model zip), every generator (torch, NumPy, Python), the
    rollout's starting observation, each env stack (games in progress, their generators, the
    opponent pool, the wrappers' state), the episode statistics and the callback's schedule."""
    import copy
    import random

    import torch

    return {
        "timesteps": int(model.num_timesteps), "n_updates": int(model._n_updates),
        "policy": copy.deepcopy(model.policy.state_dict()), "optimizer": copy.deepcopy(model.policy.optimizer.state_dict()),
        "torch_rng": torch.get_rng_state(), "numpy_rng": np.random.get_state(), "python_rng": random.getstate(),
        "last_obs": copy.deepcopy(model._last_obs), "last_episode_starts": copy.deepcopy(model._last_episode_starts),
        "ep_info_buffer": list(model.ep_info_buffer or []), "ep_success_buffer": list(model.ep_success_buffer or []),
        "envs": model.get_env().env_method("get_state"), "counters": dict(counters), "state": copy.deepcopy(state),
    }


def restore_update_boundary(model: Any, boundary: dict[str, Any]) -> None:
    """Put a saved :func:`capture_update_boundary` (``exact.pkl``) back into a ``model`` loaded
    from the checkpoint beside it (which holds the weights and optimizer): generators,
    observation, episode statistics and envs, so that ``learn`` continues without resetting the envs."""
    import random
    from collections import deque

    import torch

    model.num_timesteps, model._n_updates = boundary["timesteps"], boundary["n_updates"]
    model._last_obs, model._last_episode_starts = boundary["last_obs"], boundary["last_episode_starts"]
    model.ep_info_buffer = deque(boundary["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(boundary["ep_success_buffer"], maxlen=model._stats_window_size)
    env = model.get_env()
    for index, blob in enumerate(boundary["envs"]):
        env.env_method("set_state", blob, indices=[index])
    # The generators last: SB3's load of the checkpoint (before this call) reseeded torch, NumPy
    # and Python's generators (set_random_seed in _setup_model).
    torch.set_rng_state(boundary["torch_rng"])
    np.random.set_state(boundary["numpy_rng"])
    random.setstate(boundary["python_rng"])


def _training_callback(run_dir: Path, config: dict[str, Any], state: dict[str, Any], log_every: float = 0.0,
                       counters: dict[str, Any] | None = None, seconds_before: float = 0.0,
                       threads: tuple[int, int] = (0, 0)) -> Any:
    """``threads``: the learner's torch threads while collecting and in the update (0 = leave as
    they are)."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    collect_threads, update_threads = threads

    class SelfPlayCallback(BaseCallback):
        """Checkpoints, snapshots into the opponent pool, periodic evaluation."""

        def __init__(self) -> None:
            super().__init__()
            self.next_checkpoint = state["timesteps"] + config["checkpoint_every"]
            self.next_snapshot = state["timesteps"] + config["snapshot_every"] if config["snapshot_every"] else None
            self.next_eval = state["timesteps"] + config["eval_every"] if config["eval_every"] else None
            if counters:  # an exact resume: the schedule of the run it continues
                self.next_checkpoint, self.next_snapshot, self.next_eval = (
                    counters["next_checkpoint"], counters["next_snapshot"], counters["next_eval"])
            #: the state at the start of the current rollout (the last update boundary)
            self.boundary: dict[str, Any] | None = None
            self.started, self.steps_at_start, self.last_log = time.perf_counter(), state["timesteps"], time.perf_counter()
            self.last_eval = ""

        def _log_progress(self) -> None:
            # Without a terminal (a log file, a cluster job) a progress bar shows nothing until
            # the end: one line at a steady interval instead.
            now = time.perf_counter()
            if not log_every or now - self.last_log < log_every:
                return
            self.last_log = now
            done, total = self.num_timesteps, config["total_timesteps"]
            fps = (done - self.steps_at_start) / max(now - self.started, 1e-9)
            eta = max(total - done, 0) / fps if fps > 0 else float("inf")  # the last rollout may overshoot
            eta_text = time.strftime("%H:%M:%S", time.gmtime(eta)) if eta < 360_000 else "?"
            print(f"{done:,}/{total:,} timesteps ({100 * done / max(total, 1):.0f}%), {fps:.0f} fps, ETA {eta_text}"
                  f"{self.last_eval}", flush=True)

        def _on_step(self) -> bool:
            steps = self.num_timesteps
            self._log_progress()
            for done, info in zip(self.locals.get("dones", ()), self.locals.get("infos", ())):
                if done and (info.get("final_infos") or {}).get("physics_error"):
                    # Thin Ice: the simulation went unstable, the env rolled back and truncated
                    # the episode; count it and carry on.
                    state["physics_failures"] = int(state.get("physics_failures", 0)) + 1
                    self.logger.record("rollout/physics_failures", state["physics_failures"])
            if self.next_snapshot is not None and steps >= self.next_snapshot:
                self._snapshot()
                self.next_snapshot += config["snapshot_every"]
            if self.next_eval is not None and steps >= self.next_eval:
                self._evaluate()
                self.next_eval += config["eval_every"]
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
                self.next_checkpoint += config["checkpoint_every"]
            # The training time up to this boundary travels with it: a resumed run's
            # training.json then counts every part, not only the last learn() call.
            state["train_seconds"] = seconds_before + time.perf_counter() - self.started
            self.boundary = capture_update_boundary(self.model, self.counters(), state)
            if due:
                save_checkpoint(run_dir, self.model, state, self.boundary)

        def _snapshot(self) -> None:
            path = run_dir / "snapshots" / f"snapshot_{self.num_timesteps}.zip"
            save_model(self.model, path)
            state["snapshots"] = (state["snapshots"] + [str(path)])[-config["max_snapshots"] :]
            agents, weights = _opponent_pool(config, state["snapshots"])
            env = self.training_env
            # Replace each env's pool: references + the newest snapshots.
            for i in range(env.num_envs):
                env.env_method("set_pool", agents, weights, indices=[i])

        def _evaluate(self) -> None:
            learner = PolicyAgent(model=self.model, name="learner")
            rows = []
            games = evaluation_env_kwargs(config)
            for env_kwargs in games:
                # Several player counts (Thin Ice): a row per count, its opponent named with it.
                suffix = f" ({env_kwargs['num_players']} players)" if len(games) > 1 else ""
                tag = f"_{env_kwargs['num_players']}p" if len(games) > 1 else ""
                for spec in REFERENCE_AGENTS:
                    try:
                        opponent = make_agent(spec, config["env"])
                    except ValueError:
                        continue
                    result = head_to_head(config["env"], learner, opponent, config["eval_games"], seed=10_000, env_kwargs=env_kwargs)
                    low, high = wilson_interval(result.wins, result.games)
                    rate = result.wins / result.games
                    self.logger.record(f"eval/win_rate_vs_{spec}{tag}", rate)
                    row = {"timesteps": self.num_timesteps, "opponent": spec + suffix, "win_rate": rate, "ci_low": low, "ci_high": high,
                           "games": result.games, "illegal": result.illegal}
                    # Both seats together can hide a seat that never learns (the Floe's bears did):
                    # each seat's own win rate too.
                    for index, seat in enumerate(seat_names(config["env"], env_kwargs)):
                        wins, draws, losses = result.by_seat.get(index, [0, 0, 0])
                        seat_rate = wins / max(1, wins + draws + losses)
                        row[f"win_rate_as_{seat}"] = seat_rate
                        self.logger.record(f"eval/win_rate_vs_{spec}{tag}_as_{seat}", seat_rate)
                    rows.append(row)
            self.last_eval = "; last evaluation (" + f"{self.num_timesteps:,}): " + ", ".join(
                f"{row['win_rate']:.0%} vs {row['opponent']}" for row in rows)
            if log_every:
                print(f"evaluation at {self.num_timesteps:,} timesteps: " + ", ".join(
                    f"{row['win_rate']:.0%} [{row['ci_low']:.0%}, {row['ci_high']:.0%}] vs {row['opponent']}" for row in rows), flush=True)
            path = run_dir / "evaluations.csv"
            new = not path.exists() or path.stat().st_size == 0
            fields = list(dict.fromkeys(key for row in rows for key in row))  # every seat of every player count
            if not new:  # a run resumed from an older version keeps its file's columns
                with path.open(newline="") as handle:
                    fields = next(csv.reader(handle), fields)
            with path.open("a", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
                if new:
                    writer.writeheader()
                writer.writerows(rows)

    return SelfPlayCallback()


def behaviour_clone(model: Any, config: dict[str, Any], run_dir: Path, seed: int, state: dict[str, Any],
                    progress_bar: bool = True, again: str = "") -> None:
    """Warm-start the policy by copying ``bc_teacher``'s moves (see baselines/training/imitation.py).

    The demonstrations are kept in ``run_dir/demonstrations.npz`` and the weights are saved after
    every epoch, so a Ctrl-C (or a kill) during cloning loses at most one epoch: ``--resume``
    continues with the epochs left."""
    started = time.perf_counter()
    done = int(state.get("bc_epochs_done", 0))
    demos = run_dir / "demonstrations.npz"
    if demos.exists():
        data = np.load(demos, allow_pickle=False)
        observations, masks, actions = data["observations"], data["masks"], data["actions"]
    else:
        teacher = make_agent(config["bc_teacher"], config["env"])
        try:
            observations, masks, actions = collect_demonstrations(config["env"], teacher, config["bc_games"], seed=seed + 77,
                                                                  env_kwargs=config["env_kwargs"], show_progress=progress_bar)
        except KeyboardInterrupt:
            # The untrained model is saved as the checkpoint --resume starts from.
            save_checkpoint(run_dir, model, state)
            print(f"\ninterrupted while collecting the teacher's demonstrations (nothing trained yet); "
                  f"{again or f'--resume {run_dir}'} collects them again (the games are seeded)", file=sys.stderr)
            sys.exit(130)
        temporary = run_dir / "demonstrations.tmp.npz"
        np.savez_compressed(temporary, observations=observations, masks=masks, actions=actions)
        temporary.replace(demos)
    losses = list(state.get("bc_losses", []))

    def after_epoch(epoch: int, loss: float) -> None:
        losses.append(loss)
        state["bc_epochs_done"], state["bc_losses"] = done + epoch + 1, losses
        save_checkpoint(run_dir, model, state)

    try:
        clone(model, observations, masks, actions, epochs=config["bc_epochs"] - done, seed=seed + done, on_epoch=after_epoch,
              show_progress=progress_bar)
    except KeyboardInterrupt:
        print(f"\ninterrupted during behaviour cloning after {state.get('bc_epochs_done', 0)} of {config['bc_epochs']} epochs "
              f"(saved); continue with {again or f'--resume {run_dir}'}")
        sys.exit(130)
    report = {"teacher": config["bc_teacher"], "games": config["bc_games"], "samples": len(actions), "epochs": config["bc_epochs"],
              "loss_per_epoch": losses, "seconds": time.perf_counter() - started}
    atomic_write(run_dir / "behaviour_cloning.json", json.dumps(report, indent=2))
    if losses:
        print(f"behaviour cloning: {len(actions)} moves of {config['bc_teacher']} from {config['bc_games']} games, "
              f"loss {losses[0]:.2f} -> {losses[-1]:.2f} in {report['seconds']:.0f} s")


def save_checkpoint(run_dir: Path, model: Any, state: dict[str, Any], boundary: dict[str, Any] | None = None) -> None:
    """``checkpoints/latest.zip`` + ``state.json`` (+ ``exact.pkl``, the update boundary that
    makes ``--resume`` an exact continuation); the one before is kept as ``previous.zip`` +
    ``previous_state.json`` (+ ``previous_exact.pkl``), for a latest file that a crash or a full
    disk left unreadable.  With ``boundary`` the model is saved as it was at that boundary."""
    import copy
    import pickle

    folder = run_dir / "checkpoints"
    folder.mkdir(exist_ok=True)
    if boundary is not None:
        # (a Ctrl-C inside an update leaves the weights half-updated: the boundary's are saved;
        # a copy, as the optimizer would otherwise go on updating the boundary's own tensors)
        model.policy.load_state_dict(boundary["policy"])
        model.policy.optimizer.load_state_dict(copy.deepcopy(boundary["optimizer"]))
        model.num_timesteps, model._n_updates = boundary["timesteps"], boundary["n_updates"]
        state = {**boundary["state"], "timesteps": boundary["timesteps"]}
    state["timesteps"] = int(model.num_timesteps)
    try:
        model.save(folder / "latest.tmp.zip")
    except BaseException:  # a full disk or a Ctrl-C mid-write: no half-written file is left behind
        (folder / "latest.tmp.zip").unlink(missing_ok=True)
        raise
    exact = {key: value for key, value in boundary.items() if key not in ("policy", "optimizer")} if boundary else None
    if exact is not None:
        try:
            atomic_write(folder / "exact.tmp.pkl", pickle.dumps(exact))
        except BaseException:
            (folder / "latest.tmp.zip").unlink(missing_ok=True)
            raise
    if (folder / "latest.zip").exists() and (folder / "state.json").exists():
        (folder / "latest.zip").replace(folder / "previous.zip")
        (folder / "state.json").replace(folder / "previous_state.json")
        if (folder / "exact.pkl").exists():
            (folder / "exact.pkl").replace(folder / "previous_exact.pkl")
        else:
            (folder / "previous_exact.pkl").unlink(missing_ok=True)
    (folder / "latest.tmp.zip").replace(folder / "latest.zip")  # atomic: a kill never leaves half a file
    if exact is not None:
        (folder / "exact.tmp.pkl").replace(folder / "exact.pkl")
    else:
        (folder / "exact.pkl").unlink(missing_ok=True)
    atomic_write(folder / "state.json", json.dumps(state, indent=2))


def read_checkpoint_state(run_dir: Path) -> tuple[dict[str, Any], str]:
    """The state of the newest readable checkpoint and its model file name; ``ValueError`` saying
    what is wrong when there is none."""
    folder = run_dir / "checkpoints"
    problems = []
    for model_name, state_name in (("latest.zip", "state.json"), ("previous.zip", "previous_state.json")):
        model_path, state_path = folder / model_name, folder / state_name
        if not model_path.exists() or not state_path.exists():
            problems.append(f"{model_name}: missing")
            continue
        try:
            state = json.loads(state_path.read_text())
            if not isinstance(state, dict) or "timesteps" not in state:
                raise ValueError("no timesteps")
            with zipfile.ZipFile(model_path) as archive:
                damaged = archive.testzip()  # the first member whose CRC fails, or None
                # torch's .pth members are archives themselves: a cut inside one can pass the outer CRCs
                for member in (name for name in archive.namelist() if name.endswith(".pth")):
                    data = archive.read(member)
                    if damaged is None and data.startswith(b"PK\x03\x04"):  # torch's zip format (not the legacy pickle)
                        with zipfile.ZipFile(io.BytesIO(data)) as nested:
                            inner = nested.testzip()
                        damaged = None if inner is None else f"{member}/{inner}"
            if damaged is not None:
                raise ValueError(f"{damaged} is damaged")
            return state, model_name
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as error:
            problems.append(f"{model_name}: unreadable ({type(error).__name__})")
    raise ValueError(f"no readable checkpoint in {folder} ({'; '.join(problems)})")


def read_exact(run_dir: Path, model_name: str, timesteps: int) -> dict[str, Any] | None:
    """The update boundary saved with checkpoint ``model_name`` (``exact.pkl`` beside
    ``latest.zip``, ``previous_exact.pkl`` beside ``previous.zip``), or None when there is none
    for these timesteps (a checkpoint of older code, or a damaged file)."""
    import pickle

    name = "exact.pkl" if model_name == "latest.zip" else "previous_exact.pkl"
    try:
        boundary = restricted_loads((run_dir / "checkpoints" / name).read_bytes())
    except UnsafePickle as error:  # a crafted file: said, never run
        raise ValueError(f"{run_dir / 'checkpoints' / name}: {error}") from None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError):
        return None
    return boundary if isinstance(boundary, dict) and boundary.get("timesteps") == timesteps else None


def checkpoint_objects(path: Path) -> dict[str, Any]:
    """The pickled entries of an SB3 checkpoint zip's ``data``, read by the restricted unpickler
    (:func:`polarzoo.envs.utils.restricted_loads`) and handed to SB3's ``load`` as ``custom_objects``,
    so that SB3 unpickles none of them itself; ``ValueError`` for one that names other code."""
    import base64

    with zipfile.ZipFile(path) as archive:
        data = json.loads(archive.read("data"))
    objects = {}
    for key, value in data.items():
        if isinstance(value, dict) and ":serialized:" in value:
            try:
                objects[key] = restricted_loads(base64.b64decode(value[":serialized:"].encode()))
            except UnsafePickle as error:
                raise ValueError(f"{path}: its {key}: {error}") from None
    return objects


def drop_later_evaluations(run_dir: Path, timesteps: int) -> None:
    """Rows of ``evaluations.csv`` after ``timesteps`` (an evaluation the interrupted rollout ran):
    the resumed run evaluates there again, with the same result."""
    path = run_dir / "evaluations.csv"
    if not path.exists():
        return
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        return
    column = rows[0].index("timesteps") if "timesteps" in rows[0] else 0
    kept = [rows[0]] + [row for row in rows[1:] if row and int(row[column]) <= timesteps]
    if len(kept) != len(rows):
        import io

        buffer = io.StringIO()
        csv.writer(buffer).writerows(kept)
        atomic_write(path, buffer.getvalue())


def choose_torch_threads(config: dict[str, Any]) -> tuple[int, str]:
    """The learner's torch threads and why: ``torch_threads`` when set (> 0); otherwise (0 =
    auto) one per core this process may run on, and one when the envs run in subprocesses (they
    take the cores).  Never the machine's load: the thread count changes the floating-point sums,
    so a run's model would depend on what else was running (on a busy machine, set
    ``torch_threads: 1``; the reason says so when the load is high)."""
    requested = int(config.get("torch_threads") or 0)
    if requested > 0:
        return requested, "torch_threads in the config"
    if config.get("vec_env") == "subproc":
        return 1, "auto: the envs run in subprocesses on the other cores"
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on this platform
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    busy = f"; the machine is busy (1-minute load {load:.1f}): torch_threads: 1 may train faster" if load > cores / 2 else ""
    return cores, f"auto: the {cores} cores this process may use, whatever the load{busy}"


def train(config: dict[str, Any], run_dir: Path, resume: bool = False, seed: int = 0, progress_bar: bool = True,
          final_eval: bool = True, log_every: float = 0.0, again: str = "") -> Path:
    """Train (then evaluate) into ``run_dir``; ``log_every`` > 0 prints a progress line that
    often (seconds), for logs, where a progress bar shows nothing until the end.  ``again``: the
    command a Ctrl-C's message advises to continue (default ``--resume RUN_DIR``, the trainer's)."""
    import torch
    from sb3_contrib import MaskablePPO

    from polarzoo.baselines.training.rollouts import AsyncRolloutPPO

    algorithm = AsyncRolloutPPO if config.get("rollouts") == "async" else MaskablePPO
    if config.get("rollouts") == "async" and config["vec_env"] != "subproc":
        # (AsyncRolloutPPO is then MaskablePPO to the bit: the envs share one process anyway)
        print("rollouts: async steps subprocess envs; with vec_env: dummy the rollouts are lock steps", flush=True)
    threads, why = choose_torch_threads(config)
    torch.set_num_threads(threads)
    update_threads = int(config.get("update_threads") or threads)
    in_update = f"; {update_threads} in the update (update_threads)" if update_threads != threads else ""
    print(f"torch threads: {threads} ({why}){in_update}", flush=True)
    (run_dir / "snapshots").mkdir(parents=True, exist_ok=True)
    state: dict[str, Any] = {"timesteps": 0, "snapshots": [], "seed": seed}
    model_name = "latest.zip"
    if resume:
        state, model_name = read_checkpoint_state(run_dir)
        if model_name != "latest.zip":
            print(f"checkpoints/latest.zip is unreadable: resuming from the previous checkpoint ({state['timesteps']} timesteps)")
        seed = int(state.get("seed", seed))
        state["snapshots"] = [p for p in state.get("snapshots", []) if Path(p).exists()]
    vec_env = make_vec_env(config, state["snapshots"], seed + state["timesteps"])
    counters = None
    if resume:
        model = algorithm.load(run_dir / "checkpoints" / model_name, env=vec_env, device=config["device"],
                                 tensorboard_log=str(run_dir / "tb"), custom_objects=checkpoint_objects(run_dir / "checkpoints" / model_name))
        boundary = read_exact(run_dir, model_name, state["timesteps"])
        if boundary is not None:
            restore_update_boundary(model, boundary)
            counters = boundary["counters"]
            drop_later_evaluations(run_dir, state["timesteps"])
            print(f"resuming {run_dir} at {model.num_timesteps} timesteps (seed {seed}): exactly where it stopped "
                  "(games in progress, generators and schedule restored)")
        else:
            print(f"resuming {run_dir} at {model.num_timesteps} timesteps (seed {seed}); the checkpoint has no exact "
                  "state (written by older code): the envs start new games")
    else:
        policy, policy_kwargs = policy_and_kwargs(config)
        model = algorithm(
            policy, vec_env, learning_rate=config["learning_rate"], n_steps=config["n_steps"], batch_size=config["batch_size"],
            n_epochs=config["n_epochs"], gamma=config["gamma"], gae_lambda=config["gae_lambda"], ent_coef=config["ent_coef"],
            clip_range=config["clip_range"], policy_kwargs=policy_kwargs, seed=seed, device=config["device"],
            tensorboard_log=str(run_dir / "tb"), verbose=0,
        )
    if config.get("init_model") and not resume:
        path = init_model_path(config)
        try:  # the weights only (a .safetensors or a zip's policy.pth): nothing in the file runs
            model.policy.load_state_dict(load_policy_weights(path)[1], strict=True)
        except ModelFileError as error:
            raise InitModelError(f"init_model {error}") from None
        except (ValueError, RuntimeError, KeyError) as error:
            raise InitModelError(f"init_model {path} does not fit this config's policy ({str(error).splitlines()[0]})") from None
        print(f"starting from the weights of {path}")
    if config.get("bc_games", 0) > 0 and state.get("bc_epochs_done", 0) < config["bc_epochs"] and model.num_timesteps == 0:
        behaviour_clone(model, config, run_dir, seed, state, progress_bar, again)
    remaining = config["total_timesteps"] - model.num_timesteps
    started = time.perf_counter()
    steps_before = model.num_timesteps
    # A checkpoint written by older code has no training time: the count then starts here.
    seconds_before = float(state.get("train_seconds", 0.0))
    seconds_from = int(state.get("train_seconds_from", steps_before if "train_seconds" not in state else 0))
    state["train_seconds_from"] = seconds_from
    callback = _training_callback(run_dir, config, state, log_every, counters, seconds_before, (threads, update_threads))
    try:
        if remaining > 0:
            model.learn(remaining, callback=callback, reset_num_timesteps=not resume, progress_bar=progress_bar, tb_log_name="ppo")
    except KeyboardInterrupt:
        # The last update boundary: resuming from it replays the interrupted rollout exactly.
        save_checkpoint(run_dir, model, state, callback.boundary)
        print(f"\ninterrupted: checkpoint saved at {model.num_timesteps} timesteps (the last update); "
              f"continue with {again or f'--resume {run_dir}'}")
        sys.exit(130)
    elapsed = time.perf_counter() - started
    torch.set_num_threads(threads)  # learn() ends after an update: the evaluation plays as the rollouts did
    state["train_seconds"] = seconds_before + elapsed
    # learn() ends after an update: an exact point to continue from (a larger --total-timesteps)
    save_checkpoint(run_dir, model, state, capture_update_boundary(model, callback.counters(), state))
    save_model(model, run_dir / "model.zip")
    # the shareable copy: weights and settings only (a zip's pickles run code when loaded)
    save_policy(model, run_dir / "model.safetensors", env_id=config["env"])
    fps = (model.num_timesteps - steps_before) / max(elapsed, 1e-9)
    # "seconds": every part of the run (a resumed run included) from "seconds_from" timesteps on
    # (0 unless it continued a checkpoint of older code); "fps": this part's speed.
    record = {"timesteps": model.num_timesteps, "seconds": state["train_seconds"], "seconds_from": seconds_from,
              "fps": fps, "seconds_this_part": elapsed}
    atomic_write(run_dir / "training.json", json.dumps(record, indent=2))
    resumed = f" ({elapsed:.0f} s in this part)" if seconds_before or steps_before else ""
    print(f"trained {model.num_timesteps} timesteps in {state['train_seconds']:.0f} s{resumed} ({fps:.0f} fps); "
          f"model: {run_dir / 'model.zip'} (weights only, to share: {run_dir / 'model.safetensors'})")
    if state.get("physics_failures"):
        print(f"{state['physics_failures']} episodes were truncated by a physics failure (rolled back; see tb rollout/physics_failures)")
    vec_env.close()
    if final_eval:
        trained = PolicyAgent(run_dir / "model.safetensors", name="trained")
        references = []
        for spec in REFERENCE_AGENTS:
            try:
                references.append(make_agent(spec, config["env"]))
            except ValueError:
                pass
        games = evaluation_env_kwargs(config)
        for env_kwargs in games:
            # Two players: a round robin of the trained model and the references; more: one
            # lineup, the trained model, random and heuristics in the other seats, every rotation.
            seats = len(seat_names(config["env"], env_kwargs))
            agents = [trained, *references] if seats <= len(references) + 1 else [trained, *references, *references[-1:] * (seats - 1 - len(references))]
            out = run_dir if len(games) == 1 else run_dir / f"eval-{seats}p"
            try:
                summary = evaluate(config["env"], [], config["final_eval_games"], out, seed=20_000, env_kwargs=env_kwargs,
                                   run_dir=run_dir, agents=agents, show_progress=progress_bar)
            except KeyboardInterrupt:
                print(f"\ninterrupted during the final evaluation: the trained model is saved ({run_dir / 'model.zip'}), the "
                      f"finished games are in {out / 'games.jsonl'}; --resume {run_dir} runs the evaluation again",
                      file=sys.stderr)
                sys.exit(130)
            players = f", {seats} players" if len(games) > 1 else ""
            print(f"\n## Final evaluation: {config['env']}{players}, {config['final_eval_games']} games per pairing and seat\n")
            print(summary["table"])
            print("\nwritten:\n" + "\n".join(f"  {path}" for path in [str(run_dir / "model.zip"), str(run_dir / "model.safetensors"),
                                                                     *summary["written"]]))
    print(f"view the training logs: tensorboard --logdir {run_dir / 'tb'}")
    return run_dir


#: config keys that must be positive whole numbers, and those that may also be 0 (= off)
POSITIVE_KEYS = ("total_timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_games", "final_eval_games",
                 "checkpoint_every", "max_snapshots", "bc_epochs")
NON_NEGATIVE_KEYS = ("snapshot_every", "eval_every", "bc_games", "torch_threads", "update_threads")
#: Real-valued settings and their allowed ranges.
NUMBER_RANGES = {"learning_rate": (0.0, 1.0), "gamma": (0.0, 1.0), "gae_lambda": (0.0, 1.0), "ent_coef": (0.0, 10.0),
                 "clip_range": (0.0, 10.0), "shaping": (-100.0, 100.0)}


class InitModelError(ValueError):
    """``init_model`` names a model whose policy differs from the config's."""


def init_model_path(config: dict[str, Any]) -> Path:
    """The model file named by ``init_model`` (``"pretrained"``: the shipped model of the env)."""
    if config["init_model"] == "pretrained":
        return pretrained_path(config["env"])
    return Path(config["init_model"])


def config_seats(config: dict[str, Any]) -> list[str]:
    """The seat (agent) names of the game a training config plays, with its env arguments (of
    its largest game when ``num_players`` is a list)."""
    return seat_names(config["env"], evaluation_env_kwargs(config)[-1])


def evaluation_env_kwargs(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The env arguments of each game the evaluations play: the config's own, or one per player
    count when ``env_kwargs.num_players`` is a list (Thin Ice, a count drawn per episode)."""
    kwargs = dict(config["env_kwargs"])
    counts = player_counts(config["env"], kwargs.get("num_players"))
    if counts is None:
        return [kwargs]
    return [{**kwargs, "num_players": n} for n in sorted(set(counts))]


def check_config(config: dict[str, Any]) -> None:
    """``ValueError`` naming the first bad value (before any work starts)."""
    for key in POSITIVE_KEYS + NON_NEGATIVE_KEYS:
        value = config.get(key)
        least = 1 if key in POSITIVE_KEYS else 0
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise ValueError(f"{key} must be a whole number >= {least}, got {value!r}")
    for key, (low, high) in NUMBER_RANGES.items():
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"{key} must be a number in [{low:g}, {high:g}], got {value!r}")
    for key in ("env_kwargs", "board_policy"):
        if not isinstance(config.get(key, {}), dict):
            raise ValueError(f"{key} must be a mapping, got {config.get(key)!r}")
    arch = config.get("net_arch", [])
    if not isinstance(arch, list) or not all(isinstance(w, int) and not isinstance(w, bool) and w > 0 for w in arch):
        raise ValueError(f"net_arch must be a list of layer widths (whole numbers > 0), got {arch!r}")
    if config["device"] not in ("cpu", "cuda", "auto"):
        raise ValueError(f"device must be cpu, cuda or auto, got {config['device']!r}")
    if config["vec_env"] not in ("dummy", "subproc"):
        raise ValueError(f"vec_env must be dummy or subproc, got {config['vec_env']!r}")
    if config.get("rollouts", "lockstep") not in ("lockstep", "async"):
        raise ValueError(f"rollouts must be lockstep or async, got {config['rollouts']!r}")
    if config["policy"] not in ("board", "mlp"):
        raise ValueError(f"policy must be board or mlp, got {config['policy']!r}")
    if not isinstance(config.get("opponents"), dict) or not config["opponents"]:
        raise ValueError("opponents must be a mapping like {random: 0.5, self: 0.5}")
    counts = player_counts(config["env"], (config.get("env_kwargs") or {}).get("num_players"))
    if counts is not None:
        if isinstance(config.get("learner_seat"), dict):
            raise ValueError("learner_seat: a mapping of seat weights needs one player count, not a list of them")
        if config.get("bc_games", 0) > 0:
            raise ValueError("bc_games: behaviour cloning plays one player count; set bc_games: 0 with a list of num_players")
    if isinstance(config.get("learner_seat"), dict):
        from polarzoo.wrappers.single_agent import seat_odds

        seat_odds(config["learner_seat"], config_seats(config))
    if config.get("init_model") is not None:
        if not isinstance(config["init_model"], str) or not config["init_model"]:
            raise ValueError(f"init_model must be a model file path (.safetensors or .zip) or 'pretrained', got {config['init_model']!r}")
        path = init_model_path(config)
        if not path.is_file():
            raise ValueError(f"init_model: no model file {path}")


def _config_defaults() -> Any:
    """``config_default(key)``: " (default from hyperparams.yaml: 250000 for fire_and_ice_v0, ...)"
    for ``--help``, or a pointer to the file when PyYAML is missing (a base install)."""
    from polarzoo.envs import ENVIRONMENTS

    values: dict[str, dict[str, Any]] = {}
    if yaml is not None:
        try:
            table = yaml.safe_load(CONFIG_PATH.read_text()) or {}
            for env_id in sorted(ENVIRONMENTS):
                values[env_id] = {**(table.get("default") or {}), **(table.get(env_id) or {})}
        except (OSError, yaml.YAMLError):
            values = {}

    def describe(key: str) -> str:
        if not values:
            return " (default: the config's value, baselines/training/hyperparams.yaml)"
        per_env = {env_id: config.get(key) for env_id, config in values.items()}
        shown = {v for v in per_env.values()}
        if len(shown) == 1:
            return f" (default: {next(iter(shown))}, from the config)"
        return " (default from the config: " + ", ".join(f"{v} for {e}" for e, v in per_env.items()) + ")"

    return describe


def main(argv: list[str] | None = None) -> None:
    from polarzoo.envs import ENVIRONMENTS

    parser = argparse.ArgumentParser(prog=prog_name("polarzoo.baselines.train"), description=__doc__, formatter_class=HelpFormatter)
    config_default = _config_defaults()
    parser.add_argument("--env", choices=sorted(ENVIRONMENTS), help="environment id (not needed with --resume)")
    parser.add_argument("--resume", type=Path, default=None, help="continue an interrupted run from its folder")
    parser.add_argument("--config", type=Path, default=None,
                        help="a hyperparameter YAML keyed by env id, layered over the packaged baselines/training/hyperparams.yaml "
                             "(it needs only the keys it changes)")
    parser.add_argument("--runs", type=Path, default=Path("runs"), help="parent folder of run folders")
    parser.add_argument("--run-name", default=None, help="run folder name (default <env>-<time>)")
    parser.add_argument("--seed", type=seed_type, default=0, help="training seed")
    parser.add_argument("--total-timesteps", type=int, default=None, help="override the config's budget (with --resume: a new total)" + config_default("total_timesteps"))
    parser.add_argument("--n-envs", type=int, default=None, help="override the number of parallel envs" + config_default("n_envs"))
    parser.add_argument("--eval-every", type=int, default=None, help="override the evaluation interval (0 = never)" + config_default("eval_every"))
    parser.add_argument("--eval-games", type=int, default=None, help="override games per seat in periodic evaluations" + config_default("eval_games"))
    parser.add_argument("--final-eval-games", type=int, default=None, help="override games per seat in the final evaluation" + config_default("final_eval_games"))
    parser.add_argument("--checkpoint-every", type=int, default=None, help="override the checkpoint interval" + config_default("checkpoint_every"))
    parser.add_argument("--snapshot-every", type=int, default=None, help="override the self-play snapshot interval (0 = never)" + config_default("snapshot_every"))
    parser.add_argument("--vec-env", choices=["dummy", "subproc"], default=None, help="vectorised env class" + config_default("vec_env"))
    parser.add_argument("--rollouts", choices=["lockstep", "async"], default=None,
                        help="how rollouts step the envs: lockstep (SB3's) or async (each env as soon as it is back; "
                             "needs --vec-env subproc)" + config_default("rollouts"))
    parser.add_argument("--bc-games", type=int, default=None, help="override the behaviour-cloning games (0 = off)" + config_default("bc_games"))
    parser.add_argument("--bc-epochs", type=int, default=None, help="override the behaviour-cloning epochs" + config_default("bc_epochs"))
    parser.add_argument("--torch-threads", type=int, default=None, help="override torch threads (0 = auto: the cores free at the start)" + config_default("torch_threads"))
    parser.add_argument("--update-threads", type=int, default=None,
                        help="override torch threads in the learner's update (0 = as --torch-threads)" + config_default("update_threads"))
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--log-every", type=float, default=60.0,
                        help="seconds between progress lines when there is no progress bar (output not a terminal, or "
                             "--no-progress); 0 = none")
    parser.add_argument("--no-final-eval", action="store_true", help="skip the evaluation after training")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run of about a minute that writes every output (tiny settings: "
                             + ", ".join(f"{key} {value}" for key, value in QUICK.items())
                             + "; where the config clones a teacher first, " + ", ".join(f"{key} {value}" for key, value in QUICK_BC.items())
                             + "; flags given beside it win)")
    args = parser.parse_args(argv)
    if args.log_every < 0:
        parser.error(f"--log-every must be at least 0 seconds, got {args.log_every}")
    if yaml is None:
        parser.error('training needs the train extra (PyYAML, torch, SB3): pip install "polarzoo[train]"')
    from polarzoo.envs.utils import MissingExtra, require

    try:
        require("sb3_contrib", "training")
    except MissingExtra as error:
        parser.error(str(error))
    overrides = {
        "total_timesteps": args.total_timesteps, "n_envs": args.n_envs, "eval_every": args.eval_every,
        "eval_games": args.eval_games, "final_eval_games": args.final_eval_games, "checkpoint_every": args.checkpoint_every,
        "snapshot_every": args.snapshot_every, "vec_env": args.vec_env, "rollouts": args.rollouts, "bc_games": args.bc_games, "bc_epochs": args.bc_epochs,
        "torch_threads": args.torch_threads, "update_threads": args.update_threads,
    }
    if args.quick:
        if args.resume:
            parser.error("--quick starts a new smoke run; it cannot be combined with --resume")
        overrides = {**QUICK, **{key: value for key, value in overrides.items() if value is not None}}
    for key, value in overrides.items():
        least = 1 if key in POSITIVE_KEYS else 0
        if isinstance(value, int) and value < least:
            parser.error(f"--{key.replace('_', '-')} must be at least {least}, got {value}")
    if args.resume:
        run_dir = args.resume
        if not run_dir.is_dir():
            parser.error(f"--resume {run_dir}: no such folder")
        if not (run_dir / "config.yaml").exists():
            parser.error(f"--resume {run_dir}: not a training run folder (no config.yaml); start a new run with --env")
        writable_folder_or_exit(parser, "--resume", run_dir)  # checkpoints are written into it
        try:
            saved = yaml.safe_load((run_dir / "config.yaml").read_text())
            config = saved_run_config(saved)
            check_config(config)
            state, model_name = read_checkpoint_state(run_dir)
            # a run folder from someone else: its pickles are read by the restricted unpickler
            # now, so that one naming other code is refused in one line before any work
            checkpoint_objects(run_dir / "checkpoints" / model_name)
            read_exact(run_dir, model_name, state["timesteps"])
        except (yaml.YAMLError, ValueError, TypeError, KeyError) as error:
            parser.error(f"--resume {run_dir}: {str(error).splitlines()[0]}")
        ignored = [f"--{name.replace('_', '-')}" for name in ("env", "config", "runs", "run_name", "seed", "n_envs", "eval_every",
                   "eval_games", "final_eval_games", "checkpoint_every", "snapshot_every", "vec_env", "rollouts", "bc_games", "bc_epochs",
                   "torch_threads", "update_threads") if getattr(args, name) != parser.get_default(name)]
        if ignored:
            print(f"resuming: ignoring {', '.join(ignored)} (the run's saved config and seed are used)")
        if args.total_timesteps:
            config["total_timesteps"] = args.total_timesteps
    else:
        if not args.env:
            parser.error("--env is required unless --resume is given")
        try:
            config = load_config(args.env, overrides, args.config or CONFIG_PATH)
            if args.quick and config.get("bc_games", 0) > 0:  # the same job, its cloning a smoke too
                config.update({key: value for key, value in QUICK_BC.items() if overrides.get(key) is None})
            check_config(config)
        except FileNotFoundError:
            parser.error(f"--config {args.config}: no such file")
        except yaml.YAMLError as error:
            parser.error(f"--config {args.config}: not valid YAML ({str(error).splitlines()[0]})")
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            parser.error(f"--config {args.config}: {error}")
        run_dir = run_dir_or_exit(parser, args.runs, args.run_name, args.env)
        # In the config's own order: the opponents' order is the pool's, which the seeded draws of
        # an opponent index follow (a sorted copy made --resume pick other opponents after a snapshot).
        atomic_write(run_dir / "config.yaml", yaml.safe_dump(config, sort_keys=False))
    print(f"run folder: {run_dir}", flush=True)
    with (run_dir / "command.txt").open("a") as handle:
        handle.write("python -m polarzoo.baselines.train " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])) + "\n")
    try:
        bar = not args.no_progress and sys.stdout.isatty()
        train(config, run_dir, resume=args.resume is not None, seed=args.seed, progress_bar=bar,
              final_eval=not args.no_final_eval, log_every=0.0 if bar else args.log_every)
    except InitModelError as error:
        parser.error(str(error))
    except OSError as error:
        # A full disk (or a folder that went away) while writing a checkpoint, a snapshot or the
        # model: files are written under temporary names, so the last complete checkpoint stands.
        print(f"error: could not write into {run_dir} ({error.strerror or error}); the last complete checkpoint is kept: "
              f"make room, then continue with --resume {run_dir}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
