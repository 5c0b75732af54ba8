#!/bin/bash
# Mixed-count Thin Ice model against the heuristics and head to head with the shipped (2-player) model, 2-6 players.
cd "$(git rev-parse --show-toplevel)"
PY=.venv/bin/python
NEW=model:docs/results/thin_ice_mixed/model.safetensors
# the policy shipped up to 0.3 (`pretrained` when this round was judged; since 0.4 it is round 3's)
OLD=model:docs/results/thin_ice_pretrained/model.safetensors
OUT=runs/thin_ice_mixed_eval
mkdir -p $OUT
H=heuristic
ev() { out=$1; shift; $PY -m polarzoo.baselines.evaluate --env thin_ice_v0 --no-progress --workers 2 --out $OUT/$out "$@" > $OUT/$out.log 2>&1; echo "$out done $(date +%T)"; }
ev new-2p --agents $NEW heuristic random --games 50
ev old-2p --agents $OLD heuristic random --games 50
ev h2h-2p --agents $NEW $OLD --games 50
for n in 3 4 5 6; do
  hs=$(for i in $(seq 2 $n); do printf "heuristic "; done)
  ev new-${n}p --env-kwargs "{\"num_players\": $n}" --agents $NEW $hs --games 10
  ev old-${n}p --env-kwargs "{\"num_players\": $n}" --agents $OLD $hs --games 10
  hs2=$(for i in $(seq 3 $n); do printf "heuristic "; done)
  ev h2h-${n}p --env-kwargs "{\"num_players\": $n}" --agents $NEW $OLD $hs2 --games 10
done
echo all done
