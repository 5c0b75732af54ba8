"""A training run's checkpoints, as data only: the model's weights and optimizer in
``latest.safetensors`` (SB3's objects are rebuilt from the run's config, never read from a file),
``state.json``, and the update boundary that makes ``--resume`` an exact continuation in
``exact.npz`` (a JSON tree of the games in progress, the generators and the rollout, and its
arrays: :func:`polarzoo.envs.utils.encode_state`; read with ``allow_pickle=False`` and put back
into the live objects of the rebuilt run, never building what the file names).  The one before
is kept (``previous.*``) for a latest file that a crash or a full disk left unreadable.  A run
folder of polarzoo 0.3 and earlier (``latest.zip``, ``exact.pkl``: pickles) is refused in one line, or
read with ``--trust-pickles``, which runs what they hold."""

from __future__ import annotations

import csv
import io
import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.cli.runs import atomic_write, interrupts_deferred
from polarzoo.baselines.policies.weights import pickles_trusted
from polarzoo.baselines.training.config import TrainingState
from polarzoo.envs.utils import DataError, check_regular_file, encode_state, loads_json, read_json_file, restore_state

FORMAT = "polarzoo-checkpoint"
FORMAT_VERSION = 1
#: the largest checkpoint file read (weights and optimizer: a few MB for the shipped networks)
MAX_CHECKPOINT_BYTES = 1024 * 1024 * 1024
#: the files of a checkpoint and of the one before it
LATEST = {"model": "latest.safetensors", "state": "state.json", "exact": "exact.npz"}
PREVIOUS = {"model": "previous.safetensors", "state": "previous_state.json", "exact": "previous_exact.npz"}
#: what polarzoo 0.3 and earlier wrote (pickles)
LEGACY = ("latest.zip", "exact.pkl", "previous.zip", "previous_exact.pkl")


def capture_update_boundary(model: Any, counters: dict[str, Any], state: TrainingState) -> dict[str, Any]:
    """Everything a run needs to continue exactly from here, between two PPO updates: the
    weights and optimizer, every generator (torch, NumPy, Python), the rollout's starting
    observation, each env stack as data (games in progress, their generators, the opponent pool,
    the wrappers' state), the episode statistics and the callback's schedule."""
    import copy
    import random

    import torch

    return {
        "timesteps": int(model.num_timesteps),
        "n_updates": int(model._n_updates),
        "policy": copy.deepcopy(model.policy.state_dict()),
        "optimizer": copy.deepcopy(model.policy.optimizer.state_dict()),
        "torch_rng": torch.get_rng_state().numpy().copy(),
        "numpy_rng": np.random.get_state(),
        "python_rng": random.getstate(),
        "last_obs": copy.deepcopy(model._last_obs),
        "last_episode_starts": copy.deepcopy(model._last_episode_starts),
        "ep_info_buffer": list(model.ep_info_buffer or []),
        "ep_success_buffer": list(model.ep_success_buffer or []),
        "envs": model.get_env().env_method("get_state"),
        "counters": dict(counters),
        "state": state.as_dict(),  # (a TrainingState: a fresh dict, a copy of this moment)
    }


def restore_update_boundary(model: Any, boundary: dict[str, Any], where: str = "checkpoint") -> None:
    """Put a saved :func:`capture_update_boundary` (``exact.npz``) back into a ``model`` rebuilt
    from the run's config with the checkpoint's weights: generators, observation, episode
    statistics and envs, so that ``learn`` continues without resetting the envs."""
    import random
    from collections import deque

    import torch

    model.num_timesteps, model._n_updates = int(boundary["timesteps"]), int(boundary["n_updates"])
    model._last_obs, model._last_episode_starts = boundary["last_obs"], boundary["last_episode_starts"]
    model.ep_info_buffer = deque(boundary["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(boundary["ep_success_buffer"], maxlen=model._stats_window_size)
    env = model.get_env()
    if len(boundary["envs"]) != env.num_envs:
        raise DataError(f"{where}: it holds {len(boundary['envs'])} envs, this run has {env.num_envs}")
    for index, saved in enumerate(boundary["envs"]):
        env.env_method("set_state", saved, f"{where}, env {index}", indices=[index])
    # The generators last: building the model (before this call) reseeded torch, NumPy and
    # Python's generators (set_random_seed in _setup_model).
    torch.set_rng_state(torch.from_numpy(np.asarray(boundary["torch_rng"], dtype=np.uint8).copy()))
    np.random.set_state(boundary["numpy_rng"])
    random.setstate(boundary["python_rng"])


def _model_tensors(policy_state: dict[str, Any], optimizer_state: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The weights and the optimizer's tensors by name, and the optimizer's other fields (JSON)."""
    tensors = {f"policy/{name}": value.detach().cpu().numpy() for name, value in policy_state.items()}
    scalars: dict[str, Any] = {}
    for index, fields in optimizer_state["state"].items():
        for key, value in fields.items():
            if hasattr(value, "detach"):
                tensors[f"optimizer/{index}/{key}"] = value.detach().cpu().numpy().reshape(value.shape)
            else:
                scalars[f"{index}/{key}"] = value
    return tensors, {"param_groups": optimizer_state["param_groups"], "scalars": scalars}


def _digest(tensors: dict[str, np.ndarray]) -> str:
    """sha256 over every tensor's name, dtype, shape and bytes: a damaged file is caught (integrity
    against accidents; a file someone else made can carry a digest of its own)."""
    import hashlib

    digest = hashlib.sha256()
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        digest.update(f"\0{name}\0{array.dtype.str}\0{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def save_checkpoint(run_dir: Path, model: Any, state: TrainingState, boundary: dict[str, Any] | None = None) -> None:
    """``checkpoints/latest.safetensors`` + ``state.json`` (+ ``exact.npz``, the update boundary
    that makes ``--resume`` an exact continuation); the one before is kept as ``previous.*``.
    With ``boundary`` the model is saved as it was at that boundary."""
    with interrupts_deferred():  # a Ctrl-C waits for the checkpoint to be whole
        _save_checkpoint(run_dir, model, state.as_dict(), boundary)


def _save_checkpoint(run_dir: Path, model: Any, state: dict[str, Any], boundary: dict[str, Any] | None) -> None:
    from safetensors.numpy import save

    folder = run_dir / "checkpoints"
    folder.mkdir(exist_ok=True)
    if boundary is not None:
        policy_state, optimizer_state = boundary["policy"], boundary["optimizer"]
        timesteps, n_updates = boundary["timesteps"], boundary["n_updates"]
        state = {**boundary["state"], "timesteps": timesteps}
    else:
        policy_state, optimizer_state = model.policy.state_dict(), model.policy.optimizer.state_dict()
        timesteps, n_updates = int(model.num_timesteps), int(model._n_updates)
    state = {**state, "timesteps": int(timesteps)}
    tensors, optimizer_fields = _model_tensors(policy_state, optimizer_state)
    metadata = {
        "digest": _digest(tensors),
        "format": FORMAT,
        "format_version": str(FORMAT_VERSION),
        "timesteps": str(int(timesteps)),
        "n_updates": str(int(n_updates)),
        "optimizer": json.dumps(optimizer_fields),
    }
    written = []
    try:
        atomic_write(folder / "latest.tmp.safetensors", save(tensors, metadata=metadata))
        written.append(folder / "latest.tmp.safetensors")
        if boundary is not None:
            exact = {key: value for key, value in boundary.items() if key not in ("policy", "optimizer")}
            tree, arrays = encode_state(exact)
            buffer = io.BytesIO()
            np.savez(buffer, __tree__=np.array(json.dumps(tree)), **{f"a{key}": value for key, value in arrays.items()})
            atomic_write(folder / "exact.tmp.npz", buffer.getvalue())
            written.append(folder / "exact.tmp.npz")
    except BaseException:  # a full disk or a Ctrl-C mid-write: no half-written file is left behind
        for path in written + [folder / "latest.tmp.safetensors", folder / "exact.tmp.npz"]:
            path.unlink(missing_ok=True)
        raise
    if (folder / LATEST["model"]).exists() and (folder / LATEST["state"]).exists():
        for kind in ("model", "state", "exact"):
            if (folder / LATEST[kind]).exists():
                (folder / LATEST[kind]).replace(folder / PREVIOUS[kind])
            else:
                (folder / PREVIOUS[kind]).unlink(missing_ok=True)
    (folder / "latest.tmp.safetensors").replace(folder / LATEST["model"])  # atomic: a kill never leaves half a file
    if boundary is not None:
        (folder / "exact.tmp.npz").replace(folder / LATEST["exact"])
    else:
        (folder / LATEST["exact"]).unlink(missing_ok=True)
    atomic_write(folder / LATEST["state"], json.dumps(state, indent=2))


def legacy_checkpoint(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a checkpoint of polarzoo 0.3 and earlier (pickles) and none of this format."""
    folder = run_dir / "checkpoints"
    return not (folder / LATEST["model"]).exists() and any((folder / name).exists() for name in LEGACY)


def read_checkpoint_state(run_dir: Path) -> tuple[dict[str, Any], str]:
    """The state of the newest readable checkpoint and its model file name; ``ValueError`` saying
    what is wrong when there is none."""
    folder = run_dir / "checkpoints"
    if legacy_checkpoint(run_dir):
        raise ValueError(
            f"{folder} holds a checkpoint of polarzoo 0.3 and earlier (latest.zip, exact.pkl: pickles, which run code when "
            "read): it is not loaded; add --trust-pickles to resume it if you made it"
        )
    problems = []
    for files in (LATEST, PREVIOUS):
        model_path, state_path = folder / files["model"], folder / files["state"]
        if not model_path.exists() or not state_path.exists():
            problems.append(f"{files['model']}: missing")
            continue
        try:
            state = read_json_file(state_path, "checkpoint state", 16 * 1024 * 1024)
            if not isinstance(state, dict) or not isinstance(state.get("timesteps"), int):
                raise ValueError("no timesteps")
            metadata, _ = _read_model_file(model_path)
            if int(metadata["timesteps"]) != state["timesteps"]:
                raise ValueError("its weights are of another checkpoint")
            return state, files["model"]
        except (ValueError, OSError, KeyError) as error:
            problems.append(f"{files['model']}: unreadable ({type(error).__name__}: {str(error)[:80]})")
    raise ValueError(f"no readable checkpoint in {folder} ({'; '.join(problems)})")


def _read_model_file(path: Path) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    from safetensors import SafetensorError
    from safetensors.numpy import load

    check_regular_file(path, "checkpoint", MAX_CHECKPOINT_BYTES)
    raw = path.read_bytes()
    try:
        size = int.from_bytes(raw[:8], "little")
        if len(raw) < 8 or not 0 < size <= len(raw) - 8:
            raise ValueError("no safetensors header")
        header = loads_json(raw[8 : 8 + size], what="its header", max_bytes=100_000_000)
        tensors = load(raw)
    except (SafetensorError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: damaged ({str(error)[:80]})") from None
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    if (
        not isinstance(metadata, dict)
        or metadata.get("format") != FORMAT
        or metadata.get("format_version") != str(FORMAT_VERSION)
    ):
        raise ValueError(f"{path}: not a polarzoo checkpoint of format version {FORMAT_VERSION}")
    if metadata.get("digest") != _digest(tensors):
        raise ValueError(f"{path}: damaged (its tensors do not match its digest)")
    return metadata, tensors


def load_checkpoint_weights(model: Any, run_dir: Path, model_name: str) -> None:
    """Put a checkpoint's weights, optimizer state and counters into ``model`` (built from the
    run's config): every tensor must fit, no more, no fewer (``ValueError`` in one line)."""
    import torch

    path = run_dir / "checkpoints" / model_name
    metadata, tensors = _read_model_file(path)
    try:
        policy = {
            name[len("policy/") :]: torch.from_numpy(value.copy())
            for name, value in tensors.items()
            if name.startswith("policy/")
        }
        model.policy.load_state_dict(policy, strict=True)
        fields = loads_json(metadata["optimizer"], what="its optimizer settings")
        groups = [
            {key: tuple(value) if isinstance(value, list) and key != "params" else value for key, value in group.items()}
            for group in fields["param_groups"]
        ]  # (JSON made Adam's betas a list)
        by_index: dict[int, dict[str, Any]] = {}
        for name, value in tensors.items():
            if name.startswith("optimizer/"):
                _, index, key = name.split("/", 2)
                by_index.setdefault(int(index), {})[key] = torch.from_numpy(value.copy())
        for name, value in fields["scalars"].items():
            index, key = name.split("/", 1)
            by_index.setdefault(int(index), {})[key] = value
        # in the parameters' order, as the optimizer keeps them (its saved state iterates so)
        optimizer_state = {"state": {index: by_index[index] for index in sorted(by_index)}, "param_groups": groups}
        model.policy.optimizer.load_state_dict(optimizer_state)
        model.num_timesteps, model._n_updates = int(metadata["timesteps"]), int(metadata["n_updates"])
    except (KeyError, ValueError, RuntimeError, TypeError, IndexError) as error:
        raise ValueError(f"{path}: its weights do not fit this run's model ({str(error).splitlines()[0][:120]})") from None


def read_exact(run_dir: Path, model_name: str, timesteps: int) -> dict[str, Any] | None:
    """The update boundary saved with checkpoint ``model_name`` (``exact.npz`` beside
    ``latest.safetensors``, ``previous_exact.npz`` beside ``previous.safetensors``), or None when
    there is none for these timesteps; ``DataError`` (one line) for a damaged or crafted one."""
    name = LATEST["exact"] if model_name == LATEST["model"] else PREVIOUS["exact"]
    path = run_dir / "checkpoints" / name
    if not path.exists():
        return None
    try:
        check_regular_file(path, "checkpoint", MAX_CHECKPOINT_BYTES)
        with np.load(path, allow_pickle=False) as data:
            tree = loads_json(str(data["__tree__"]), what=str(path), max_bytes=512 * 1024 * 1024, max_depth=200)
            arrays = {key[1:]: data[key] for key in data.files if key != "__tree__"}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, zlib.error, EOFError) as error:
        raise DataError(f"{path}: not a readable exact-resume state ({type(error).__name__}: {str(error)[:80]})") from None
    boundary = restore_state(None, tree, arrays, str(path))
    if not isinstance(boundary, dict) or boundary.get("timesteps") != timesteps:
        return None
    return boundary


def read_legacy(run_dir: Path, model_name: str, timesteps: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A checkpoint of polarzoo 0.3 and earlier, read only under ``--trust-pickles`` (``exact.pkl`` is
    unpickled: it runs what it holds): ``(weights, boundary)``, both in this version's form."""
    import pickle

    import torch

    if not pickles_trusted():
        raise ValueError(f"{run_dir}: a checkpoint of polarzoo 0.3 and earlier (pickles) is read only with --trust-pickles")
    folder = run_dir / "checkpoints"
    with zipfile.ZipFile(folder / model_name) as archive:
        data = loads_json(archive.read("data"), what="its data")
        policy = torch.load(io.BytesIO(archive.read("policy.pth")), map_location="cpu", weights_only=True)
        optimizer = torch.load(io.BytesIO(archive.read("policy.optimizer.pth")), map_location="cpu", weights_only=True)
    weights = {
        "policy": policy,
        "optimizer": optimizer,
        "timesteps": int(data["num_timesteps"]),
        "n_updates": int(data["_n_updates"]),
    }
    exact_path = folder / ("exact.pkl" if model_name == "latest.zip" else "previous_exact.pkl")
    boundary = None
    if exact_path.exists():
        boundary = pickle.loads(exact_path.read_bytes())  # noqa: S301 (trusted by the user: --trust-pickles)
        if not isinstance(boundary, dict) or boundary.get("timesteps") != timesteps:
            boundary = None
        else:
            # each env stack (the layer below Checkpointable), pickled: as data, as this version saves it
            boundary["envs"] = [encode_state(pickle.loads(blob)) for blob in boundary["envs"]]  # noqa: S301
            boundary["torch_rng"] = np.asarray(boundary["torch_rng"].numpy(), dtype=np.uint8)
    return weights, boundary


def legacy_state(run_dir: Path) -> tuple[dict[str, Any], str]:
    """``read_checkpoint_state`` for a folder of polarzoo 0.3 and earlier (``latest.zip`` / ``previous.zip``)."""
    folder = run_dir / "checkpoints"
    for model_name, state_name in (("latest.zip", "state.json"), ("previous.zip", "previous_state.json")):
        try:
            state = read_json_file(folder / state_name, "checkpoint state")
            with zipfile.ZipFile(folder / model_name) as archive:
                if archive.testzip() is None and "data" in archive.namelist():
                    return state, model_name
        except (OSError, ValueError, zipfile.BadZipFile, zlib.error):
            continue
    raise ValueError(f"no readable checkpoint in {folder}")


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
