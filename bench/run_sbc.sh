#!/usr/bin/env bash
# The simulation-based calibration of docs/calibration-sbc.md: every setting (p in {2, 6}, n in
# {10^3, 10^5}, Laplace epsilon in {0.1, 1}, Wishart epsilon 0.5), every analysis (the
# data-augmentation sampler, the plug-in analysis, the rejection sampler), 500 prior draws each in
# chunks of 50, one CSV per chunk in OUT (named METHOD_pP_MECHANISM_EPSILON_N_FIRST.csv). Resumable:
# a chunk whose CSV is complete is skipped; an interrupted chunk is rerun from its start (each draw
# is seeded by the setting and its index, so the rerun writes the same lines). Then summarises.
#
# Usage: bench/run_sbc.sh [--jobs J] [--build DIR] [--dry-run] OUT   (--dry-run: list the chunks to run)
#   about 3 CPU-hours for the p = 6 sampler runs and 20 CPU-minutes for the rest (2026-12-08).
set -euo pipefail
jobs=1
build=build
dry=0
while [ $# -gt 1 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    *) echo "run_sbc.sh: unknown option $1 (usage: run_sbc.sh [--jobs J] [--build DIR] OUT)" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: run_sbc.sh [--jobs J] [--build DIR] OUT" >&2; exit 2; }
out=$1
src=$(cd "$(dirname "$0")/.." && pwd)
exe=$(cd "$build" && pwd)/bench/dpmu_sbc_noise_aware
[ -x "$exe" ] || { echo "run_sbc.sh: $exe not found: build it first (bash scripts/build.sh dpmu_sbc_noise_aware)" >&2; exit 2; }
mkdir -p "$out"
# A private copy of the program, so that a rebuild during the run cannot mix two versions.
cp "$exe" "$out/.dpmu_sbc_noise_aware"
settings=("laplace 1 100000" "laplace 1 1000" "laplace 0.1 100000" "laplace 0.1 1000" "wishart 0.5 100000"
  "wishart 0.5 1000")
list=$(mktemp)
trap 'rm -f "$list"' EXIT
# The expensive runs first, interleaved over the settings, so that a partial run covers every setting.
for method in sampler plugin rejection; do
  for p in 6 2; do
    for first in 0 50 100 150 200 250 300 350 400 450; do
      for s in "${settings[@]}"; do echo "$method $p $s $first" >>"$list"; done
    done
  done
done
run_chunk() {
  local out=$1 method=$2 p=$3 mech=$4 eps=$5 n=$6 first=$7
  local f="$out/${method}_p${p}_${mech}_${eps}_${n}_${first}.csv"
  if [ -s "$f" ] && [ "$(wc -l <"$f")" -ge 51 ]; then return 0; fi
  "$out/.dpmu_sbc_noise_aware" --p "$p" --n "$n" --mechanism "$mech" --epsilon "$eps" --draws 50 --first "$first" \
    --seed 1 --method "$method" --warmup 500 --iterations 500 --max-iterations 2000 --ranks 49 >"$f.part"
  mv "$f.part" "$f"
}
export -f run_chunk
if [ "$dry" = 1 ]; then
  while read -r method p mech eps n first; do
    f="$out/${method}_p${p}_${mech}_${eps}_${n}_${first}.csv"
    if ! { [ -s "$f" ] && [ "$(wc -l <"$f")" -ge 51 ]; }; then echo "$method $p $mech $eps $n $first"; fi
  done <"$list"
  exit 0
fi
xargs -P "$jobs" -L 1 bash -c 'run_chunk "$@"' _ "$out" <"$list"
/usr/bin/python3 "$src/bench/sbc_noise_aware.py" "$out"/*.csv
