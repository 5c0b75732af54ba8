"""Run folders for the CLIs: unique, announced, never overwritten."""

from __future__ import annotations

import os
import time
from pathlib import Path


def new_run_dir(parent: Path, stem: str | None, prefix: str) -> Path:
    """Create and return a new folder under ``parent``.

    ``stem`` given: exactly ``parent/stem``, which must not exist yet (``FileExistsError``).
    Otherwise ``parent/<prefix>-<YYYYmmdd-HHMMSS>``, with ``-2``, ``-3``, ... added when another
    run started in the same second (``mkdir`` is atomic, so two processes never share one)."""
    parent.mkdir(parents=True, exist_ok=True)
    if stem:
        path = parent / stem
        path.mkdir(exist_ok=False)
        return path
    base = f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    for suffix in range(1, 10_000):
        path = parent / (base if suffix == 1 else f"{base}-{suffix}")
        try:
            path.mkdir(exist_ok=False)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free run folder name under {parent} for {base} (pid {os.getpid()})")
