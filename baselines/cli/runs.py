"""What the CLIs share: run folders (unique, announced, never overwritten) and the help format."""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import shlex
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn


def prog_name(module: str) -> str:
    """What ``--help`` and errors call the command: the console script's name when run as one,
    else the ``python -m`` form."""
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return invoked if invoked.startswith("polarzoo-") else f"python -m {module}"


def require_at_least(parser: argparse.ArgumentParser, args: argparse.Namespace, least: int, *names: str) -> None:
    """``parser.error`` (one line, exit 2) for the first of ``names`` below ``least``."""
    for name in names:
        value = getattr(args, name)
        if value is not None and value < least:
            parser.error(f"--{name.replace('_', '-')} must be at least {least}, got {value}")


def add_quick(parser: argparse.ArgumentParser, quick: dict[str, Any]) -> None:
    """A ``--quick`` flag: a smoke run of about a minute with the settings ``quick`` (option dest ->
    value), every output written; options given beside it win (:func:`apply_quick`)."""
    settings = ", ".join(f"--{key.replace('_', '-')} {value}" for key, value in quick.items())
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke run of about a minute that writes every output ({settings}; options given beside it win)",
    )
    parser._polarzoo_quick = quick  # type: ignore[attr-defined]


def apply_quick(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> None:
    """With ``--quick``, every quick setting whose option is not on the command line ``argv``."""
    if not getattr(args, "quick", False):
        return
    given = {arg.split("=", 1)[0] for arg in argv if arg.startswith("--")}
    for dest, value in parser._polarzoo_quick.items():  # type: ignore[attr-defined]
        if f"--{dest.replace('_', '-')}" not in given:
            setattr(args, dest, value)


def seed(text: str) -> int:
    """argparse ``type`` for seeds: a whole number >= 0 (NumPy and Gymnasium refuse negative ones
    deep inside; this says so in one line)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {value}")
    return value


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` keeps the module docstring's layout (the ``python -m`` examples) and shows every
    default; an option whose default is ``None`` (it falls back to a config value, named in its
    help) or whose help already says its default shows no ``(default: None)``."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is None or "default" in text.lower():
            return text
        return super()._get_help_string(action) or ""


def new_run_dir(parent: Path, stem: str | None, prefix: str) -> Path:
    """Create and return a new folder under ``parent``.

    ``stem`` given: exactly ``parent/stem``, which must not exist yet (``FileExistsError``) and
    must be a plain name (``ValueError``: a run never lands outside ``parent``).
    Otherwise ``parent/<prefix>-<YYYYmmdd-HHMMSS>``, with ``-2``, ``-3``, ... added when another
    run started in the same second (``mkdir`` is atomic, so two processes never share one)."""
    if stem is not None and (not stem or Path(stem).name != stem or stem in (".", "..")):
        raise ValueError(f"{stem!r} is not a plain folder name (no '/' or '..'): the run folder goes under {parent}")
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


def run_dir_or_exit(parser: argparse.ArgumentParser, parent: Path, stem: str | None, prefix: str) -> Path:
    """:func:`new_run_dir`, or the parser's one-line error (exit 2) saying why there is none."""
    try:
        return new_run_dir(parent, stem, prefix)
    except FileExistsError:
        parser.error(f"--run-name {stem}: {parent / str(stem)} exists; choose another name or --resume it")
    except ValueError as error:
        parser.error(f"--run-name {error}")
    except OSError as error:
        parser.error(f"--runs {parent}: cannot create the run folder ({error.strerror or error})")
    raise AssertionError("parser.error exits")  # pragma: no cover


def writable_folder_or_exit(parser: argparse.ArgumentParser, option: str, folder: Path) -> Path:
    """``folder`` made (parents too) and proven writable, before any work; otherwise the parser's
    one-line error naming ``option`` (exit 2)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        parser.error(f"{option} {folder}: cannot write there ({error.strerror or error})")
    return folder


def one_torch_thread() -> None:
    """Games are played on one torch thread: a policy's forward passes give the same numbers on
    any thread count (the networks' sums over a batch of one do not split), so the games are the
    same, and one thread is as fast on an idle machine and 3-4x faster beside a busy core, where
    two threads wait for each other (results page, "Torch threads").  The shipped leagues were
    built this way.  For a command line's own process only: training sets its own count."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``path`` whole or not at all: a temporary name beside it, then a rename (a kill or a
    full disk never leaves half a file; the temporary file is removed on failure)."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        if isinstance(data, str):
            temporary.write_text(data)
        else:
            temporary.write_bytes(data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


class LineFile:
    """A file of lines written as results come (``games.jsonl``, a log of evaluations).

    ``LineFile(path, kept)`` first writes the lines kept whole (a temporary name, then a rename),
    so a full disk never costs a line that was already there; ``LineFile(path)`` appends to the
    file as it is.  ``add(line)`` appends one line and hands it to the OS at once.  A failed
    append is cut back to the last whole line and re-raised, and a file that has no line is not
    left behind as 0 bytes."""

    def __init__(self, path: Path, kept: Iterable[str] | None = None) -> None:
        self.path = path
        self.handle: Any = None
        if kept is None:
            return
        text = "".join(line.rstrip("\n") + "\n" for line in kept)
        if text:
            atomic_write(path, text)
        else:
            path.unlink(missing_ok=True)

    def add(self, line: str) -> None:
        data = (line.rstrip("\n") + "\n").encode()
        if self.handle is None:
            self.handle = open(self.path, "ab", buffering=0)  # noqa: SIM115 (kept open between lines)
        size = self.handle.seek(0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:  # a nearly full disk takes part of a write before it refuses the rest
                view = view[self.handle.write(view) or 0 :]
        except OSError:
            self.handle.truncate(size)
            if size == 0:
                self.close()
            raise

    def close(self) -> None:
        if self.handle is not None:
            empty = self.handle.seek(0, os.SEEK_END) == 0
            self.handle.close()
            self.handle = None
            if empty:
                self.path.unlink(missing_ok=True)


def save_figure(figure: Any, path: Path, dpi: int = 100) -> None:
    """A finished matplotlib figure laid out, written whole or not at all (:func:`atomic_write`)
    and closed."""
    import matplotlib.pyplot as plt

    try:
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format=path.suffix.lstrip(".") or "png", dpi=dpi)
        atomic_write(path, buffer.getvalue())
    finally:
        plt.close(figure)


#: An OSError whose errno is one of these means the disk (or a quota, or a size limit) is full.
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def exit_interrupted() -> NoReturn:
    """Exit 130 after a Ctrl-C, once the command has said what it kept: its files are written
    whole (atomic or line by line, unbuffered), so nothing is left to finalise; the interpreter's
    own exit after a Ctrl-C that arrived while torch and numba were loading ended by SIGINT (-2)
    about one time in six on a busy machine."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


#: what a command that writes whole files only keeps after a failed write
NOTHING_HALF_WRITTEN = (
    "nothing half-written was left (files are written whole or not at all): make room and run the command again"
)


def writes_fail_in_one_line(
    main: Callable[[list[str] | None], None], kept: str = NOTHING_HALF_WRITTEN
) -> Callable[[list[str] | None], None]:
    """A command line's ``main`` whose failed write (a full disk, a folder gone, no permission)
    prints one line on stderr (the error, the file, ``kept``: what is kept and how to go on)
    and exits 1, instead of a traceback.  Every writer writes whole files (:func:`atomic_write`)
    and cuts appended files back to their last whole line (:class:`LineFile`), so what is kept
    is complete."""

    def command(argv: list[str] | None = None) -> None:
        try:
            main(argv)
        except KeyboardInterrupt:  # before the command's own handler is in place (torch still importing)
            print("\ninterrupted", file=sys.stderr)
            exit_interrupted()
        except OSError as error:
            if error.errno is None:
                raise
            where = f": {error.filename}" if error.filename else ""
            full = " (the disk is full)" if error.errno in FULL and error.errno != errno.ENOSPC else ""
            print(f"error: {error.strerror or error}{full}{where}; {kept}", file=sys.stderr)
            sys.exit(1)

    command.__doc__ = main.__doc__
    return command


def lock_folder_or_exit(parser: argparse.ArgumentParser, option: str, folder: Path, what: str) -> int:
    """Hold ``folder``'s lock (``.lock``, an OS file lock: released when the process ends, even by
    kill -9) for the rest of the process's life; a second writer is the parser's one-line error
    naming the process that holds it.  Returns the lock's file descriptor."""
    import fcntl

    path = folder / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 100, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        parser.error(
            f"{option} {folder}: {what} is already writing there ({holder}); wait for it to end, or choose another {option}"
        )
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
    except OSError:  # a full disk: the command cannot write anything; no empty lock file is left
        path.unlink(missing_ok=True)
        os.close(fd)
        raise
    return fd


def ctrl_c_is_one_line(main: Callable[[list[str] | None], None], kept: str) -> Callable[[list[str] | None], None]:
    """A command line's ``main`` whose Ctrl-C prints one line (``interrupted: `` and ``kept``: what
    was kept and how to continue) on stderr and exits 130, instead of a traceback."""

    def command(argv: list[str] | None = None) -> None:
        try:
            main(argv)
        except KeyboardInterrupt:
            print(f"\ninterrupted: {kept}", file=sys.stderr)
            exit_interrupted()

    command.__doc__ = main.__doc__
    return command


def env_kwargs_or_exit(parser: argparse.ArgumentParser, env_id: str, text: str | None) -> dict[str, Any] | None:
    """``--env-kwargs``: a JSON object of the env's constructor arguments
    (:func:`polarzoo.envs.check_env_kwargs`), or one line naming the problem; None when not given."""
    import json

    from polarzoo.envs import check_env_kwargs

    if text is None:
        return None
    try:
        return check_env_kwargs(env_id, json.loads(text))
    except json.JSONDecodeError as error:
        parser.error(f"--env-kwargs is not JSON ({error.msg}): {text}")
    except ValueError as error:
        parser.error(f"--env-kwargs: {error}")


#: Switches that several commands share: their flag and help.
SHARED_SWITCHES = {
    "--isolate": "play each agent that names a module or a file (module:callable, model:PATH, ...) in a process of "
    "its own, under the arena's limits (--move-time, a memory cap): its code never runs in this process, and a "
    "crash, a hang or an illegal move loses that game (docs/arena.md)",
    "--trust-pickles": "load SB3 model zips that polarzoo cannot read as data (a policy class of their own) with "
    "SB3, which RUNS the code pickled in them: only for files you made or whose author you trust (docs/security.md)",
}


def add_no_progress(parser: argparse.ArgumentParser, lines: bool = False) -> None:
    """``--no-progress``: no bar on a terminal; ``lines``: the command writes steady progress lines
    instead (as it does into a log), else nothing."""
    text = "steady progress lines instead of a bar" if lines else "no progress bar (nor lines in a log)"
    parser.add_argument("--no-progress", action="store_true", help=text)


def add_network_size(parser: argparse.ArgumentParser, dim: int, blocks: int) -> None:
    """``--dim`` / ``--blocks``: a board network's token width and its number of mixing blocks."""
    parser.add_argument("--dim", type=int, default=dim, help="the board network's token width")
    parser.add_argument("--blocks", type=int, default=blocks, help="the board network's mixing blocks")


def add_isolate(parser: argparse.ArgumentParser) -> None:
    """``--isolate``: agents that name a module or a file play in processes of their own."""
    parser.add_argument("--isolate", action="store_true", help=SHARED_SWITCHES["--isolate"])


def add_trust_pickles(parser: argparse.ArgumentParser) -> None:
    """``--trust-pickles``: load SB3 zips whose policy exists only as a pickle (runs their code)."""
    parser.add_argument("--trust-pickles", action="store_true", help=SHARED_SWITCHES["--trust-pickles"])


#: set (to 1) by ``--trust-pickles``; the worker processes a command starts inherit it
TRUST_PICKLES_VARIABLE = "POLARZOO_TRUST_PICKLES"


def apply_trust_pickles(args: argparse.Namespace) -> None:
    if getattr(args, "trust_pickles", False):
        os.environ[TRUST_PICKLES_VARIABLE] = "1"


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text!r}")
    return value


def add_time_control(parser: argparse.ArgumentParser) -> None:
    """``--move-time`` / ``--game-time``: the clock of ``proc:COMMAND`` agents (docs/arena.md)."""
    parser.add_argument(
        "--move-time",
        type=_seconds,
        default=None,
        help="seconds a proc:COMMAND agent may take a move, then a bank of twice that for the whole game (default 5)",
    )
    parser.add_argument("--game-time", type=_seconds, default=None, help="seconds a proc:COMMAND agent may take for a whole game")
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="run proc:COMMAND and --isolate agents under bubblewrap (bwrap): no network, a read-only file system but "
        "for their private folder (docs/security.md); refused where bwrap is not installed",
    )


def apply_time_control(args: argparse.Namespace, out: Path | None = None) -> None:
    """The time control and the folder for the agents' stderr, for ``proc:`` agents made from
    here on (and in the worker processes, which inherit the environment)."""
    if getattr(args, "move_time", None):
        os.environ["POLARZOO_MOVE_TIME"] = repr(float(args.move_time))
        os.environ["POLARZOO_MOVE_BANK"] = repr(2.0 * float(args.move_time))
    if getattr(args, "game_time", None):
        os.environ["POLARZOO_GAME_TIME"] = repr(float(args.game_time))
    if getattr(args, "sandbox", False):
        if shutil.which("bwrap") is None:
            sys.exit("--sandbox runs agents under bubblewrap, which is not installed here (apt-get install bubblewrap)")
        os.environ["POLARZOO_AGENT_SANDBOX"] = "1"
    if out is not None:
        os.environ["POLARZOO_AGENT_LOG_DIR"] = str(out / "agent-logs")


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """A Ctrl-C during the block waits for its end (then raises ``KeyboardInterrupt`` as usual):
    for writes that must finish whole, such as a checkpoint (a Ctrl-C inside torch's zip writer
    surfaced as a RuntimeError from its cleanup instead).  Outside the main thread, nothing
    changes (signals reach the main thread only)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield  # (a handler of the program's own, or Ctrl-C ignored: left as it is)
        return
    caught: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def save_model(model: Any, path: Path) -> None:
    """``model.save(path)`` (an SB3 model) whole or not at all: saved under a temporary name,
    then renamed (a kill or a full disk never leaves a half-written model that looks complete)."""
    temporary = path.with_name(path.stem + ".tmp.zip")
    try:
        model.save(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def add_trust(parser: argparse.ArgumentParser) -> None:
    """``--trust SPEC``: with ``--resume``, a spec of the saved command that runs code, named again."""
    parser.add_argument(
        "--trust",
        action="append",
        default=[],
        metavar="SPEC",
        help="with --resume: run this spec of the folder's saved command that imports a module or runs a command "
        "(module:callable, proc:COMMAND, or a spec nesting one); a run folder is data, so each such spec must be named "
        "again here (repeatable)",
    )


def saved_command(
    parser: argparse.ArgumentParser,
    folder: Path,
    given: list[str],
    what: str,
    specs: Callable[[argparse.Namespace], list[str]] | None = None,
    trusted: Sequence[str] = (),
    runs_code: Callable[[str], bool] | None = None,
) -> list[str]:
    """The arguments an interrupted run saved in ``folder/command.json`` (for ``--resume``);
    ``parser.error`` when there is none, or when ``given`` (the command line) has options other
    than ``--resume``, ``--no-progress`` and ``--trust``: a resume replays the saved command, it
    changes nothing.  A run folder is data: each spec of the saved command (``specs`` reads them
    from the parsed arguments) that runs code (``runs_code``: the spec grammar's answer) must be
    in ``trusted`` (``--trust SPEC``), as it would have had to be typed on a command line."""
    from polarzoo.envs.utils import read_json_file

    try:
        saved = read_json_file(folder / "command.json", "saved command", 1024 * 1024)["argv"]
        if not isinstance(saved, list) or not all(isinstance(a, str) for a in saved):
            raise ValueError("argv is not a list of strings")
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.error(f"--resume {folder}: not {what} (no readable command.json: {error})")
    extra = [
        a
        for a in given
        if a.startswith("--") and a.split("=")[0] not in ("--no-progress", "--resume", "--trust", "--trust-pickles")
    ]
    if extra:
        parser.error(
            f"--resume replays the saved command of {folder}; it takes no other options ({', '.join(extra)}): "
            "start a new one to change them"
        )
    if "--trust-pickles" in saved and "--trust-pickles" not in given:
        parser.error(
            f"--resume {folder}: its saved command loads pickled SB3 zips (--trust-pickles), which runs their code; "
            "a run folder is data: add --trust-pickles again if you trust them"
        )
    if specs is not None and runs_code is not None:
        try:
            named = specs(parser.parse_args(list(saved)))
        except SystemExit:
            parser.error(f"--resume {folder}: its command.json holds a command this version does not take")
        for spec in named:
            if runs_code(spec) and spec not in trusted:
                parser.error(
                    f"--resume {folder}: its saved command names {spec!r}, which runs code; a run folder is data: "
                    f"add --trust {shlex.quote(spec)} if you trust it"
                )
    return list(saved)


def add_agent_options(parser: argparse.ArgumentParser) -> None:
    """What a command that plays agents named by specs offers: the ``proc:`` agents' clock,
    ``--isolate``, ``--trust-pickles`` and ``--trust`` (read back by :func:`apply_agent_options`)."""
    add_time_control(parser)
    add_isolate(parser)
    add_trust_pickles(parser)
    add_trust(parser)


def apply_agent_options(args: argparse.Namespace) -> None:
    """:func:`add_agent_options`' settings, for the agents made from here on (and the worker
    processes, which inherit the environment); the agents' stderr folder comes with the run
    folder (:func:`apply_time_control`)."""
    apply_trust_pickles(args)
    apply_time_control(args)
