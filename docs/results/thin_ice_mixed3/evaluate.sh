#!/bin/bash
# The third round's model (thin_ice_mixed2, then 72,704 more PPO steps on 2-6 player tables
# weighted to 4 and 6, mostly against the heuristic), judged as the second round was.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
exec bash docs/results/thin_ice_mixed2/evaluate.sh docs/results/thin_ice_mixed3
