#!/usr/bin/env bash
# The README's main-job command: install dependencies, build, and run the main job on its
# default configuration: the HSB reproduction of paper §4.4 (Figures 1 and 2 at full paper size,
# 10^4 replicates per cell), results in results/*.h5 and figures in results/figures/.
# Also writes the non-private HSB statistics for every prior (results/hsb_non_private.jsonl) and
# ends with the reproduction report of what it ran (results/report.html, results/claims.json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dpmu   # only the command the main job runs (the tests are built by scripts/test.sh)
mkdir -p results
DPMU=./build/engine/dpmu
for config in fig1_hsb_posterior fig2_hsb_likelihood_ratio; do
  echo "main: dpmu run configs/$config.yaml"
  # --resume continues an interrupted run without redoing finished blocks
  resume=()
  if [ -f "results/$config.h5.journal" ]; then
    resume=(--resume)
  else
    rm -f "results/$config.h5"   # a finished earlier run: recompute (seconds)
  fi
  "$DPMU" run "configs/$config.yaml" --out "results/$config.h5" "${resume[@]}"
done
out=results/hsb_non_private.jsonl
: > "$out"
for prior in g-prior zellner-siow hyper-g hyper-g-n robust bic aic lr; do
  "$DPMU" test --non-private --data experiments/data/hsb2.csv \
    --response math --tested female --prior "$prior" | tr -d '\n ' >> "$out"; echo >> "$out"
  "$DPMU" test --non-private --data experiments/data/hsb2.csv \
    --response math --common science --tested read --prior "$prior" | tr -d '\n ' >> "$out"; echo >> "$out"
done
# the figures, the claims checked on these results (results/claims.json, claims.md) and one
# self-contained page with all of it (plotting/report.py; open results/report.html in a browser)
/usr/bin/python3 plotting/report.py results --out results/report.html --figures results/figures
echo "main: results in results/, figures in results/figures/, claims in results/claims.json, report in results/report.html"
