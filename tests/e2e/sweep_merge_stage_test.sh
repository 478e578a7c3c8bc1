#!/usr/bin/env bash
# The merge stage of scripts/slurm/sweep.sbatch, run as the merge job runs it (DPMU_SWEEP_STAGE=merge),
# on a study whose summary is far longer than a pipe's buffer: it must exit 0 after a successful
# merge (it failed with SIGPIPE, exit 141, when the summary was piped into `head` under pipefail),
# write the merged file equal to an unsharded run and keep the whole summary in a file.
# Usage: sweep_merge_stage_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"

cat >"$TMP/many.yaml" <<'YAML'
experiment: normal_mean
description: many cells, few replicates (a long summary)
master_seed: 7
replicates: 4
block_size: 4
parameters:
  sigma: 1.0
grid:
  - n: {from: 5, to: 404, count: 400}
    mu: [0.5]
YAML
for i in 0 1; do
  "$DPMU" run "$TMP/many.yaml" --out "$TMP/out.shard-$i-of-2.h5" --shard "$i/2" --quiet >/dev/null 2>"$TMP/err" ||
    fail "shard $i: $(cat "$TMP/err")"
done
DPMU_SWEEP_STAGE=merge DPMU="$DPMU" bash "$SRC/scripts/slurm/sweep.sbatch" "$TMP/many.yaml" "$TMP/out.h5" 2 >"$TMP/log" 2>&1
rc=$?
[ $rc -eq 0 ] && pass || fail "merge stage exit $rc: $(tail -5 "$TMP/log")"
[ "$(wc -l <"$TMP/out.summary.txt")" -gt 400 ] && pass || fail "the summary file is missing or short"
"$DPMU" run "$TMP/many.yaml" --out "$TMP/whole.h5" --quiet >/dev/null 2>&1
"$DPMU" compare "$TMP/whole.h5" "$TMP/out.h5" >/dev/null 2>&1 && pass || fail "merged file differs from one run"
# --status checks each shard's integrity, not just its existence (before: a truncated shard was "done")
head -c 20000 "$TMP/out.shard-1-of-2.h5" >"$TMP/cut.h5" && mv "$TMP/cut.h5" "$TMP/out.shard-1-of-2.h5"
(PATH="/nonexistent:$PATH" DPMU="$DPMU" bash "$SRC/scripts/slurm/sweep.sbatch" --status "$TMP/many.yaml" "$TMP/out.h5" 2) >"$TMP/status" 2>&1
grep -q "^shard 0: done" "$TMP/status" && grep -q "^shard 1: damaged" "$TMP/status" && grep -q -- "--array=1 " "$TMP/status" &&
  pass || fail "--status on a truncated shard: $(cat "$TMP/status")"
finish sweep_merge_stage_test
