"""Progress of long work: a bar on a terminal, steady lines in a log.

A progress bar redrawn with carriage returns is unreadable in a log file (a cluster job, ``> log
2>&1``): there, :func:`progress` prints one line every ``interval`` seconds instead (done / total,
the rate, the ETA) and one at the end.  Both answer ``update(n)``, ``set_postfix(**values)`` and
``close()``, so the callers do not care which they got.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class LogProgress:
    """Steady progress lines (the bar's stand-in when the output is not a terminal)."""

    def __init__(self, total: int, desc: str, unit: str, interval: float = 30.0, stream: TextIO | None = None) -> None:
        self.total, self.desc, self.unit, self.interval = total, desc, unit, interval
        self.stream = stream or sys.stderr
        self.done = 0
        self.postfix = ""
        self.started = self.last = time.perf_counter()
        self.closed = False

    def line(self) -> str:
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = max(self.total - self.done, 0) / rate if rate > 0 and self.total else None
        eta = time.strftime("%H:%M:%S", time.gmtime(left)) if left is not None and left < 360_000 else "?"
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        return (
            f"{self.desc}: {self.done:,}/{self.total:,} {self.unit}s{share}, {rate:.2f} {self.unit}/s, "
            f"elapsed {time.strftime('%H:%M:%S', time.gmtime(elapsed))}, ETA {eta}{self.postfix}"
        )

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if self.interval > 0 and now - self.last >= self.interval:
            self.last = now
            print(self.line(), file=self.stream, flush=True)

    def set_postfix(self, **values: Any) -> None:
        self.postfix = "".join(f", {key} {value}" for key, value in values.items())

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            print(self.line(), file=self.stream, flush=True)


def progress(total: int, desc: str, unit: str = "it", enabled: bool = True, interval: float = 30.0) -> Any:
    """A tqdm bar when standard error is a terminal (and tqdm is installed), else
    :class:`LogProgress` lines every ``interval`` seconds; ``None`` when not ``enabled``."""
    if not enabled:
        return None
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=desc, unit=unit)
        except ImportError:  # pragma: no cover - tqdm comes with the train extra
            pass
    return LogProgress(total, desc, unit, interval)
