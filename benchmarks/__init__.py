"""The benchmark scripts (``python -m benchmarks.NAME --help``); their numbers are on the results page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: str | Path | None, record: Any) -> None:
    """A benchmark's record as indented JSON at ``path`` (its ``--json``), written whole or not
    at all; nothing when ``path`` is None."""
    if path is None:
        return
    from polarzoo.baselines.cli.runs import atomic_write

    atomic_write(Path(path), json.dumps(record, indent=2) + "\n")
