"""A training run's checkpoints: the model and state written atomically (``latest`` and the
``previous`` one kept), the update boundary that makes ``--resume`` an exact continuation
(``exact.pkl``, read back by the restricted unpickler: a file from someone else runs no code),
and the helpers that read them back."""

from __future__ import annotations

import csv
import io
import json
import pickle
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.cli.runs import atomic_write, interrupts_deferred
from polarzoo.envs.utils import UnsafePickle, restricted_loads


def capture_update_boundary(model: Any, counters: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Everything a run needs to continue exactly from here, between two PPO updates: the
    weights and optimizer (also in the model zip), every generator (torch, NumPy, Python), the
    rollout's starting observation, each env stack (games in progress, their generators, the
    opponent pool, the wrappers' state), the episode statistics and the callback's schedule."""
    import copy
    import random

    import torch

    return {
        "timesteps": int(model.num_timesteps),
        "n_updates": int(model._n_updates),
        "policy": copy.deepcopy(model.policy.state_dict()),
        "optimizer": copy.deepcopy(model.policy.optimizer.state_dict()),
        "torch_rng": torch.get_rng_state(),
        "numpy_rng": np.random.get_state(),
        "python_rng": random.getstate(),
        "last_obs": copy.deepcopy(model._last_obs),
        "last_episode_starts": copy.deepcopy(model._last_episode_starts),
        "ep_info_buffer": list(model.ep_info_buffer or []),
        "ep_success_buffer": list(model.ep_success_buffer or []),
        "envs": model.get_env().env_method("get_state"),
        "counters": dict(counters),
        "state": copy.deepcopy(state),
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


def save_checkpoint(run_dir: Path, model: Any, state: dict[str, Any], boundary: dict[str, Any] | None = None) -> None:
    """``checkpoints/latest.zip`` + ``state.json`` (+ ``exact.pkl``, the update boundary that
    makes ``--resume`` an exact continuation); the one before is kept as ``previous.zip`` +
    ``previous_state.json`` (+ ``previous_exact.pkl``), for a latest file that a crash or a full
    disk left unreadable.  With ``boundary`` the model is saved as it was at that boundary."""
    with interrupts_deferred():  # a Ctrl-C waits for the checkpoint to be whole
        _save_checkpoint(run_dir, model, state, boundary)


def _save_checkpoint(run_dir: Path, model: Any, state: dict[str, Any], boundary: dict[str, Any] | None) -> None:
    import copy

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
                # A file cut just after the end record of the zip inside it (torch's policy.pth)
                # opens as that inner zip: no ``data`` member, which SB3's load would only assert.
                if "data" not in archive.namelist():
                    raise ValueError("no data member (the file is cut short)")
                json.loads(archive.read("data"))
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
        buffer = io.StringIO()
        csv.writer(buffer).writerows(kept)
        atomic_write(path, buffer.getvalue())
