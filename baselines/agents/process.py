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
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

PROTOCOL = "polarzoo-agent/1"
#: the longest reply line read (a larger one is a malformed reply)
MAX_REPLY = 1 << 20


class AgentForfeit(Exception):
    """The agent lost the game without a legal move: ``reason`` says why (one line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _limit(name: str, default: float | None) -> float | None:
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    value = float(text)
    if not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {text!r}")
    return value


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
        self.memory_mb = memory_mb if memory_mb is not None else int(os.environ.get("POLARZOO_AGENT_MEMORY_MB", "4096"))
        self.log_dir = Path(log_dir) if log_dir is not None else None  # else POLARZOO_AGENT_LOG_DIR at the start of a game
        self._process: subprocess.Popen[bytes] | None = None
        self._env_key: int | None = None
        self._buffer = b""
        self.bank = float(self.bank_size or 0.0)
        self.game_left = self.game_time

    # ---- the process ------------------------------------------------------------------------
    def _start(self) -> None:
        self.close()
        memory = self.memory_mb * 1024 * 1024

        def limits() -> None:  # in the child, before it runs the command
            import resource

            # the data segment and private mappings (RLIMIT_AS would also count the address space
            # a runtime only reserves, which Node.js and the JVM reserve by the gigabyte)
            resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))

        stderr: Any = subprocess.DEVNULL
        folder = self.log_dir or (
            Path(os.environ["POLARZOO_AGENT_LOG_DIR"]) if os.environ.get("POLARZOO_AGENT_LOG_DIR") else None
        )
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                safe = "".join(c if c.isalnum() else "_" for c in self.name)[:60]
                stderr = open(folder / f"{safe}.stderr.txt", "ab")  # noqa: SIM115 (the child holds it)
            except OSError:
                stderr = subprocess.DEVNULL
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                preexec_fn=limits if os.name == "posix" else None,
                close_fds=True,
            )
        except OSError as error:
            raise AgentForfeit(f"could not start {self.argv[0]!r}: {error.strerror or error}") from None
        finally:
            if stderr is not subprocess.DEVNULL:
                stderr.close()
        self._buffer = b""
        self.bank = self.bank_size
        self.game_left = self.game_time

    def close(self) -> None:
        """End the agent's process and every process it started (its process group)."""
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

    def _exchange(self, line: str, allowed: float) -> bytes:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        if process.poll() is not None:
            self._forfeit(f"the agent exited (status {process.returncode}) before its move")
        try:
            process.stdin.write(line.encode())
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            self._forfeit("the agent closed its input (it exited or crashed)")
        started = time.monotonic()
        budget = allowed + self.bank
        if self.game_left is not None:
            budget = min(budget, self.game_left)
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = budget - (time.monotonic() - started)
            if left <= 0:
                self._charge(time.monotonic() - started, allowed)
                self._forfeit(f"no answer within the time limit ({allowed:g} s a move, bank {self.bank:.1f} s)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                status = process.poll()
                self._forfeit("the agent exited" + (f" (status {status})" if status is not None else "") + " without an answer")
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY:
                self._forfeit(f"a reply longer than {MAX_REPLY} bytes")
        reply, _, self._buffer = self._buffer.partition(b"\n")
        self._charge(time.monotonic() - started, allowed)
        return reply

    def _charge(self, spent: float, allowed: float) -> None:
        self.bank = max(0.0, self.bank - max(0.0, spent - allowed))
        if self.game_left is not None:
            self.game_left = max(0.0, self.game_left - spent)

    def _parse(self, reply: bytes, env: Any, legal: list[int]) -> int:
        try:
            answer = json.loads(reply)
        except ValueError:
            self._forfeit(f"a reply that is not JSON: {reply[:80]!r}")
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
    return ProcessAgent([sys.executable, "-m", HOST, spec, env_id], name=name or spec, send_env=True)
