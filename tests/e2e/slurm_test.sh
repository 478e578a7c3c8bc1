#!/usr/bin/env bash
# End-to-end test of scripts/slurm/sweep.sbatch on a real single-node SLURM (slurm-wlm + munge,
# brought up by scripts/slurm/slurm-up.sh in a temporary folder and stopped by PID):
#  1. the stock script, copied alone into a fresh folder with a config and without DPMU in the
#     environment (dpmu on PATH), submits 3 shards + merge; the merged file equals one `dpmu run`
#     (dpmu compare, and array by array);
#  2. one shard is cancelled mid-run with scancel: the merge job is removed (no job pending
#     forever), --status lists the unfinished shard and the command to resubmit it, and after the
#     resubmission the merged file still equals one run.
# Skips (exit 77, reported by ctest as skipped) when not root or SLURM/munge are not installed.
# Usage: slurm_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU_BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
DPMU="$DPMU_BIN"
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "SKIPPED: needs root and Debian's slurm-wlm and munge (scripts/setup-deps.sh installs them)"
  exit 77
fi
CLUSTER="$TMP/cluster"
export DPMU_SLURM_PORT=$((20000 + RANDOM % 20000))
trap 'bash "$SRC/scripts/slurm/slurm-down.sh" "$CLUSTER"; rm -rf "$TMP"' EXIT
if ! bash "$SRC/scripts/slurm/slurm-up.sh" "$CLUSTER" >"$TMP/up.out" 2>&1; then
  echo "FAIL: slurm-up: $(cat "$TMP/up.out"; tail -5 "$CLUSTER"/log/*.log 2>/dev/null)"
  exit 1
fi
export SLURM_CONF="$CLUSTER/slurm.conf"

same_datasets() {  # same_datasets A.h5 B.h5: every dataset equal (stricter than lib.sh same_arrays) (NaN = NaN), except run metadata and timings
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
names = []
a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
bad = [n for n in names if not n.startswith("run") and n != "cell_status/wall_seconds" and
       (n not in b or not np.array_equal(np.asarray(a[n][()]), np.asarray(b[n][()]),
                                        equal_nan=np.asarray(a[n][()]).dtype.kind == "f"))]
sys.exit(1 if bad or not names else 0)
PYEOF
}

wait_queue() {  # wait_queue NAME SECONDS: until no job named NAME* is queued
  local t=0
  while squeue -h -o %j | grep -q "^$1"; do
    sleep 1; t=$((t + 1))
    [ $t -ge "$2" ] && { fail "jobs $1 still queued after $2 s: $(squeue)"; return 1; }
  done
  return 0
}

# --- 1. the stock script alone in a fresh folder, dpmu on PATH, DPMU unset ---
FRESH="$TMP/fresh"
mkdir -p "$FRESH"
cp "$SRC/scripts/slurm/sweep.sbatch" "$FRESH/"
cp "$SRC/configs/smoke/normal_mean.yaml" "$FRESH/nm.yaml"
BIN_DIR=$(cd "$(dirname "$DPMU_BIN")" && pwd)
(cd "$FRESH" && env -u DPMU PATH="$BIN_DIR:$PATH" bash sweep.sbatch --time=00:10:00 nm.yaml out/nm.h5 3 --quiet) \
  >"$TMP/submit1" 2>&1 && pass || fail "submission: $(cat "$TMP/submit1")"
wait_queue dpmu-nm 120
if [ -f "$FRESH/out/nm.h5" ]; then pass; else fail "no merged file; logs: $(cat "$FRESH"/out/nm.logs/* 2>/dev/null | tail -20)"; fi
"$DPMU_BIN" run "$FRESH/nm.yaml" --out "$TMP/single.h5" --quiet >/dev/null 2>&1
"$DPMU_BIN" compare "$TMP/single.h5" "$FRESH/out/nm.h5" >/dev/null 2>&1 && pass || fail "dpmu compare: merged differs from one run"
same_datasets "$TMP/single.h5" "$FRESH/out/nm.h5" && pass || fail "merged arrays differ from one run"
ls "$FRESH"/out/nm.logs/merge-*.log >/dev/null 2>&1 && pass || fail "merge log not named merge-JOBID.log"

# --- 2. cancel one shard mid-run, the merge must not wait forever, resubmit, same result ---
cat >"$TMP/slow.yaml" <<'YAML'
experiment: normal_mean
master_seed: 7
replicates: 600
block_size: 10
grid:
  n: [20000, 40000]
  mu: 0.5
YAML
"$DPMU_BIN" run "$TMP/slow.yaml" --out "$TMP/slow-single.h5" --quiet >/dev/null 2>&1
(cd "$TMP" && DPMU="$DPMU_BIN" bash "$SRC/scripts/slurm/sweep.sbatch" slow.yaml out/slow.h5 3 --quiet) >"$TMP/submit2" 2>&1 \
  && pass || fail "submission 2: $(cat "$TMP/submit2")"
array_id=$(sed -n 's/^submitted array job \([0-9]*\).*/\1/p' "$TMP/submit2")
# wait until shard 1 runs and has checkpointed something, then cancel it
t=0
until [ -e "$TMP/out/slow.shard-1-of-3.h5.journal" ] && squeue -h -j "${array_id}_1" -o %T 2>/dev/null | grep -q RUNNING; do
  sleep 0.2; t=$((t + 1)); [ $t -ge 600 ] && break
done
scancel "${array_id}_1"
wait_queue dpmu-slow 180
if [ ! -f "$TMP/out/slow.h5" ]; then pass; else fail "merged although a shard was cancelled"; fi
(cd "$TMP" && DPMU="$DPMU_BIN" bash "$SRC/scripts/slurm/sweep.sbatch" --status slow.yaml out/slow.h5 3) >"$TMP/status" 2>&1
if grep -q "^shard 1: \(partial\|missing\)" "$TMP/status" && grep -q "^shard 0: done" "$TMP/status" && grep -q -- "--array=1" "$TMP/status"; then
  pass
else
  fail "--status after the cancellation: $(cat "$TMP/status")"
fi
resubmit=$(grep -A1 "^resubmit" "$TMP/status" | tail -1)
(cd "$TMP" && DPMU="$DPMU_BIN" eval "$resubmit") >"$TMP/submit3" 2>&1 && pass || fail "resubmission: $(cat "$TMP/submit3")"
wait_queue dpmu-slow 180
same_datasets "$TMP/slow-single.h5" "$TMP/out/slow.h5" && pass || fail "after cancel and resubmit the merged file differs from one run"
"$DPMU_BIN" compare "$TMP/slow-single.h5" "$TMP/out/slow.h5" >/dev/null 2>&1 && pass || fail "dpmu compare after resubmission"

finish "slurm e2e"
