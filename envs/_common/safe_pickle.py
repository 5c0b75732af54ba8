"""Reading the pickles a training run folder holds without running what a crafted one names.

A training checkpoint (``checkpoints/exact.pkl``: the games in progress, the generators, the
rollout; the ``data`` of SB3's ``latest.zip``) is a pickle, and ``pickle.loads`` calls whatever
callable the file names: a run folder from someone else would run code on ``--resume``.
:func:`restricted_loads` builds only classes of a short list of modules (polarzoo's envs,
wrappers, agents and policies; NumPy; gymnasium's spaces; SB3's schedules and buffers; torch's
tensor rebuilding) and the builtins that hold data; a pickle that names anything else (``os``,
``subprocess``, ``builtins.eval``, a function of another module) is refused with
:class:`UnsafePickle`.  This is a mitigation, not a data format: share a model as its
``model.safetensors``; resume run folders you made.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

# (module prefixes below are matched with str.startswith)

#: modules whose classes (and only classes) a checkpoint may build
ALLOWED_CLASS_MODULES = (
    "polarzoo.envs",
    "polarzoo.wrappers",
    "polarzoo.baselines.agents",
    "polarzoo.baselines.policies",
    "numpy",
    "gymnasium.spaces",
    "stable_baselines3.common.utils",
    "stable_baselines3.common.buffers",
    "sb3_contrib.common.maskable",
    "stable_baselines3.common.monitor",
    "collections",
    "mujoco",
    "torch",
    "numba",
)
#: modules whose functions a checkpoint may name too (an opponent such as
#: ``polarzoo.wrappers.single_agent.random_legal_opponent``, a rule such as a shaping potential;
#: none of them writes a file: tests/test_safe_pickle.py checks)
FUNCTION_MODULES = ("polarzoo.envs.", "polarzoo.wrappers.", "polarzoo.baselines.agents.")
#: callables (not classes) that rebuild data: NumPy's arrays, generators and scalars, torch's tensors
ALLOWED_FUNCTIONS = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.random._pickle", "__randomstate_ctor"),
    ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pickle", "__generator_ctor"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._utils", "_rebuild_parameter"),
    ("torch._utils", "_rebuild_tensor"),
    ("torch.storage", "_load_from_bytes"),
    ("copyreg", "_reconstructor"),
    ("copyreg", "__newobj__"),
    ("_codecs", "encode"),
    ("collections", "OrderedDict"),
    ("builtins", "getattr"),
}
#: builtins that hold data
ALLOWED_BUILTINS = {
    "set",
    "frozenset",
    "slice",
    "range",
    "complex",
    "bytearray",
    "object",
    "list",
    "dict",
    "tuple",
    "int",
    "float",
    "bool",
    "str",
    "bytes",
}


class UnsafePickle(pickle.UnpicklingError):
    """A pickle that names a callable outside :data:`ALLOWED_CLASS_MODULES` / :data:`ALLOWED_FUNCTIONS`."""


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED_FUNCTIONS or (module == "builtins" and name in ALLOWED_BUILTINS):
            if (module, name) == ("builtins", "getattr"):
                return _safe_getattr
            return super().find_class(module, name)
        if module.startswith("numpy.random.") and name.startswith(
            "__pyx_unpickle_"
        ):  # Cython's state setters of NumPy's generators
            return super().find_class(module, name)
        if any(module == allowed or module.startswith(allowed + ".") for allowed in ALLOWED_CLASS_MODULES):
            value = super().find_class(module, name)
            if isinstance(value, type) or module.startswith(FUNCTION_MODULES):
                return value
        raise UnsafePickle(f"refused: the pickle names {module}.{name}, which a checkpoint has no reason to call")


def _safe_getattr(target: Any, name: str) -> Any:
    """``getattr`` as pickles of enum members and bound methods use it: only on classes, only data."""
    if not isinstance(target, type) or name.startswith("_"):
        raise UnsafePickle(f"refused: getattr({type(target).__name__}, {name!r})")
    value = getattr(target, name)
    if callable(value) and not isinstance(value, type) and not isinstance(value, target):
        raise UnsafePickle(f"refused: {target.__name__}.{name} is a function")
    return value


def restricted_loads(data: bytes) -> Any:
    """``pickle.loads`` that builds only allowed classes (:class:`UnsafePickle` otherwise)."""
    return RestrictedUnpickler(io.BytesIO(data)).load()
