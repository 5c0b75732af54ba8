"""An agent in its own process, in any language: ``proc:COMMAND`` (the command split as a shell
would), speaking JSON lines over its stdin and stdout (``docs/arena.md``).

Each game starts the command afresh (one process per game, as Kaggle's agent runner does), in a
process group of its own, with a memory cap; each turn it reads one JSON object and answers one:

    {"protocol": "polarzoo-agent/1", "game": "go_with_the_floe_v0", "seat": "white",
     "seats": ["black", "white"], "ply": 12, "legal_actions": [37, 38, ...],
     "legal_moves": [{"action": 37, "notation": "E4-E5"}, ...], "state": {...},
     "observation": [[[0, 1, ...]]], "time": {"move": 1.0, "bank": 10.0, "game": null}}
    -> {"action": 37}      or      {"move": "E4-E5"}

``state`` is the env's own description (:meth:`~polarzoo.envs.utils.TurnBasedAECEnv.describe`,
without pictures), ``observation`` the seat's observation tensor as nested lists.  A move may
take ``move`` seconds, then draws on a ``bank`` of overage for the whole game (Kaggle's
``actTimeout`` and overage); ``game`` caps the game's total.  No answer in time, an exit, a reply
that is not one JSON object, an unknown move or an illegal one: the agent forfeits the game
(:class:`AgentForfeit`, its reason recorded by the tournament), and its process group is ended.
The limits come from the constructor or the environment (``POLARZOO_MOVE_TIME``,
``POLARZOO_MOVE_BANK``, ``POLARZOO_GAME_TIME``, ``POLARZOO_AGENT_MEMORY_MB``; the command lines'
``--move-time`` sets the first), and the agent's stderr goes to ``POLARZOO_AGENT_LOG_DIR`` when
set (the command lines set it to their output folder).
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from polarzoo.baselines.agents.jail import MEMORY_EXIT, PROCESS_EXIT, START_EXIT
from polarzoo.baselines.agents.spec import parse_spec, with_absolute_paths
from polarzoo.envs.utils import loads_json

PROTOCOL = "polarzoo-agent/1"
#: the longest reply line read (a larger one is a malformed reply)
MAX_REPLY = 1 << 20


#: the longest forfeit reason kept (an agent's own text is quoted in some)
MAX_REASON = 300
#: the keeper of the agent's processes (:mod:`polarzoo.baselines.agents.jail`), run as a script
JAIL = str(Path(__file__).with_name("jail.py"))


class AgentForfeit(Exception):
    """The agent lost the game (before a legal move, or by an illegal one): ``reason`` says why
    (one line, at most :data:`MAX_REASON` characters)."""

    def __init__(self, reason: str) -> None:
        reason = " ".join(str(reason).split())
        if len(reason) > MAX_REASON:
            reason = reason[: MAX_REASON - 3] + "..."
        super().__init__(reason)
        self.reason = reason


def _limit(name: str, default: float | None) -> float | None:
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1e9:
        raise ValueError(f"{name} must be a positive number of seconds, got {text[:40]!r}")
    return value


def _whole(name: str, default: int) -> int:
    """A positive whole number from the environment variable ``name`` (``ValueError`` naming it)."""
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    if not (text.strip().isascii() and text.strip().isdigit()) or len(text.strip()) > 12 or int(text) < 1:
        raise ValueError(f"{name} must be a positive whole number, got {text[:40]!r}")
    return int(text)


def _to_json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


class ProcessAgent:
    """``proc:COMMAND``: the command run as an agent (see the module docstring)."""

    #: a training checkpoint never saves nor changes it (its command comes from the run's config)
    checkpoint_live = True

    def __init__(
        self,
        command: str | list[str],
        move_time: float | None = None,
        bank: float | None = None,
        game_time: float | None = None,
        memory_mb: int | None = None,
        log_dir: str | Path | None = None,
        name: str | None = None,
        send_env: bool = False,
        ready: bool = False,
        sandbox: bool | None = None,
        processes: int | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("proc:COMMAND needs a command, e.g. proc:python my_agent.py")
        self.argv = argv
        self.name = name or "proc:" + " ".join(argv)
        #: also send the env itself, pickled (``"env"``): for polarzoo's own host of an isolated
        #: Python agent (:mod:`polarzoo.baselines.agents.host`), which plays ``act(env, ...)`` on it.
        #: The pickle goes from the rater to the agent only; nothing the agent sends is unpickled.
        self.send_env = send_env
        self.move_time = move_time if move_time is not None else _limit("POLARZOO_MOVE_TIME", 5.0)
        self.bank_size = bank if bank is not None else _limit("POLARZOO_MOVE_BANK", 2.0 * float(self.move_time or 5.0))
        self.game_time = game_time if game_time is not None else _limit("POLARZOO_GAME_TIME", None)
        self.memory_mb = memory_mb if memory_mb is not None else _whole("POLARZOO_AGENT_MEMORY_MB", 4096)
        self.processes = processes if processes is not None else _whole("POLARZOO_AGENT_PROCESSES", 64)
        self.file_bytes = _whole("POLARZOO_AGENT_FILE_MB", 256) * 1024 * 1024
        self.stderr_bytes = _whole("POLARZOO_AGENT_STDERR_KB", 1024) * 1024
        self.start_time = _limit("POLARZOO_AGENT_START_TIME", 120.0) or 120.0
        #: the host of an isolated agent says ``{"ready": true}`` once its imports are done; the
        #: first move's clock starts then
        self.ready = ready
        self.extra_env = dict(extra_env or {})
        self.sandbox = sandbox if sandbox is not None else os.environ.get("POLARZOO_AGENT_SANDBOX", "") == "1"
        if self.sandbox and shutil.which("bwrap") is None:
            raise ValueError("--sandbox runs agents under bubblewrap, which is not installed (apt-get install bubblewrap)")
        self.log_dir = Path(log_dir) if log_dir is not None else None  # else POLARZOO_AGENT_LOG_DIR at the start of a game
        self._process: subprocess.Popen[bytes] | None = None
        self._env_key: int | None = None
        self._buffer = b""
        self.bank: float = float(self.bank_size or 0.0)
        self.game_left = self.game_time

    # ---- the process ------------------------------------------------------------------------
    def _start(self) -> None:
        self.close()
        folder = self.log_dir or (
            Path(os.environ["POLARZOO_AGENT_LOG_DIR"]) if os.environ.get("POLARZOO_AGENT_LOG_DIR") else None
        )
        log = None
        hidden = []
        if folder is not None:
            hidden = [str(folder.resolve()), str(folder.resolve().parent)]
            try:
                folder.mkdir(parents=True, exist_ok=True)
                safe = "".join(c if c.isalnum() else "_" for c in self.name)[:60]
                log = str((folder / f"{safe}.stderr.txt").resolve())
            except OSError:
                log = None
        settings = {
            "argv": self.argv,
            "memory_mb": self.memory_mb,
            "processes": self.processes,
            "file_bytes": self.file_bytes,
            "stderr_bytes": self.stderr_bytes,
            "log": log,
            "sandbox": self.sandbox,
            "hidden": [h for h in hidden if len(h) > 1],
            # (off only to test the subreaper and the polled limits alone, as on a system without
            # PID namespaces or writable cgroups)
            "env": self.extra_env,
            "namespace": os.environ.get("POLARZOO_AGENT_NAMESPACE", "1") != "0",
            "cgroups": os.environ.get("POLARZOO_AGENT_CGROUPS", "1") != "0",
        }
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", JAIL, json.dumps(settings)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as error:
            raise AgentForfeit(f"could not start {self.argv[0]!r}: {error.strerror or error}") from None
        assert self._process.stdin is not None
        os.set_blocking(self._process.stdin.fileno(), False)  # a write never waits past the agent's clock
        self._buffer = b""
        self.bank = float(self.bank_size or 0.0)
        self.game_left = self.game_time
        if self.ready:  # the host's imports are not the agent's move time
            line = self._read_line(self.start_time, "no ready line within the start-up limit")
            if line.strip() != b'{"ready": true}':
                self._forfeit(f"a first line other than its ready line: {line[:80]!r}")

    def close(self) -> None:
        """End the agent and every process it started: its keeper kills the whole tree (orphans
        re-parented to it, a PID namespace where there is one) and exits."""
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=5)
        except (subprocess.TimeoutExpired, OSError):
            pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def game_over(self) -> None:
        """The game has ended (the tournament calls this): the process goes with it."""
        self.close()
        self._env_key = None

    def __getstate__(self) -> dict[str, Any]:  # to a worker process: the command, not the process
        state = self.__dict__.copy()
        state.update(_process=None, _env_key=None, _buffer=b"")
        return state

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    # ---- a turn -----------------------------------------------------------------------------
    def act(self, env: Any, agent: str, rng: np.random.Generator) -> int:
        if self._process is None or self._env_key != id(env):  # a new game: a new process
            self._start()
            self._env_key = id(env)
        legal = [int(a) for a in np.flatnonzero(env.legal_action_mask())]
        allowed = self.move_time if self.move_time is not None else float("inf")
        message = {
            "protocol": PROTOCOL,
            "game": env.metadata.get("name"),
            "seat": agent,
            "seats": list(env.possible_agents),
            "legal_actions": legal,
            "legal_moves": [{"action": a, "notation": env.action_to_notation(a)} for a in legal],
            "state": _to_json(env.describe(pictures=False)),
            "observation": _to_json(env.observe(agent)["observation"]),
            "time": {"move": self.move_time, "bank": round(self.bank, 3), "game": self.game_left},
        }
        if self.send_env:
            message["env"] = base64.b64encode(pickle.dumps(env, protocol=pickle.HIGHEST_PROTOCOL)).decode()
        reply = self._exchange(json.dumps(message, separators=(",", ":")) + "\n", allowed)
        return self._parse(reply, env, legal)

    def _exited(self, when: str) -> str:
        process = self._process
        status = process.poll() if process is not None else None
        if status is None and process is not None:
            try:
                status = process.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                status = None
        if status == MEMORY_EXIT:
            return f"the agent went over its memory cap ({self.memory_mb} MB, every mapping counted) {when}"
        if status == START_EXIT:
            return f"could not start {self.argv[0]!r}: no such program, or not executable"
        if status == PROCESS_EXIT:
            return f"the agent started more than {self.processes} processes {when}"
        return "the agent exited" + (f" (status {status})" if status is not None else "") + f" {when}"

    def _exchange(self, line: str, allowed: float) -> bytes:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        if process.poll() is not None:
            self._forfeit(self._exited("before its move"))
        started = time.monotonic()
        budget = allowed + self.bank
        if self.game_left is not None:
            budget = min(budget, self.game_left)
        data = memoryview(line.encode())
        fd = process.stdin.fileno()
        while data:
            left = budget - (time.monotonic() - started)
            if left <= 0:
                self._charge(time.monotonic() - started, allowed)
                self._forfeit(f"did not read its input within the time limit ({allowed:g} s a move, bank {self.bank:.1f} s)")
            _, ready, _ = select.select([], [fd], [], left)
            if not ready:
                continue
            try:
                data = data[os.write(fd, data) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                self._forfeit(self._exited("and closed its input"))
        reply = self._read_line(budget - (time.monotonic() - started), None, allowed=allowed, started=started)
        self._charge(time.monotonic() - started, allowed)
        return reply

    def _read_line(self, budget: float, late: str | None, allowed: float = 0.0, started: float | None = None) -> bytes:
        """The agent's next line within ``budget`` seconds (``late``: the reason of a forfeit when
        it does not come; ``None``: a move's time limit)."""
        process = self._process
        assert process is not None and process.stdout is not None
        started = time.monotonic() if started is None else started
        deadline = time.monotonic() + max(0.0, budget)
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                if late is not None:
                    self._forfeit(late)
                self._charge(time.monotonic() - started, allowed)
                self._forfeit(f"no answer within the time limit ({allowed:g} s a move, bank {self.bank:.1f} s)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                self._forfeit(self._exited("without an answer"))
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY:
                self._forfeit(f"a reply longer than {MAX_REPLY} bytes")
        reply, _, self._buffer = self._buffer.partition(b"\n")
        return reply

    def _charge(self, spent: float, allowed: float) -> None:
        self.bank = max(0.0, self.bank - max(0.0, spent - allowed))
        if self.game_left is not None:
            self.game_left = max(0.0, self.game_left - spent)

    def _parse(self, reply: bytes, env: Any, legal: list[int]) -> int:
        try:
            answer = loads_json(reply, what="its reply", max_bytes=MAX_REPLY, max_depth=16)
        except ValueError as error:
            self._forfeit(f"a reply that is not JSON ({error}): {reply[:80]!r}")
        if not isinstance(answer, dict):
            self._forfeit(f"a reply that is not a JSON object: {reply[:80]!r}")
        if "action" in answer:
            action = answer["action"]
            if isinstance(action, bool) or not isinstance(action, int):
                self._forfeit(f'"action" must be an integer id, got {str(action)[:40]!r}')
        elif isinstance(answer.get("move"), str):
            try:
                action = int(env.notation_to_action(answer["move"]))
            except ValueError as error:
                self._forfeit(f"move {answer['move'][:40]!r} is not a move of this game ({error})")
        else:
            self._forfeit('a reply without "action" or "move"')
        if action not in legal:
            why = env.explain_illegal(action) if hasattr(env, "explain_illegal") else "not legal here"
            self._forfeit(f"illegal action {action}: {why}")
        return int(action)

    def _forfeit(self, reason: str) -> Any:
        self.close()
        self._env_key = None
        raise AgentForfeit(reason)


#: The module that hosts an isolated Python agent (``--isolate``).
HOST = "polarzoo.baselines.agents.host"


def isolated(spec: str, env_id: str, name: str | None = None) -> ProcessAgent:
    """``spec`` (a ``module:callable``, a ``model:PATH`` ...) played in a process of its own, under
    the arena's limits (time, memory, one process group), through the JSON-lines protocol: its
    code and files are loaded there, never in the caller's process (``--isolate``)."""
    # The agent runs in a private folder: its files are named from here, its module is looked for
    # here (as `python -m` and the console scripts look for it in this process).
    here = os.getcwd()
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
    return ProcessAgent(
        [sys.executable, "-m", HOST, with_absolute_paths(parse_spec(spec), here), env_id],
        name=name or spec,
        send_env=True,
        ready=True,
        extra_env={"PYTHONPATH": path},
    )
