#!/usr/bin/env bash
# Side-by-side timing of one data set, one thread: the R pipeline of bench/r_pipeline/pipeline.R
# against dpmu (docs/performance.md "dpmu against the R pipeline"). p = 9, |T| = 4, n = 10^6 by
# default; analysed non-privately and by the Laplace mechanism (eps = 0.5) with and without
# thresholding, ZS prior, beta-binomial(1, 1) model prior.
#
# Usage: bench/r_pipeline/run.sh [BUILD_DIR] [N] [DATASETS] [VARIANTS] [PRUNING]
# PRUNING: dpmu's pruning_share (default 0: every model integrated; 1e-17: the models holding
# provably less than 1e-17 of the posterior skipped, docs/bma.md).
# VARIANTS: three (default: the non-private analysis and the Laplace G*_r and G**_r) or one (the
# Laplace non-thresholded G*_r only, on both sides).
# BAS is looked up in R's libraries and R_LIBS_USER; if R_LIBS_USER is unset, in the private library
# of scripts/install-bas.sh ($DPMU_R_LIBRARY, default $HOME/.local/share/dpmu/Rlib).
# Needs Rscript (r-base-core). The bas.lm step needs the R package BAS (not in Debian; see
# bench/r_pipeline/README.md): without it the R parts that do not need BAS are timed, the ratio is
# not computed, and the script exits 77 (skipped) after printing what it measured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
n="${2:-1000000}"
datasets="${3:-3}"
variants="${4:-three}"
pruning="${5:-0}"
case "$variants" in three|one) ;; *) echo "error: VARIANTS must be three or one" >&2; exit 2 ;; esac
if [ -z "${R_LIBS_USER:-}" ]; then
  lib="${DPMU_R_LIBRARY:-$HOME/.local/share/dpmu/Rlib}"
  if [ -d "$lib" ]; then export R_LIBS_USER="$lib"; fi
fi
dpmu="$build/engine/dpmu"
if ! command -v Rscript >/dev/null 2>&1; then
  echo "SKIP: Rscript not found (apt-get install r-base-core)"; exit 77
fi
if [ ! -x "$dpmu" ]; then echo "error: $dpmu not built (bash scripts/build.sh)" >&2; exit 1; fi
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# Both sides are timed in CPU seconds (user + system) of one thread, which a loaded machine
# inflates much less than wall-clock time.
echo "== R pipeline: n = $n, p = 9, |T| = 4, eps = 0.5, $datasets data sets, $variants variant(s) (CPU seconds per data set)"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 Rscript "$here/pipeline.R" "$n" 9 4 0.5 "$datasets" 1 1000 "$variants" | tee "$tmp/r.txt"
r_total=$(awk '$1 == "step" { s += $3 } END { printf "%.6f", s }' "$tmp/r.txt")
have_bas=$(awk '$1 == "bas" { print $2 }' "$tmp/r.txt")

cat > "$tmp/cell.yaml" <<YAML
experiment: ssp_simulation
master_seed: 1
replicates: $datasets
parameters: {laplace_ridge_draws: 1000, prior: zellner_siow, pruning_share: $pruning}
grid:
YAML
if [ "$variants" = one ]; then
  echo "  - {p: 9, true_model_size: 4, n: $n, mechanism: laplace, epsilon: 0.5, thresholded: 0}" >> "$tmp/cell.yaml"
else
  cat >> "$tmp/cell.yaml" <<YAML
  - {p: 9, true_model_size: 4, n: $n, mechanism: none}
  - {p: 9, true_model_size: 4, n: $n, mechanism: laplace, epsilon: 0.5, thresholded: [0, 1]}
YAML
fi
# The per-cell ridge calibration (1 000 draws) is included in dpmu's time, not in R's (conservative).
echo "== dpmu: the same cell, one thread"
/usr/bin/time -f "%U %S" -o "$tmp/time.txt" "$dpmu" run "$tmp/cell.yaml" --out "$tmp/cell.h5" --threads 1 --quiet \
  >/dev/null
d_total=$(awk -v k="$datasets" '{ printf "%.6f", ($1 + $2) / k }' "$tmp/time.txt")
printf "dpmu CPU seconds per data set %.6f (whole run: ridge calibration, %s data sets, HDF5 file)\n" "$d_total" "$datasets"
# The marginal cost of a data set, without start-up, calibration and file: a second run with twice
# the data sets; (CPU(2k) - CPU(k)) / k.
sed "s/^replicates: $datasets\$/replicates: $((2 * datasets))/" "$tmp/cell.yaml" > "$tmp/cell2.yaml"
/usr/bin/time -f "%U %S" -o "$tmp/time2.txt" "$dpmu" run "$tmp/cell2.yaml" --out "$tmp/cell2.h5" --threads 1 --quiet \
  >/dev/null
d_marginal=$(awk -v k="$datasets" 'NR == FNR { a = $1 + $2; next } { printf "%.6f", ($1 + $2 - a) / k }' \
  "$tmp/time.txt" "$tmp/time2.txt")
printf "dpmu marginal CPU seconds per data set %.6f (runs of %s and %s data sets)\n" "$d_marginal" "$datasets" \
  "$((2 * datasets))"
echo "load: $(uptime)"
if [ "$have_bas" != "TRUE" ]; then
  printf "R without bas.lm: %.6f s per data set = %.1f x dpmu (a lower bound of the ratio)\n" \
    "$r_total" "$(awk -v a="$r_total" -v b="$d_total" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  echo "SKIP: the R package BAS is not installed, so the full R pipeline was not timed (see bench/r_pipeline/README.md)"
  exit 77
fi
printf "R pipeline %.6f s per data set; ratio R / dpmu = %.1f (whole run), %.1f (marginal)\n" "$r_total" \
  "$(awk -v a="$r_total" -v b="$d_total" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
  "$(awk -v a="$r_total" -v b="$d_marginal" 'BEGIN { print (b > 0 ? a / b : 0) }')"
