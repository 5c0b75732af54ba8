#!/usr/bin/env bash
# The accelerator checks in one prepared script, for a lent GPU machine: the JAX twins' tests, their
# steps/s beside the numba cores and pgx's connect_four and othello (batches 4,096 and 65,536), and
# AlphaZero-JAX's default Fire & Ice run, whose network comes back to be played in PettingZoo.
#
#   Here, once (the device image has JAX, numba, torch and pytest, not these; pure-Python wheels):
#     echo /.whl/ >> .git/info/exclude
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl \
#         pgx==2.6.0 mctx==0.0.71 svgwrite==1.4.3 pettingzoo==1.27.0 gymnasium==1.4.0 \
#         farama-notifications==0.0.4
#   There (the device tool's run, carry [".whl"], timeout_s 600):
#     bash benchmarks/accelerator_checks.sh
#   Here, after (its files under the reply's files_at):
#     python -m polarzoo.baselines.evaluate --env fire_and_ice_v0 --games 50 \
#         --agents az-jax:FILES_AT/az/model.npz heuristic az:20
#
# Writes to $OUT (the device's return folder; runs/accelerator_checks elsewhere) at most the 8 files
# that come back: device.txt, tests.log, jax_envs_benchmark.md, az.log and az/{model.npz,
# model.json, config.json, evaluations.csv}.  SMOKE=1 shrinks every step: a try of the script itself
# on any machine (a minute on a CPU) where this checkout is installed editable (pip install -e).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "${OUT:-$repo/runs/accelerator_checks}/az" && cd "${OUT:-$repo/runs/accelerator_checks}" && pwd)
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false  # pytest's workers share the GPU
PYTHON=${PYTHON:-python3}

# The commands run outside the checkout: there, its polarzoo/ folder (the package's top without
# envs/, wrappers/, baselines/) would shadow the installed package.  benchmarks/ and tests/ are
# read from the checkout, after the installed package.
site=""
if [ -d "$repo/.whl" ]; then  # the carried wheels and this checkout, installed beside the image's packages
    site=$(mktemp -d)
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "$repo"/.whl/*.whl
    (cd "$repo" && "$PYTHON" -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target "$site" . && rm -rf build)
    rm -rf "$site/tests"  # pgx's wheel ships a top-level tests package, which would hide ours
fi
export PYTHONPATH="${site:+$site:}$repo"
cd "$(mktemp -d)"

if [ "${SMOKE:-0}" = 1 ]; then
    sizes=(64) trials=1 seconds=0.2 lockstep=200 az=(--quick)
    tests=(--collect-only -q)
else
    sizes=(4096 65536) trials=2 seconds=1 lockstep=20000 az=()
    tests=(-q -n 8 -m 'slow or not slow')  # the slow ones too: the GPU's whole share
fi

{
    nvidia-smi -L 2>/dev/null || echo "nvidia-smi: none (no NVIDIA GPU)"
    "$PYTHON" -c 'import sys, jax, numba; print(sys.version.split()[0], "jax", jax.__version__, "numba", numba.__version__); print(jax.devices())'
} | tee "$OUT/device.txt"

echo "== the twins' and AlphaZero-JAX's tests" >&2
"$PYTHON" -m pytest -p no:cacheprovider --import-mode=append --rootdir "$repo" "${tests[@]}" \
    "$repo/tests/test_jax_envs.py" "$repo/tests/test_alphazero_jax.py" > "$OUT/tests.log" 2>&1 \
    || { tail -20 "$OUT/tests.log"; echo "tests failed: $OUT/tests.log" >&2; }
tail -1 "$OUT/tests.log"

echo "== steps/s beside the numba cores and pgx" >&2
"$PYTHON" -m benchmarks.jax_envs --sizes "${sizes[@]}" --trials "$trials" --seconds "$seconds" \
    --lockstep-games "$lockstep" | tee "$OUT/jax_envs_benchmark.md"

echo "== AlphaZero-JAX's default run (its network comes back)" >&2
runs=$(mktemp -d)
"$PYTHON" -m polarzoo.baselines.alphazero_jax --env fire_and_ice --runs "$runs" --run-name az --no-final-eval "${az[@]}" \
    2>&1 | tee "$OUT/az.log"
for file in model.npz model.json config.json evaluations.csv; do
    cp "$runs/az/$file" "$OUT/az/$file"
done
echo "done: $OUT" >&2
