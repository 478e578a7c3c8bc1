#!/usr/bin/env bash
# R reads a results file (hdf5r) and `dpmu export` output (read.csv): tests/r/results_hdf5r_test.R.
# Skips (exit 77) where Rscript or the R packages hdf5r and jsonlite are missing
# (scripts/setup-deps.sh installs r-base-core, r-cran-hdf5r, r-cran-jsonlite).
# Usage: r_hdf5r_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
if ! command -v Rscript >/dev/null; then
  echo "SKIP: Rscript is not installed (apt-get install r-base-core r-cran-hdf5r r-cran-jsonlite)"
  exit 77
fi
if ! Rscript -e 'quit(status = !all(sapply(c("hdf5r", "jsonlite"), requireNamespace, quietly = TRUE)))' 2>/dev/null; then
  echo "SKIP: the R packages hdf5r and jsonlite are not installed (apt-get install r-cran-hdf5r r-cran-jsonlite)"
  exit 77
fi
expect_exit 0 "" run "$SRC/tests/fixtures/export_study.yaml" --out "$TMP/hsb.h5" --quiet
expect_exit 0 "" summarize "$TMP/hsb.h5"
cp "$TMP/out" "$TMP/hsb.json"
expect_exit 0 "" export "$TMP/hsb.h5" --out "$TMP/hsb.csv"
expect_exit 0 "" export "$TMP/hsb.h5" --replicates --out "$TMP/reps.csv"
if LC_ALL=C.UTF-8 Rscript "$SRC/tests/r/results_hdf5r_test.R" "$TMP/hsb.h5" "$TMP/hsb.json" "$TMP/hsb.csv" \
  "$TMP/reps.csv" >"$TMP/r.log" 2>&1; then
  pass
else
  fail "R: $(cat "$TMP/r.log")"
fi
finish r_hdf5r_test
