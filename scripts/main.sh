#!/usr/bin/env bash
# The README's main-job command: install dependencies, build, and run the main job on its
# embedded default configuration, writing results/ (and, once plotting exists, figures).
# Current main job: the non-private HSB analysis of paper §4.4 for every prior.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
mkdir -p results
out=results/hsb_non_private.jsonl
: > "$out"
for prior in g-prior zellner-siow hyper-g hyper-g-n robust bic aic lr; do
  ./build/engine/dpmu test --non-private --data experiments/data/hsb2.csv \
    --response math --tested female --prior "$prior" | tr -d '\n ' >> "$out"; echo >> "$out"
  ./build/engine/dpmu test --non-private --data experiments/data/hsb2.csv \
    --response math --common science --tested read --prior "$prior" | tr -d '\n ' >> "$out"; echo >> "$out"
done
echo "main: wrote $out ($(wc -l < "$out") tests)"
