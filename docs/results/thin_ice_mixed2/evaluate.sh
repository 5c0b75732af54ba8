#!/bin/bash
# The mixed-count Thin Ice model (thin_ice_mixed, then 48,000 more PPO steps on 2-6 player tables
# against the heuristic, the shipped 2-player model, itself and random) judged by the
# protocol: first place and mean points against N-1 heuristics at 3-6 players, 2 players against
# random and the heuristic, head to head with the policy shipped up to 0.3, and its league rating
# at every count (in the shipped league: v4 when rounds 2 and 3 were judged).
# Usage: evaluate.sh [MODEL_FOLDER] (default this one; ../thin_ice_mixed3/evaluate.sh calls it with its own).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
PY=${PY:-.venv/bin/python}
FOLDER=${1:-docs/results/thin_ice_mixed2}
NEW=model:$FOLDER/model.safetensors
# the policy shipped up to 0.3 (`pretrained` when these rounds were judged; since 0.4 it is round 3's)
OLD=model:docs/results/thin_ice_pretrained/model.safetensors
OUT=${OUT:-runs/$(basename "$FOLDER")_eval}
mkdir -p "$OUT"
ev() { out=$1; shift; $PY -m polarzoo.baselines.evaluate --env thin_ice_v0 --no-progress --workers 2 --out "$OUT/$out" "$@" > "$OUT/$out.log" 2>&1; echo "$out done $(date +%T)"; }
ev new-2p --agents $NEW random heuristic --games 100  # the results page's protocol for the shipped agents
ev h2h-2p --agents $NEW $OLD --games 50
for n in 3 4 5 6; do
  hs=$(for i in $(seq 2 $n); do printf "heuristic "; done)
  ev new-${n}p --env-kwargs "{\"num_players\": $n}" --agents $NEW $hs --games 20
  hs2=$(for i in $(seq 3 $n); do printf "heuristic "; done)
  ev h2h-${n}p --env-kwargs "{\"num_players\": $n}" --agents $NEW $OLD $hs2 --games 10
done
for n in 2 3 4 5 6; do
  $PY -m polarzoo.baselines.league rate --env thin_ice_v0 --agent $NEW --players $n --workers 2 --out "$OUT/rate-${n}p" > "$OUT/rate-${n}p.log" 2>&1
  echo "rate-${n}p done $(date +%T)"
done
echo all done
