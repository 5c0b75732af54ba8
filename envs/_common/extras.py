"""Optional dependencies: import one, or fail with one line naming the extra that brings it."""

from __future__ import annotations

import importlib
from types import ModuleType

#: module -> the polarzoo extra that installs it
EXTRA_OF = {
    "mujoco": "physics",
    "pygame": "render",
    "sb3_contrib": "train",
    "stable_baselines3": "train",
    "torch": "train",
    "yaml": "train",
    "matplotlib": "train",
    "jax": "jax",
    "pgx": "jax",
    "mctx": "jax",
    "optax": "jax",
    "pyspiel": "openspiel",
    "mcp": "mcp",
    "ray": "rllib",
    "choix": "benchmark",
    "scipy": "benchmark",
    "rliable": "benchmark",
}


class MissingExtra(ImportError):
    """An optional dependency is not installed (the message names the extra)."""


def require(module: str, what: str) -> ModuleType:
    """``import module``, or ``MissingExtra``: "<what> needs <module>: pip install "polarzoo[extra]""."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if error.name is not None and error.name.split(".")[0] != module.split(".")[0]:
            raise  # the module is there but one of its own imports is broken: show that
        extra = EXTRA_OF.get(module.split(".")[0], "all")
        raise MissingExtra(f'{what} needs {module.split(".")[0]}: pip install "polarzoo[{extra}]"') from None
