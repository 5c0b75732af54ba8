"""Models as data: the weight-only model file, and SB3 zips read without running their pickles.

A MaskablePPO zip (what SB3 writes) holds its policy's class, its spaces, its schedules and its
buffers as *pickles* inside the ``data`` member: loading one with ``MaskablePPO.load`` runs
whatever those pickles say, so a model someone else made is code.  This module never unpickles:

* :func:`save_policy` writes a **weight-only file**, ``*.safetensors``: the tensors of the policy
  (safetensors: a JSON header and raw little-endian arrays, nothing executable) and, in the
  header's metadata, the architecture and settings as JSON (:data:`FORMAT`).
* :func:`load_policy` reads such a file, or an SB3 ``.zip`` without unpickling anything: the
  ``data`` member is read as JSON (its pickled entries are skipped; the readable fields SB3 writes
  beside them give the spaces), the weights with ``torch.load(weights_only=True)``, and the policy
  is rebuilt from a class this package knows (:data:`POLICY_CLASSES`).  A zip whose policy class
  or settings exist only as a pickle is refused in one line, unless the caller trusts the file
  (:func:`trust_pickles`, the command lines' ``--trust-pickles``), which then loads it with SB3.
* :func:`policy_digest`: a digest of what a model *plays* (architecture and weights), the same for
  a zip and its weight-only copy (what league fingerprints hash).

    python -m polarzoo.baselines.export runs/.../model.zip model.safetensors   # a zip -> weights only
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.cli.runs import TRUST_PICKLES_VARIABLE, atomic_write
from polarzoo.envs.utils import (
    MAX_MODEL_BYTES,
    MAX_SMALL_FILE_BYTES,
    DataError,
    check_regular_file,
    global_random_state_kept,
    loads_json,
)

#: the ``format`` entry of a weight-only file's metadata, and its version
FORMAT, FORMAT_VERSION = "polarzoo-policy", "1"
#: the policy classes a model file may name, by the name it is saved under
POLICY_CLASSES = ("BoardPolicy", "MaskableActorCriticPolicy")
#: activation functions a ``MaskableActorCriticPolicy``'s settings may name (torch.nn classes)
ACTIVATIONS = ("Tanh", "ReLU", "ELU", "LeakyReLU", "GELU", "SiLU")
#: ``MaskableActorCriticPolicy`` settings a file may give (JSON values only)
MLP_SETTINGS = ("net_arch", "activation_fn", "ortho_init", "share_features_extractor", "normalize_images")


class ModelFileError(ValueError):
    """A model file that cannot be read as data (one line that names the file and the problem)."""


def trust_pickles(trusted: bool = True) -> None:
    """Let :func:`load_policy` load SB3 zips whose policy exists only as a pickle, with SB3 (that
    runs the code the file carries: for files you made or trust).  Worker processes started
    afterwards inherit it (:data:`~polarzoo.baselines.cli.runs.TRUST_PICKLES_VARIABLE`)."""
    if trusted:
        os.environ[TRUST_PICKLES_VARIABLE] = "1"
    else:
        os.environ.pop(TRUST_PICKLES_VARIABLE, None)


def pickles_trusted() -> bool:
    return os.environ.get(TRUST_PICKLES_VARIABLE) == "1"


@dataclass
class LoadedModel:
    """A policy read from a file: what agents use of a MaskablePPO model (``policy``, the spaces),
    and ``predict`` as SB3's.  ``info``: the file's settings (policy class and kwargs, env)."""

    policy: Any
    observation_space: Any
    action_space: Any
    path: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def num_timesteps(self) -> int:
        return int(self.info.get("num_timesteps", 0))

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
        action_masks: Any = None,
    ) -> Any:
        return self.policy.predict(observation, state, episode_start, deterministic, action_masks=action_masks)


# ---------------------------------------------------------------------------------- spaces
def space_to_json(space: Any) -> dict[str, Any]:
    """A Box's shape, dtype and bounds (a number when every entry is the same), or a Discrete's n."""
    import gymnasium

    if isinstance(space, gymnasium.spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n)}
    if isinstance(space, gymnasium.spaces.Box):

        def bound(values: np.ndarray) -> Any:
            flat = np.asarray(values, dtype=np.float64).ravel()
            if flat.size and np.all(flat == flat[0]):
                return _number(flat[0])
            return [_number(v) for v in flat]

        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": str(space.dtype),
            "low": bound(space.low),
            "high": bound(space.high),
        }
    raise ModelFileError(f"a {type(space).__name__} space is not one a model file can hold (Box and Discrete are)")


def _number(value: float) -> Any:
    return None if not np.isfinite(value) else (int(value) if float(value).is_integer() else float(value))


def space_from_json(data: Any, where: str) -> Any:
    import gymnasium

    try:
        if data["type"] == "Discrete":
            n = data["n"]
            if not isinstance(n, int) or isinstance(n, bool) or not 0 < n < 10**7:
                raise ValueError(f"n {n!r}")
            return gymnasium.spaces.Discrete(n)
        if data["type"] == "Box":
            shape = tuple(data["shape"])
            if not shape or not all(isinstance(d, int) and 0 < d < 10**6 for d in shape) or int(np.prod(shape)) > 10**7:
                raise ValueError(f"shape {shape!r}")
            dtype = np.dtype(data["dtype"])
            if dtype.kind not in "fiub":
                raise ValueError(f"dtype {dtype}")

            def bound(value: Any, infinite: float) -> np.ndarray:
                array = (
                    np.full(shape, infinite)
                    if value is None
                    else np.asarray(
                        [infinite if v is None else v for v in value] if isinstance(value, list) else value, dtype=np.float64
                    )
                )
                return np.broadcast_to(array.reshape(shape) if array.ndim else array, shape).astype(dtype)

            return gymnasium.spaces.Box(bound(data["low"], -np.inf), bound(data["high"], np.inf), shape, dtype)
    except (KeyError, TypeError, ValueError) as error:
        raise ModelFileError(f"{where}: a damaged space in its settings ({error})") from None
    raise ModelFileError(f"{where}: a {str(data.get('type'))[:40]!r} space is not one a model file can hold")


# ---------------------------------------------------------------------------------- building
def _policy_class(name: str) -> type:
    if name == "BoardPolicy":
        from polarzoo.baselines.policies.sb3 import BoardPolicy

        return BoardPolicy
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    return MaskableActorCriticPolicy


def _policy_kwargs(class_name: str, kwargs: Any, where: str) -> dict[str, Any]:
    """The constructor's settings, from JSON values only (classes by name from a short list)."""
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise ModelFileError(f"{where}: its policy settings are not a JSON object")
    kwargs = dict(kwargs)
    if class_name == "BoardPolicy":
        from polarzoo.baselines.policies.sb3 import BOARD_POLICY_SETTINGS

        allowed: tuple[str, ...] = (*BOARD_POLICY_SETTINGS, "ortho_init")
    else:
        allowed = MLP_SETTINGS
        if "activation_fn" in kwargs:
            from torch import nn

            if kwargs["activation_fn"] not in ACTIVATIONS:
                raise ModelFileError(
                    f"{where}: activation_fn {str(kwargs['activation_fn'])[:40]!r} is not one of {', '.join(ACTIVATIONS)}"
                )
            kwargs["activation_fn"] = getattr(nn, kwargs["activation_fn"])
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ModelFileError(f"{where}: {class_name} settings polarzoo does not know: {', '.join(unknown)[:120]}")
    for key, value in kwargs.items():
        if key != "activation_fn" and not _plain(value):
            raise ModelFileError(f"{where}: setting {key} is not a plain JSON value")
    return kwargs


def _plain(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def build_policy(
    class_name: str, kwargs: dict[str, Any], observation_space: Any, action_space: Any, state: dict[str, Any], where: str
) -> Any:
    """The policy with these settings and weights (every weight must fit: no more, no fewer)."""
    import torch

    if class_name not in POLICY_CLASSES:
        raise ModelFileError(
            f"{where}: policy class {class_name[:60]!r} is not one polarzoo rebuilds ({', '.join(POLICY_CLASSES)})"
        )
    kwargs = _policy_kwargs(class_name, kwargs, where)
    _check_size(class_name, kwargs, observation_space, action_space, state, where)
    try:
        policy = _policy_class(class_name)(observation_space, action_space, lambda _: 0.0, **kwargs)
        policy.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()}, strict=True)
    except ModelFileError:
        raise
    except (ValueError, TypeError, RuntimeError, KeyError) as error:
        raise ModelFileError(
            f"{where}: its weights do not fit its {class_name} settings ({str(error).splitlines()[0][:160]})"
        ) from None
    policy.set_training_mode(False)
    return policy


#: the most parameters a model file's network may have (the shipped ones have under 300,000)
MAX_POLICY_PARAMETERS = 50_000_000


def parameters_lower_bound(class_name: str, kwargs: dict[str, Any], observation_space: Any, action_space: Any) -> int:
    """At least how many parameters the network these settings describe has, computed from the
    settings alone (nothing allocated): the MLP's linear layers, a board network's blocks."""

    def whole(name: str, value: Any, default: int) -> int:
        value = default if value is None else value
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ModelFileError(f"setting {name} must be a whole number >= 0, got {str(value)[:40]!r}")
        return value

    if class_name == "BoardPolicy":
        dim, blocks = whole("dim", kwargs.get("dim"), 32), whole("blocks", kwargs.get("blocks"), 3)
        return (blocks + 1) * dim * dim
    features = int(np.prod(observation_space.shape)) if observation_space.shape else 1
    arch = kwargs.get("net_arch", [64, 64])
    chains = [arch.get("pi", []), arch.get("vf", [])] if isinstance(arch, dict) else [arch or [], arch or []]
    total = 0
    for chain in chains:
        if not isinstance(chain, list):
            raise ModelFileError(f"setting net_arch must list layer sizes, got {str(chain)[:40]!r}")
        width = features
        for size in chain:
            size = whole("net_arch", size, 0)
            total += width * size
            width = size
        total += width * int(getattr(action_space, "n", 1))
    return total


def _check_size(
    class_name: str, kwargs: dict[str, Any], observation_space: Any, action_space: Any, state: dict[str, Any], where: str
) -> None:
    """Refuse a header that names a network far larger than the weights its file holds, or than
    :data:`MAX_POLICY_PARAMETERS`, before anything is allocated."""
    try:
        needed = parameters_lower_bound(class_name, kwargs, observation_space, action_space)
    except ModelFileError as error:
        raise ModelFileError(f"{where}: {error}") from None
    held = sum(int(np.prod(np.shape(value))) for value in state.values())
    if needed > MAX_POLICY_PARAMETERS:
        raise ModelFileError(
            f"{where}: its header names a network of at least {needed:,} parameters, more than the {MAX_POLICY_PARAMETERS:,} "
            "a model file may have; refused before building it"
        )
    if needed > 2 * held + 10_000:
        raise ModelFileError(
            f"{where}: its header names a network of at least {needed:,} parameters but the file holds {held:,}; "
            "refused before building it"
        )


def architecture(policy: Any) -> dict[str, Any]:
    """The JSON settings that rebuild ``policy`` (its class name, constructor kwargs, spaces)."""
    from polarzoo.baselines.policies.sb3 import BoardPolicy

    if isinstance(policy, BoardPolicy):
        class_name = "BoardPolicy"
        kwargs: dict[str, Any] = {
            "board": policy.board,
            "dim": policy.dim,
            "blocks": policy.blocks,
            "symmetrize": policy.symmetrize,
            "pitch_mm": policy.pitch_mm,
        }
        if not policy.ortho_init:
            kwargs["ortho_init"] = False
        if policy.update_precision != "float32":  # (a float32 policy's file is as before)
            kwargs["update_precision"] = policy.update_precision
    else:
        class_name = type(policy).__name__
        if class_name != "MaskableActorCriticPolicy":
            raise ModelFileError(
                f"a {class_name} policy has no weight-only format here (BoardPolicy and MaskablePPO's MlpPolicy do)"
            )
        kwargs = {
            "net_arch": policy.net_arch,
            "ortho_init": policy.ortho_init,
            "share_features_extractor": policy.share_features_extractor,
            "normalize_images": policy.normalize_images,
        }
        if policy.activation_fn.__name__ not in ACTIVATIONS:
            raise ModelFileError(f"activation {policy.activation_fn.__name__} has no weight-only format here")
        kwargs["activation_fn"] = policy.activation_fn.__name__
    return {
        "policy_class": class_name,
        "policy_kwargs": kwargs,
        "observation_space": space_to_json(policy.observation_space),
        "action_space": space_to_json(policy.action_space),
    }


# ---------------------------------------------------------------------------------- files
def save_policy(model: Any, path: str | Path, env_id: str | None = None, **info: Any) -> Path:
    """Write ``model``'s policy (a MaskablePPO model, a :class:`LoadedModel` or a policy) as a
    weight-only ``.safetensors`` file, whole or not at all."""
    from safetensors.torch import save

    policy = getattr(model, "policy", model)
    settings = architecture(policy)
    if env_id:
        settings["env"] = env_id
    timesteps = getattr(model, "num_timesteps", None)
    if timesteps is not None:
        settings["num_timesteps"] = int(timesteps)
    settings.update(info)
    state = {name: tensor.detach().cpu().contiguous().clone() for name, tensor in policy.state_dict().items()}
    metadata = {"format": FORMAT, "format_version": FORMAT_VERSION, "settings": json.dumps(settings, sort_keys=True)}
    path = Path(path)
    atomic_write(path, save(state, metadata=metadata))
    return path


def read_weights(path: str | Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``(settings, tensors as arrays)`` of a model file, ``.safetensors`` or SB3 ``.zip``, without
    unpickling anything; :class:`ModelFileError` (one line) for anything else."""
    path = Path(path)
    where = str(path)
    try:
        check_regular_file(path, "model file")
        with path.open("rb") as handle:
            head = handle.read(8)
    except FileNotFoundError as error:
        raise ModelFileError(str(error)) from None
    except DataError as error:
        raise ModelFileError(str(error)) from None
    except OSError as error:
        raise ModelFileError(f"{where}: cannot read it ({error.strerror or error})") from None
    if head[:4] == b"PK\x03\x04":
        return _read_zip(path)
    return _read_safetensors(path)


def _read_safetensors(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    from safetensors import SafetensorError
    from safetensors.numpy import load

    where = str(path)
    try:
        raw = path.read_bytes()
        size = int.from_bytes(raw[:8], "little")
        if len(raw) < 8 or size <= 0 or size > len(raw) - 8:
            raise ValueError("no safetensors header")
        header = loads_json(raw[8 : 8 + size], what="its header", max_bytes=100_000_000)
        tensors = load(raw)
    except (OSError, ValueError, SafetensorError, UnicodeDecodeError, RecursionError) as error:
        raise ModelFileError(
            f"{where}: not a model file (a polarzoo .safetensors or an SB3 .zip): "
            f"{str(error).splitlines()[0][:120] if str(error) else type(error).__name__}"
        ) from None
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise ModelFileError(
            f"{where}: a safetensors file without polarzoo's settings (format {FORMAT!r}); write it with polarzoo-export"
        )
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"{where}: format version {str(metadata.get('format_version'))[:20]!r}; this polarzoo reads {FORMAT_VERSION}"
        )
    try:
        settings = loads_json(metadata["settings"], what="its settings")
    except (KeyError, ValueError, RecursionError, TypeError):
        raise ModelFileError(f"{where}: damaged settings in its header") from None
    if not isinstance(settings, dict):
        raise ModelFileError(f"{where}: damaged settings in its header")
    return settings, tensors


def _read_zip(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """An SB3 zip's settings from the readable parts of its ``data`` JSON, and its policy weights."""
    import torch

    where = str(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "data" not in names or "policy.pth" not in names:
                raise ModelFileError(f"{where}: a zip without SB3's 'data' and 'policy.pth': not a saved model")
            if (
                archive.getinfo("data").file_size > MAX_SMALL_FILE_BYTES
                or archive.getinfo("policy.pth").file_size > MAX_MODEL_BYTES
            ):
                raise ModelFileError(f"{where}: a member of the zip unpacks to more than a model file may hold")
            data = loads_json(archive.read("data"), what="its data")
            state = torch.load(io.BytesIO(archive.read("policy.pth")), map_location="cpu", weights_only=True)
    except ModelFileError:
        raise
    except (OSError, zipfile.BadZipFile, ValueError, RecursionError, RuntimeError, EOFError, KeyError) as error:
        raise ModelFileError(
            f"{where}: not a readable SB3 model ({type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''})"
        ) from None
    except Exception as error:  # torch's weights-only unpickler refuses anything but tensors
        raise ModelFileError(f"{where}: its weights are not plain tensors ({type(error).__name__}); refused") from None
    if not isinstance(data, dict) or not isinstance(state, dict):
        raise ModelFileError(f"{where}: not a readable SB3 model (damaged data)")
    policy_class = data.get("policy_class")
    module = policy_class.get("__module__", "") if isinstance(policy_class, dict) else ""
    observation = data.get("observation_space")
    if module.startswith("polarzoo.baselines.policies"):
        class_name = "BoardPolicy"
    elif (
        module == "sb3_contrib.common.maskable.policies"
        and isinstance(observation, dict)
        and "Box" in str(observation.get(":type:"))
    ):
        class_name = "MaskableActorCriticPolicy"
    else:
        raise ModelFileError(
            f"{where}: its policy class ({module[:60] or 'unknown'}) exists only as a pickle, which polarzoo does not "
            "run; convert it where it was made (polarzoo-export), or load it with --trust-pickles if you trust its author"
        )
    kwargs = data.get("policy_kwargs", {})
    if isinstance(kwargs, dict) and ":serialized:" in kwargs:
        raise ModelFileError(
            f"{where}: its policy settings exist only as a pickle (e.g. a class given as activation_fn), which polarzoo "
            "does not run; load it with --trust-pickles if you trust its author"
        )
    settings = {
        "policy_class": class_name,
        "policy_kwargs": kwargs,
        "observation_space": _zip_box(observation, where),
        "action_space": _zip_discrete(data.get("action_space"), where),
        "num_timesteps": data.get("num_timesteps", 0) if isinstance(data.get("num_timesteps"), int) else 0,
    }
    try:
        tensors = {str(k): v.detach().cpu().numpy() for k, v in state.items()}
    except AttributeError:
        raise ModelFileError(f"{where}: its policy.pth holds something other than tensors") from None
    return settings, tensors


def _zip_box(data: Any, where: str) -> dict[str, Any]:
    """A Box from the readable fields SB3 writes beside its pickle (shape, dtype, printed bounds)."""
    if not isinstance(data, dict) or "Box" not in str(data.get(":type:")):
        raise ModelFileError(f"{where}: its observation space is not a Box (polarzoo's policies read Box observations)")

    def bound(text: Any) -> Any:
        if not isinstance(text, str):
            return None
        numbers = text.replace("[", " ").replace("]", " ").replace("...", " ").split()
        try:
            values = [float(v) for v in numbers]
        except ValueError:
            return None
        if "..." in text:  # numpy shortened it: a single value throughout, or unknown
            return _number(values[0]) if values and all(v == values[0] for v in values) else None
        return [_number(v) for v in values] if len(set(values)) > 1 else (_number(values[0]) if values else None)

    return {
        "type": "Box",
        "shape": data.get("_shape"),
        "dtype": data.get("dtype"),
        "low": bound(data.get("low")),
        "high": bound(data.get("high")),
    }


def _zip_discrete(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict) or "Discrete" not in str(data.get(":type:")) or str(data.get("start", "0")) != "0":
        raise ModelFileError(f"{where}: its action space is not a Discrete from 0 (polarzoo's envs have one)")
    n = str(data.get("n", ""))
    if not (n.isascii() and n.isdigit() and len(n) < 8):
        raise ModelFileError(f"{where}: a damaged action space")
    return {"type": "Discrete", "n": int(n)}


def load_policy(path: str | Path) -> LoadedModel:
    """The policy of a model file (``.safetensors`` or SB3 ``.zip``), on the CPU, in evaluation
    mode; nothing in the file is run.  A zip whose policy exists only as a pickle is refused
    (:class:`ModelFileError`) unless :func:`trust_pickles` was called."""
    where = str(path)
    try:
        settings, tensors = read_weights(path)
    except ModelFileError:
        if pickles_trusted() and Path(path).suffix == ".zip":
            return _load_trusted(path)
        raise
    observation_space = space_from_json(settings.get("observation_space"), where)
    action_space = space_from_json(settings.get("action_space"), where)
    with global_random_state_kept():  # building the policy draws its initial weights from torch's generator
        policy = build_policy(
            str(settings.get("policy_class")),
            settings.get("policy_kwargs") or {},
            observation_space,
            action_space,
            tensors,
            where,
        )
    return LoadedModel(policy, observation_space, action_space, where, settings)


def _load_trusted(path: str | Path) -> LoadedModel:
    from sb3_contrib import MaskablePPO

    with global_random_state_kept():  # SB3's load reseeds the caller's generators
        model = MaskablePPO.load(str(path), device="cpu")
    return LoadedModel(
        model.policy,
        model.observation_space,
        model.action_space,
        str(path),
        {"num_timesteps": int(model.num_timesteps), "trusted": True},
    )


def load_policy_weights(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(settings, state dict of tensors)`` of a model file, for ``policy.load_state_dict``."""
    import torch

    settings, tensors = read_weights(path)
    return settings, {name: torch.as_tensor(array) for name, array in tensors.items()}


def policy_digest(path: str | Path) -> bytes:
    """sha256 of what a model file plays: its policy class, settings, spaces and every weight
    (name, dtype, shape, bytes); the same for an SB3 zip and its weight-only copy."""
    settings, tensors = read_weights(path)
    digest = hashlib.sha256()
    observation = dict(settings.get("observation_space") or {})
    architecture_part = {
        "policy_class": settings.get("policy_class"),
        "policy_kwargs": _canonical_kwargs(settings),
        "observation_shape": observation.get("shape"),
        "action_space": settings.get("action_space"),
    }
    digest.update(json.dumps(architecture_part, sort_keys=True).encode())
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        digest.update(f"\0{name}\0{array.dtype.str}\0{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.digest()


def _canonical_kwargs(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings with the constructor's defaults filled in (a zip records only those given)."""
    import inspect

    kwargs = dict(settings.get("policy_kwargs") or {})
    if settings.get("policy_class") == "BoardPolicy":
        parameters = inspect.signature(_policy_class("BoardPolicy")).parameters
        defaults = {name: parameters[name].default for name in ("board", "dim", "blocks", "symmetrize", "pitch_mm")}
        kwargs = {**defaults, **kwargs}
        kwargs.pop("ortho_init", None)
    return kwargs
