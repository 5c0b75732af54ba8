"""A person plays an agent: in the terminal (:mod:`.terminal`, ``python -m
polarzoo.baselines.play``), in a pygame window (:mod:`.window`, ``--window``), both on one turn
loop (:mod:`.turns`), or in the browser (:mod:`.web`, ``polarzoo-web``; a position for the
browser: :mod:`.board`; recorded games played again: :mod:`.replay`).  Imports agents and the
CLI helpers, never training or evaluation."""

from __future__ import annotations

from typing import Any

__all__ = ["HumanGame", "format_moves", "main", "play"]


def __getattr__(name: str) -> Any:
    # Looked up on first use: importing the package imports none of its modules, so that
    # ``python -m polarzoo.baselines.play.web`` (or ``.replay``) runs its module only once.
    if name in __all__:
        from polarzoo.baselines.play import terminal

        return getattr(terminal, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
