"""baselines/cli/progress.py: a bar on a terminal, steady lines in a log."""

from __future__ import annotations

import io
import time

from polarzoo.baselines.cli.progress import LogProgress, progress


def test_without_a_terminal_progress_is_lines_at_an_interval_and_at_the_end() -> None:
    stream = io.StringIO()
    bar = LogProgress(10, "games", "game", interval=0.05, stream=stream)
    bar.update(3)
    assert stream.getvalue() == ""  # not yet an interval
    time.sleep(0.06)
    bar.set_postfix(loss="0.25")
    bar.update(2)
    bar.close()
    bar.close()  # once only
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("games: 5/10 games (50%), ") and "ETA" in lines[0] and lines[0].endswith(", loss 0.25")
    assert lines[1].startswith("games: 5/10 games (50%)")


def test_progress_picks_lines_when_standard_error_is_not_a_terminal() -> None:
    # pytest captures standard error, so it is not a terminal here
    assert isinstance(progress(5, "deals", "deal"), LogProgress)
    assert progress(5, "deals", "deal", enabled=False) is None
