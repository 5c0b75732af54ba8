"""Every writer on a full disk: one line, exit 1, no traceback, no 0-byte, temporary or half file,
and what was complete before is kept.

The disk is a real one where the platform allows it: a 256 KB tmpfs mounted in the test's folder
and filled to its last byte (root with CAP_SYS_ADMIN, as on the CI machine), so every write
meets ``ENOSPC``.  Elsewhere the command runs in a child process whose file size limit is 0
(``RLIMIT_FSIZE``): every write to a file fails (``EFBIG``) the same way.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import scaled  # noqa: E402
from tests.test_cli_errors import run_main

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def full_disk(folder: Path, keep: dict[str, Path] | None = None) -> Iterator[bool]:
    """``folder`` on a full file system (yields True), or an ordinary folder (yields False: run
    the command with :func:`run_full`, which then limits the file size).  ``keep``: files copied
    in (name -> source) before the disk is filled."""
    folder.mkdir(parents=True)
    mounted = (
        os.geteuid() == 0
        and shutil.which("mount") is not None
        and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True).returncode == 0
    )
    try:
        for name, source in (keep or {}).items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
        if mounted:
            fd = os.open(folder / ".filler", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _no_file_size(limit: int = 0) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def run_full(capsys: pytest.CaptureFixture[str], mounted: bool, module: str, *args: str) -> SimpleNamespace:
    if mounted:
        return run_main(capsys, module, *args)
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        preexec_fn=_no_file_size,
        timeout=scaled(600),
    )
    return SimpleNamespace(returncode=result.returncode, stdout=result.stdout, stderr=result.stderr)


def assert_one_line_and_nothing_half(result: SimpleNamespace, folder: Path) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    left = [p for p in folder.rglob("*") if p.is_file() and p.name != ".filler"]
    assert not [p for p in left if p.stat().st_size == 0 or ".tmp" in p.name], left


PRETRAINED = ROOT / "baselines" / "pretrained"


@pytest.mark.parametrize(
    "module,args",
    [
        ("polarzoo.baselines.train", ["--env", "fire_and_ice_v0", "--quick", "--runs", "{out}"]),
        (
            "polarzoo.baselines.league",
            [
                "build",
                "--env",
                "fire_and_ice_v0",
                "--members",
                "random",
                "heuristic",
                "--games",
                "1",
                "--out",
                "{out}/l",
                "--no-progress",
            ],
        ),
        (
            "polarzoo.baselines.league",
            ["rate", "--env", "fire_and_ice_v0", "--agent", "random", "--max-games", "4", "--out", "{out}/r"],
        ),
        (
            "polarzoo.baselines.benchmark",
            [
                "run",
                "--games",
                "fire_and_ice_v0",
                "--algorithms",
                "ppo-mlp",
                "--seeds",
                "0",
                "--budget",
                "tiny",
                "--out",
                "{out}",
            ],
        ),
        ("polarzoo.baselines.alphazero_jax", ["--quick", "--runs", "{out}"]),
        ("polarzoo.baselines.solitaire_solver", ["--deals", "2", "--json", "{out}/s.json", "--no-progress"]),
        ("polarzoo.baselines.solitaire_eval", ["--model", "pretrained", "--deals", "2", "--out", "{out}/e"]),
        ("polarzoo.baselines.export", [str(PRETRAINED / "fire_and_ice_v0.safetensors"), "{out}/m.safetensors"]),
        ("polarzoo.baselines.play.replay", ["export", "{games}", "--out", "{out}/x"]),
    ],
    ids=[
        "train",
        "league-build",
        "league-rate",
        "benchmark-run",
        "alphazero-jax",
        "solitaire-solver",
        "solitaire-eval",
        "export",
        "replay-export",
    ],
)
def test_a_writer_on_a_full_disk_is_one_line(
    module: str, args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if module.endswith("alphazero_jax"):
        pytest.importorskip("jax")
    games = tmp_path / "played"
    if module.endswith("replay"):  # a game to export
        played = [
            "--env",
            "fire_and_ice_v0",
            "--agents",
            "random",
            "heuristic",
            "--games",
            "1",
            "--no-progress",
            "--out",
            str(games),
        ]
        assert run_main(capsys, "polarzoo.baselines.evaluate", *played).returncode == 0
    out = tmp_path / "full"
    with full_disk(out) as mounted:
        given = [a.replace("{out}", str(out)).replace("{games}", str(games / "games.jsonl")) for a in args]
        result = run_full(capsys, mounted, module, *given)
        assert_one_line_and_nothing_half(result, out)


def test_evaluate_on_a_full_disk_keeps_the_finished_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A resumed evaluation whose disk is full: the games it had are kept whole, the table is
    printed, exit 1, one line."""
    first = tmp_path / "first"
    args = ["--env", "fire_and_ice_v0", "--agents", "random", "heuristic", "--games", "1", "--no-progress"]
    assert run_main(capsys, "polarzoo.baselines.evaluate", *args, "--out", str(first)).returncode == 0
    kept = (first / "games.jsonl").read_text().splitlines()[:1]  # as if stopped after one game
    (first / "games.jsonl").write_text(kept[0] + "\n")
    out = tmp_path / "full"
    with full_disk(out, {"games.jsonl": first / "games.jsonl", "command.json": first / "command.json"}) as mounted:
        result = run_full(capsys, mounted, "polarzoo.baselines.evaluate", "--resume", str(out))
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert "| random | heuristic | 2 |" in result.stdout
        assert (out / "games.jsonl").read_text().splitlines() == kept
        assert not [p for p in out.iterdir() if p.name not in (".filler", "games.jsonl", "command.json")]


def test_a_league_on_a_full_disk_keeps_its_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A league build continued on a full disk keeps the games it had (the old code rewrote
    games.jsonl in place and lost them)."""
    first = tmp_path / "first"
    args = ["build", "--env", "fire_and_ice_v0", "--members", "random", "heuristic", "--games", "2", "--no-progress"]
    assert run_main(capsys, "polarzoo.baselines.league", *args, "--out", str(first)).returncode == 0
    lines = (first / "games.jsonl").read_text().splitlines()
    (first / "games.jsonl").write_text("\n".join(lines[:2]) + "\n")
    out = tmp_path / "full"
    with full_disk(out, {"games.jsonl": first / "games.jsonl"}) as mounted:
        result = run_full(capsys, mounted, "polarzoo.baselines.league", *args, "--out", str(out))
        assert_one_line_and_nothing_half(result, out)
        assert (out / "games.jsonl").read_text().splitlines() == lines[:2]


def test_a_line_file_cuts_a_failed_append_back_to_its_last_whole_line(tmp_path: Path) -> None:
    from polarzoo.baselines.cli.runs import LineFile

    path = tmp_path / "log.jsonl"
    lines = LineFile(path, ["one", "two"])
    lines.add("three")
    limit = path.stat().st_size + 3  # the next line is cut by the file size limit, in a child process
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from polarzoo.baselines.cli.runs import LineFile\n"
            "lines = LineFile(Path(sys.argv[1]))\n"
            "try:\n    lines.add('four-and-more')\nexcept OSError:\n    sys.exit(0)\nsys.exit(1)",
            str(path),
        ],
        preexec_fn=lambda: _no_file_size(limit),
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert child.returncode == 0, child.stderr
    assert path.read_text() == "one\ntwo\nthree\n"
    empty = LineFile(tmp_path / "none.jsonl", [])
    empty.close()
    assert not (tmp_path / "none.jsonl").exists()
