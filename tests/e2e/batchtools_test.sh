#!/usr/bin/env bash
# scripts/batchtools/sweep.R (R's batchtools, no cluster configured: shards run in the R session):
# 3 shards + merge equal one `dpmu run`; run again after a shard's output was removed, it redoes
# only that shard. Skips (exit 77) without Rscript or the R package batchtools (r-cran-batchtools).
# Usage: batchtools_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
if ! command -v Rscript >/dev/null || ! Rscript -e 'quit(status = !requireNamespace("batchtools", quietly = TRUE))' 2>/dev/null; then
  echo "SKIP: Rscript or the R package batchtools is missing (apt-get install r-base-core r-cran-batchtools)"
  exit 77
fi
DPMU_ABS=$(cd "$(dirname "$DPMU")" && pwd)/$(basename "$DPMU")
cp "$SRC/configs/smoke/normal_mean.yaml" "$TMP/nm.yaml"
mkdir -p "$TMP/home" "$TMP/res"
sweep() { (cd "$TMP" && HOME="$TMP/home" DPMU="$DPMU_ABS" Rscript "$SRC/scripts/batchtools/sweep.R" nm.yaml res/nm.h5 3) >"$TMP/log" 2>&1; }
sweep && [ -f "$TMP/res/nm.h5" ] && pass || fail "sweep.R: $(tail -20 "$TMP/log")"
"$DPMU" run "$TMP/nm.yaml" --out "$TMP/single.h5" --quiet >/dev/null 2>&1
expect_exit 0 "equal" compare "$TMP/single.h5" "$TMP/res/nm.h5"
same_arrays "$TMP/single.h5" "$TMP/res/nm.h5" && pass || fail "merged shards differ from one run"
# a lost shard: only it is run again (batchtools: its job is reset), then the merge is the same
rm "$TMP/res/nm.h5" "$TMP/res/nm.shard-1-of-3.h5"
touch -d '2000-01-01' "$TMP/res/nm.shard-0-of-3.h5"
(cd "$TMP" && HOME="$TMP/home" Rscript -e 'library(batchtools); r <- loadRegistry("res/nm.batchtools", writeable = TRUE); resetJobs(2, reg = r)') >/dev/null 2>&1
sweep && pass || fail "sweep.R again: $(tail -20 "$TMP/log")"
[ "$(stat -c %Y "$TMP/res/nm.shard-0-of-3.h5")" = "$(date -d '2000-01-01' +%s)" ] && pass || fail "shard 0 was redone"
same_arrays "$TMP/single.h5" "$TMP/res/nm.h5" && pass || fail "merge after the rerun differs from one run"
finish batchtools_test
