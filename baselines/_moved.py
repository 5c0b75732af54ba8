"""Deprecation shims: names that moved keep working from their old module for one version, with a
``DeprecationWarning`` naming the new place (``CHANGELOG.md`` lists the moves)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


def moved_names(old_module: str, names: dict[str, str], remove_in: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old_module``: ``names`` maps each moved name to the module
    that has it now."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        warnings.warn(
            f"{old_module}.{name} moved to {target}.{name}; the old name goes in polarzoo {remove_in}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(target), name)

    return __getattr__
