"""Deprecation shims: names that moved keep working from their old module for one version, with a
``DeprecationWarning`` naming the new place (``CHANGELOG.md`` lists the moves)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterable
from typing import Any


def moved_names(
    old_module: str, target: str | dict[str, str], names: Iterable[str] | None = None, remove_in: str = "0.5"
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old_module`` whose names (``names``, or every public name of
    ``target``) are now in the module ``target`` (or ``{name: module}``).  Resolved when asked for,
    so a library module may point at the command-line module built on it without an import circle."""
    allowed = set(target) if isinstance(target, dict) else (None if names is None else set(names))

    def __getattr__(name: str) -> Any:
        if name.startswith("__") or (allowed is not None and name not in allowed):
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        where = target[name] if isinstance(target, dict) else target
        value = getattr(importlib.import_module(where), name)  # AttributeError for a name it does not have
        warnings.warn(
            f"{old_module}.{name} moved to {where}.{name}; the old name goes in polarzoo {remove_in}",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__
