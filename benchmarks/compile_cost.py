"""Cost of the compiled kernels: import time and first-step latency, cold and warm cache.

Each measurement runs in a fresh Python process.  "cold": an empty ``NUMBA_CACHE_DIR`` (every
kernel is compiled); "warm": the same directory again (kernels load from disk).  numba caches
next to the source files when that folder is writable, else in ``NUMBA_CACHE_DIR`` or a per-user
folder; this script always points it at a temporary folder so that both cases are measured.

    python -m benchmarks.compile_cost
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

PROBE = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from polarzoo.envs.batch import BATCH_CORES
from polarzoo.envs import fire_and_ice_v0, go_with_the_floe_v0
t1 = time.perf_counter()
out = {"import_s": t1 - t0}
for name, core_cls in BATCH_CORES.items():
    t = time.perf_counter()
    core = core_cls(1024, seed=0)
    core.step(core.sample_actions(np.random.default_rng(0)))
    out[name + " batch: first step_s"] = time.perf_counter() - t
for name, module in (("fire_and_ice_v0", fire_and_ice_v0), ("go_with_the_floe_v0", go_with_the_floe_v0)):
    t = time.perf_counter()
    env = module.env()
    env.reset(seed=0)
    observation, *_ = env.last()
    env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    out[name + " env: first step_s"] = time.perf_counter() - t
print(json.dumps(out))
"""


def measure(cache_dir: str) -> dict[str, float]:
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    result = subprocess.run([sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        # The cache must not be the source folder's __pycache__ (an editable install writes there).
        os.environ["NUMBA_CACHE_DIR"] = cache
        cold = measure(cache)
        warm = measure(cache)
    print("| measure | cold cache (compiles) | warm cache |")
    print("|---|---:|---:|")
    for key in cold:
        print(f"| {key.replace('_s', '')} | {cold[key]:.2f} s | {warm[key]:.2f} s |")


if __name__ == "__main__":
    main()
