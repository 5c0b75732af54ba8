"""Test configuration: headless rendering for pygame windows and MuJoCo; one core per xdist worker."""

import os
import tempfile

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("MUJOCO_GL", "egl")
# The Ray tests start throwaway local clusters: Ray would otherwise write a token into the
# user's home folder (~/.ray/auth_token) and turn token auth on for their later clusters.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

# Tests that call SB3's learn() without a logger would each leave an empty SB3-<time> folder in
# /tmp (SB3 makes one when no log folder is named); they go to one folder removed at exit.
_SB3_LOGS = tempfile.TemporaryDirectory(prefix="polarzoo-tests-sb3-")
os.environ.setdefault("SB3_LOGDIR", _SB3_LOGS.name)


def _one_core_per_worker() -> None:
    """Under ``pytest -n N`` (pytest-xdist) with N at most the cores this process may use, pin
    worker i (and the CLIs and env subprocesses its tests start, which inherit the pin) to core i.
    Unpinned, each worker's torch and the training CLIs' automatic thread count (the cores this
    process may use) take every core, and two workers' threads thrash on a 2-core machine: tests
    that take 10 s alone took 40-60 s.  Results do not change: they never depend on the load, and
    every test that compares runs fixes its thread count."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not (worker.startswith("gw") and count.isdigit() and hasattr(os, "sched_setaffinity")):
        return
    cores = sorted(os.sched_getaffinity(0))
    if int(count) > len(cores):
        return
    os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})
    os.environ["OMP_NUM_THREADS"] = "1"  # torch's intra-op pool in this worker and in its subprocesses


_one_core_per_worker()
