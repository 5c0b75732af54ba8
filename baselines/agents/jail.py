"""The keeper of one agent process for one game (``proc:`` agents and ``--isolate``): started by
:class:`~polarzoo.baselines.agents.process.ProcessAgent` as ``python -I -S jail.py SETTINGS``
(no polarzoo import: it starts in milliseconds), it runs the agent's command so that nothing the
agent starts outlives the game or reaches past its limits:

- **every descendant ends with the game**: the keeper is a child subreaper (``PR_SET_CHILD_SUBREAPER``:
  a child that calls ``setsid`` or double-forks is re-parented to it, not to init) and, where the
  system lets it (root, or a kernel that allows it), the agent runs as PID 1's child in a PID
  namespace of its own, which the kernel empties when its first process ends.  When the game ends
  (the rater sends SIGTERM, or dies: ``PR_SET_PDEATHSIG``) or the agent's main process exits, the
  keeper kills every process of the tree;
- **limits**: memory, counted over every mapping (a memory cgroup where one can be made, else the
  private data segment by ``RLIMIT_DATA`` plus the resident and shared memory of the whole tree,
  polled every 50 ms), a process count (a pids cgroup, else ``RLIMIT_NPROC`` above the user's
  running processes, and the tree polled), the size of any file written (``RLIMIT_FSIZE``), no
  core files;
- **a private folder**: the agent starts in a new temporary folder (also ``TMPDIR`` / ``HOME``),
  removed after the game; no environment variable names the rater's output folder;
- **stderr capped**: the agent's stderr goes through the keeper to the log file, at most
  ``stderr_bytes`` a game, then one line saying it was cut;
- ``sandbox``: the command is run under bubblewrap (``bwrap``): no network, the file system
  read-only but for the private folder.

Exit status: the agent's own, or :data:`MEMORY_EXIT` / :data:`PROCESS_EXIT` when the keeper
ended it for a limit (the rater names the reason).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
CLONE_NEWPID = 0x20000000
#: exit statuses of the keeper when it ended the agent for a limit
MEMORY_EXIT, PROCESS_EXIT, START_EXIT = 86, 87, 88
POLL = 0.05


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _prctl(libc: ctypes.CDLL | None, option: int, value: int) -> bool:
    """Linux's ``prctl``; False where there is none (macOS: the keeper then kills its process
    group and the children it sees, with no subreaper)."""
    try:
        return libc is not None and libc.prctl(option, value, 0, 0, 0) == 0
    except AttributeError:
        return False


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    if not os.path.isdir("/proc"):  # not Linux: the process group is what the keeper can end
        return children
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                text = handle.read()
        except OSError:
            continue
        parent = int(text[text.rindex(b")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(name))
    return children


def tree(root: int) -> list[int]:
    """Every process below ``root`` (not ``root`` itself)."""
    children, found, stack = _children_map(), [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _memory_kb(pid: int) -> int:
    """Resident private and shared memory of one process (``RssAnon`` + ``RssShmem``)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("RssAnon:", "RssShmem:")):
                    total += int(line.split()[1])
    except (OSError, ValueError):
        pass
    return total


def _cgroup(controller: str, settings: dict[str, str]) -> str | None:
    """A new cgroup of ``controller`` under this process's own, with ``settings`` written, or None."""
    try:
        with open("/proc/self/cgroup") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            base = f"/sys/fs/cgroup/{controller}{path}"
            break
    else:
        return None
    folder = os.path.join(base, f"polarzoo-agent-{os.getpid()}")
    try:
        os.mkdir(folder)
        for name, value in settings.items():
            with open(os.path.join(folder, name), "w") as handle:
                handle.write(value)
        return folder
    except OSError:
        try:
            os.rmdir(folder)
        except OSError:
            pass
        return None


def _failed(cgroup: str) -> bool:
    """Whether the kernel's OOM killer acted in a memory cgroup (v1's ``memory.oom_control``,
    v2's ``memory.events``: ``oom_kill N``), or it hit its limit (``memory.failcnt``)."""
    for name in ("memory.oom_control", "memory.events", "memory.failcnt"):
        try:
            with open(os.path.join(cgroup, name)) as handle:
                text = handle.read()
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split()
            if (words[:1] == ["oom_kill"] or name == "memory.failcnt") and words and words[-1].isdigit() and int(words[-1]) > 0:
                return True
    return False


def _user_processes() -> int:
    uid, count = os.getuid(), 0
    if not os.path.isdir("/proc"):
        return 1024  # (not Linux: a generous allowance above what the user runs)
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


class Keeper:
    def __init__(self, settings: dict) -> None:
        self.argv: list[str] = settings["argv"]
        self.memory = int(settings["memory_mb"]) * 1024 * 1024
        self.processes = int(settings["processes"])
        self.file_bytes = int(settings["file_bytes"])
        self.stderr_bytes = int(settings["stderr_bytes"])
        self.log = settings.get("log")
        self.sandbox = bool(settings.get("sandbox"))
        self.hidden = [str(v) for v in settings.get("hidden", [])]
        self.namespace = bool(settings.get("namespace", True))
        self.cgroups_allowed = bool(settings.get("cgroups", True))
        self.extra_env = {str(k): str(v) for k, v in (settings.get("env") or {}).items()}
        self.libc = _libc()
        self.main: int | None = None
        self.status: int | None = None
        self.cgroups: list[str] = []
        self.ending = False

    # ---- the agent's side ---------------------------------------------------------------------
    def _child(self, stderr_write: int, workdir: str) -> None:
        """In the forked child: where a PID namespace can be made, start its PID 1, which starts
        the agent and reaps (when the agent ends, so does the namespace: the kernel kills what is
        left when PID 1 exits); else exec the agent here."""
        _prctl(self.libc, PR_SET_PDEATHSIG, signal.SIGKILL)
        if (
            not self.namespace
            or self.libc is None
            or getattr(self.libc, "unshare", None) is None
            or self.libc.unshare(CLONE_NEWPID) != 0
        ):
            self._exec(stderr_write, workdir)
        first = os.fork()
        if first != 0:  # this process only waits for the namespace's PID 1
            os.close(0)
            os.close(1)
            _, status = os.waitpid(first, 0)
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        _prctl(self.libc, PR_SET_PDEATHSIG, signal.SIGKILL)
        agent = os.fork()
        if agent == 0:
            self._exec(stderr_write, workdir)
        os.close(0)
        os.close(1)
        while True:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                os._exit(0)
            if pid == agent:
                code = os.waitstatus_to_exitcode(status)
                os._exit((128 - code if code < 0 else code) & 0xFF)

    def _exec(self, stderr_write: int, workdir: str) -> None:
        try:
            _prctl(self.libc, PR_SET_PDEATHSIG, signal.SIGKILL)
            os.dup2(stderr_write, 2)
            for cgroup in self.cgroups:
                with open(os.path.join(cgroup, "cgroup.procs"), "w") as handle:
                    handle.write("0")
            limit = max(self.memory, 64 * 1024 * 1024)
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
            resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_bytes, self.file_bytes))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if os.getuid() != 0:  # root is not held by RLIMIT_NPROC: the pids cgroup and the poll are
                processes = _user_processes() + self.processes
                resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
            os.chdir(workdir)
            env = {
                key: value
                for key, value in os.environ.items()
                if not key.startswith("POLARZOO_AGENT_LOG") and not any(h and h in value for h in self.hidden)
            }
            env.update(TMPDIR=workdir, HOME=workdir, PWD=workdir)
            env.update(self.extra_env)
            argv = self.argv
            if self.sandbox:
                argv = [
                    "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                    "--bind", workdir, workdir, "--unshare-all", "--die-with-parent", "--new-session",
                    "--chdir", workdir, "--", *argv,
                ]  # fmt: skip
            os.execvpe(argv[0], argv, env)
        except OSError as error:
            os.write(2, f"could not start {self.argv[0]!r}: {error.strerror or error}\n".encode())
            os._exit(127)

    # ---- the keeper's side ----------------------------------------------------------------------
    def _copy_stderr(self, read_end: int) -> None:
        written, cut = 0, False
        try:
            log = open(self.log, "ab") if self.log else None  # noqa: SIM115
        except OSError:
            log = None
        try:
            while True:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                if log is None or cut:
                    continue
                room = self.stderr_bytes - written
                log.write(chunk[:room])
                written += min(len(chunk), room)
                if len(chunk) > room:
                    cut = True
                    log.write(f"\n[polarzoo: the agent's stderr was cut after {self.stderr_bytes} bytes this game]\n".encode())
                log.flush()
        except OSError:
            pass
        finally:
            if log is not None:
                log.close()

    def _end_all(self) -> None:
        """Kill every process of the tree until none is left (re-parented orphans included)."""
        if self.main is not None and self.status is None:  # first the agent itself (seen without /proc too)
            try:
                os.kill(self.main, signal.SIGKILL)
            except OSError:
                pass
        for _ in range(200):
            pids = tree(os.getpid())
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self._reap()
            time.sleep(0.005)

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.main and self.status is None:
                self.status = os.waitstatus_to_exitcode(status)

    def _on_term(self, signum: int, frame: object) -> None:
        self.ending = True

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_term)
        _prctl(self.libc, PR_SET_PDEATHSIG, signal.SIGTERM)
        _prctl(self.libc, PR_SET_CHILD_SUBREAPER, 1)
        if os.getppid() == 1:  # the rater died before the keeper was ready
            return 1
        if not self.sandbox and shutil.which(self.argv[0]) is None:
            return START_EXIT
        use_cgroups = self.cgroups_allowed
        memory_cgroup = use_cgroups and _cgroup(
            "memory", {"memory.limit_in_bytes": str(self.memory), "memory.memsw.limit_in_bytes": str(self.memory)}
        )
        memory_cgroup = memory_cgroup or (use_cgroups and _cgroup("memory", {"memory.limit_in_bytes": str(self.memory)}))
        memory_cgroup = memory_cgroup or (use_cgroups and _cgroup("memory", {"memory.max": str(self.memory)}))  # v2
        pids_cgroup = use_cgroups and _cgroup("pids", {"pids.max": str(self.processes)})
        self.cgroups = [c for c in (memory_cgroup, pids_cgroup) if c]
        workdir = tempfile.mkdtemp(prefix="polarzoo-agent-")
        read_end, write_end = os.pipe()
        self.main = os.fork()
        if self.main == 0:
            os.close(read_end)
            self._child(write_end, workdir)
        os.close(write_end)
        # the protocol's pipes belong to the agent alone: its exit closes them
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        copier = threading.Thread(target=self._copy_stderr, args=(read_end,), daemon=True)
        copier.start()
        code = 0
        while True:
            self._reap()
            if self.status is not None or self.ending:
                code = self.status if self.status is not None else 0
                break
            if not (memory_cgroup and pids_cgroup):  # else the kernel holds both limits
                pids = tree(os.getpid())
                if not pids_cgroup and len(pids) > self.processes + 2:  # (+2: the namespace's waiter and PID 1)
                    code = PROCESS_EXIT
                    break
                if not memory_cgroup and sum(_memory_kb(pid) for pid in pids) * 1024 > self.memory:
                    code = MEMORY_EXIT
                    break
            time.sleep(POLL)
        self._end_all()
        if memory_cgroup and code in (-signal.SIGKILL, 128 + signal.SIGKILL) and _failed(memory_cgroup):
            code = MEMORY_EXIT  # the kernel's OOM killer ended it inside its cgroup
        copier.join(timeout=1.0)
        for cgroup in self.cgroups:
            try:
                os.rmdir(cgroup)
            except OSError:
                pass
        shutil.rmtree(workdir, ignore_errors=True)
        if code < 0:  # killed by a signal
            code = 128 - code
        return code & 0xFF


def main() -> None:
    settings = json.loads(sys.argv[1])
    sys.exit(Keeper(settings).run())


if __name__ == "__main__":
    main()
