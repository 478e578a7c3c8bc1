#!/usr/bin/env bash
# End-to-end tests of the Monte Carlo engine commands (run, merge, summarize, compare) on
# configs/smoke/: validation messages, thread/shard invariance, kill -9 and resume, --max-time,
# merge refusals, compare, and reading the results file with h5py (no dpmu code).
# Usage: engine_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
SMOKE="$SRC/configs/smoke/normal_mean.yaml"
SLOW="$SRC/configs/smoke/normal_mean_slow.yaml"

# --- dry run: expanded cells and the amount of work
expect_exit 0 "" run "$SMOKE" --dry-run
grep -q "cells: 6" "$TMP/out" && grep -q "mu=1;n=2000;sigma=2" "$TMP/out" && grep -q "work: 2400 replicates in 48 tasks" "$TMP/out" \
  && pass || fail "dry-run output: $(cat "$TMP/out")"

# --- bad configs: every problem, with file:line: key, exit 2, no output file
cat > "$TMP/bad.yaml" <<'YAML'
experiment: normal_mean
master_seed: 1
replicates: 0
colour: blue
parameters:
  sigma: -1
grid:
  n: [10, 2.5]
YAML
expect_exit 2 "bad.yaml:3: replicates: '0' is not an integer >= 1" run "$TMP/bad.yaml" --out "$TMP/bad.h5"
grep -qF "bad.yaml:4: colour: unknown key" "$TMP/err" && grep -qF "bad.yaml:6: parameters.sigma: value -1 is out of range; sigma must be > 0" "$TMP/err" \
  && grep -qF "bad.yaml:8: grid.n[1]: '2.5' is not an integer" "$TMP/err" && grep -qF "4 problems" "$TMP/err" && pass || fail "all errors at once: $(cat "$TMP/err")"
[ ! -e "$TMP/bad.h5" ] && pass || fail "bad config left an output file"
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\ngrid: {n: [1, 2\n' > "$TMP/syntax.yaml"
expect_exit 2 "syntax.yaml:5: invalid YAML" run "$TMP/syntax.yaml" --out "$TMP/x.h5"
printf 'experiment: normal_man\nmaster_seed: 1\nreplicates: 5\n' > "$TMP/unknown.yaml"
expect_exit 2 "unknown.yaml:1: experiment: unknown experiment 'normal_man'; registered experiments are " run "$TMP/unknown.yaml" --dry-run
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\ngrid: {[n]: 1}\n' > "$TMP/key.yaml"
expect_exit 2 "key.yaml:4: cannot read this YAML node" run "$TMP/key.yaml" --dry-run
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 100000000000\nparameters: {n: 3}\n' > "$TMP/huge.yaml"
expect_exit 2 "replicates: 100000000000 is beyond the limit of 1000000000" run "$TMP/huge.yaml" --out "$TMP/huge.h5"
# within the replicate limit, results that cannot fit in memory are still refused before any work
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 1000000000\nblock_size: 1000\ngrid: {n: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}\n' > "$TMP/huge2.yaml"
expect_exit 2 "GB in memory" run "$TMP/huge2.yaml" --out "$TMP/huge2.h5"
expect_exit 2 "--out FILE.h5 is required" run "$SMOKE"
expect_exit 2 "not of the form i/N" run "$SMOKE" --out "$TMP/x.h5" --shard 2
expect_exit 2 "0 <= i < N" run "$SMOKE" --out "$TMP/x.h5" --shard 2/2

# --- threads and shards: bit-identical
expect_exit 0 "" run "$SMOKE" --out "$TMP/t1.h5" --threads 1 --quiet
[ ! -s "$TMP/err" ] && pass || fail "--quiet printed: $(cat "$TMP/err")"
expect_exit 0 "" run "$SMOKE" --out "$TMP/t2.h5" --threads 2
# stderr is not a terminal: no redrawn progress, just the final progress line and the summary line
[ "$(wc -l < "$TMP/err")" -eq 2 ] && grep -q "^dpmu: cells 6/6, replicates 2400/2400 (" "$TMP/err" \
  && grep -q "^dpmu: 48 tasks of 48 (0 from the checkpoint), 2400 replicates" "$TMP/err" && pass || fail "progress lines: $(cat "$TMP/err")"
expect_exit 0 "" run "$SMOKE" --out "$TMP/s0.h5" --shard 0/2 --quiet
expect_exit 0 "" run "$SMOKE" --out "$TMP/s1.h5" --shard 1/2 --quiet --threads 1
expect_exit 0 "" merge "$TMP/merged.h5" "$TMP/s1.h5" "$TMP/s0.h5"
same_arrays "$TMP/t1.h5" "$TMP/t2.h5" && pass || fail "1 thread vs 2 threads differ"
same_arrays "$TMP/t1.h5" "$TMP/merged.h5" && pass || fail "unsharded vs merged shards differ"
expect_exit 2 "the file exists" run "$SMOKE" --out "$TMP/t1.h5"
expect_exit 0 "" run "$SMOKE" --out "$TMP/t1.h5" --resume --quiet

# --- replay: one replicate recomputed from (seed, cell, replicate) alone equals the stored one
expect_exit 0 "" replay "$SMOKE" --cell 4 --replicate 123
"$PY" -c "
import json, h5py
d = json.load(open('$TMP/out')); f = h5py.File('$TMP/t1.h5', 'r')
assert d['key'] == f['cells/key'][4].decode()
assert d['metrics']['sample_mean'] == f['replicates/sample_mean'][4, 123]
assert d['metrics']['quantiles'] == list(f['replicates/quantiles'][4, 123])
" && pass || fail "replay differs from the stored replicate: $(cat "$TMP/out")"
expect_exit 0 "" replay "$SMOKE" --cell 15da92038ceed026 --replicate 0
expect_exit 2 "is neither a cell index" replay "$SMOKE" --cell 6 --replicate 0
expect_exit 2 "--replicate: 400 is not in [0, 400)" replay "$SMOKE" --cell 0 --replicate 400

# --- merge refuses mismatched shards
expect_exit 2 "missing shard(s) 1/2" merge "$TMP/m1.h5" "$TMP/s0.h5"
expect_exit 2 "shard 0/2 is given twice" merge "$TMP/m2.h5" "$TMP/s0.h5" "$TMP/s0.h5"
expect_exit 0 "" run "$SMOKE" --out "$TMP/r1.h5" --shard 1/2 --replicates 300 --quiet
expect_exit 2 "comes from another study" merge "$TMP/m3.h5" "$TMP/s0.h5" "$TMP/r1.h5"
expect_exit 2 "exists" merge "$TMP/merged.h5" "$TMP/s0.h5" "$TMP/s1.h5"

# --- the results file, read with h5py only
"$PY" - "$TMP/t1.h5" <<'PYEOF' && pass || fail "h5py schema checks"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
a = f.attrs
assert a["filetype"] == "dpmu-results" and list(a["schema_version"]) == [2, 1]
assert a["experiment"] == "normal_mean" and a["master_seed"] == 20241130 and a["complete"] == 1
assert "experiment: normal_mean" in a["config_yaml"]
for k in ("dpmu_version", "git_sha", "created_utc", "started_utc", "finished_utc", "rng", "study_fingerprint"):
    assert len(a[k]) > 0, k
cells = f["cells"]
assert list(cells["n"][()]) == [5, 5, 50, 50, 1000, 2000] and cells["n"].dtype == np.int64
assert list(cells["mu"][()]) == [0, 1, 0, 1, -1, 1] and cells["sigma"].dtype == np.float64
assert cells["key"][0].decode() == "mu=0;n=5;sigma=2"
assert f["replicates/sample_mean"].shape == (6, 400) and f["replicates/quantiles"].shape == (6, 400, 3)
assert f["replicates_done"][()].all() and list(f["cell_status/n_done"][()]) == [400] * 6
m = f["replicates/sample_mean"][()]
assert np.allclose(f["summary/sample_mean/mean"][()], m.mean(axis=1), rtol=1e-12, atol=1e-15)
assert np.allclose(f["summary/sample_mean/sd"][()], m.std(axis=1, ddof=1), rtol=1e-12)
assert np.allclose(f["summary/sample_mean/mcse"][()], m.std(axis=1, ddof=1) / 20, rtol=1e-12)
assert np.allclose(f["summary/quantiles/q500"][()], np.median(f["replicates/quantiles"][()], axis=1), rtol=1e-12)
assert np.allclose(f["summary/covered/q250"][()], np.quantile(f["replicates/covered"][()], 0.25, axis=1))
assert f["calibration/z_critical"].shape == (6, 1) and np.allclose(f["calibration/z_critical"][()], 1.959963984540054)
assert list(f["calibration_sizes/z_critical"][()]) == [1] * 6
assert f["errors/replicate"].shape == (0,) and list(f["summary/sample_mean/n_ok"][()]) == [400] * 6
assert list(f["summary/sample_mean/n_nan"][()]) == [0] * 6
# schema 2.0: hex keys next to the uint64 ids, component labels, no empty list attributes
assert [k.decode() for k in cells["cell_key"][()]] == [format(int(i), "016x") for i in cells["cell_id"][()]]
assert cells["cell_key"][0].decode() == "15da92038ceed026"
assert f["component_labels/quantiles"].shape == (6, 3)
assert [x.decode() for x in f["component_labels/quantiles"][0]] == ["p=0.25", "p=0.5", "p=0.75"]
assert "data_files" not in a and "data_sha256" not in a  # empty for a simulation: not written
assert f["errors/message"].shape == (0,) and f["errors/cell_key"].shape == (0,)
PYEOF

# --- summarize
expect_exit 0 "" summarize "$TMP/t1.h5"
"$PY" -c "
import json; d = json.load(open('$TMP/out'))
assert len(d) == 6 and d[4]['cell'] == 4 and d[4]['parameters'] == {'mu': -1.0, 'n': 1000, 'sigma': 2.0}
m = d[4]['metrics']
assert set(m) == {'sample_mean', 'covered', 'quantiles[0]', 'quantiles[1]', 'quantiles[2]'}
assert all(k in m['covered'] for k in ('mean', 'sd', 'mcse', 'q025', 'q250', 'q500', 'q750', 'q975', 'n_ok', 'n_nan')) and m['covered']['n_ok'] == 400 and m['covered']['n_nan'] == 0
assert abs(m['sample_mean']['mean'] + 1) < 4 * m['sample_mean']['mcse']
" && pass || fail "summarize json: $(head -c 600 "$TMP/out")"
# golden summaries (refreshed only by scripts/update-golden.sh): relative tolerance 1e-12
"$PY" - "$TMP/out" "$SRC/tests/e2e/golden/normal_mean_smoke.json" <<'PYEOF' && pass || fail "summaries differ from tests/e2e/golden/normal_mean_smoke.json"
import json, math, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert len(got) == len(want)
for g, w in zip(got, want):
    assert g["parameters"] == w["parameters"] and g["cell_key"] == w["cell_key"]
    for name, ws in w["metrics"].items():
        for k, x in ws.items():
            y = g["metrics"][name][k]
            assert (x is None and y is None) or (isinstance(x, str) and x == y) or \
                (not isinstance(x, str) and math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15)), (g["cell"], name, k, x, y)
PYEOF
expect_exit 0 "" summarize "$TMP/t1.h5" --format table
# vector components by the experiment's labels
grep -q "quantiles\[p=0.75\]" "$TMP/out" && pass || fail "summarize table: no quantiles[p=0.75]: $(head -5 "$TMP/out")"
# fixed parameters once above the table, each cell's varying ones once: short lines
grep -q "^fixed in every cell: .*sigma=2" "$TMP/out" && [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$TMP/out")" -lt 160 ] &&
  [ "$(grep -c "sigma=" "$TMP/out")" -eq 1 ] && pass || fail "summarize table repeats parameters: $(head -3 "$TMP/out")"
expect_exit 2 "not an HDF5 file" summarize "$TMP/bad.yaml"
# metrics NaN in every replicate of a cell (the data-augmentation analysis, not run at augmented_draws 0)
# are left out of the table and counted; the JSON keeps them
cat >"$TMP/cal.yaml" <<'YAML'
experiment: ssp_calibration
master_seed: 1
replicates: 3
grid:
  - n: [1000]
    p: [2]
    true_model_size: [1]
    mechanism: none
YAML
"$DPMU" run "$TMP/cal.yaml" --out "$TMP/cal.h5" --quiet >/dev/null 2>&1 || fail "calibration run for summarize"
expect_exit 0 "" summarize "$TMP/cal.h5" --format table
if grep -q "plug_in_brier" "$TMP/out" && ! grep -q "augmented_brier" "$TMP/out" &&
  grep -q "NaN in every replicate of this cell not shown" "$TMP/out"; then pass; else fail "summarize hides all-NaN metrics: $(head -5 "$TMP/out")"; fi
expect_exit 0 "" summarize "$TMP/cal.h5" --format json
grep -q "augmented_brier" "$TMP/out" && pass || fail "summarize json keeps the all-NaN metrics"

# --- compare
expect_exit 0 "equal" compare "$TMP/t1.h5" "$TMP/merged.h5"
sed 's/sigma: 2.0/sigma: 2.5/' "$SMOKE" > "$TMP/other.yaml"
expect_exit 0 "" run "$TMP/other.yaml" --out "$TMP/other.h5" --quiet
expect_exit 1 "cell only in the first file" compare "$TMP/t1.h5" "$TMP/other.h5"
# one replicate per file: the Monte Carlo SE is unknown, not zero
expect_exit 0 "" run "$SMOKE" --out "$TMP/one_a.h5" --replicates 1 --quiet
sed 's/master_seed: .*/master_seed: 99/' "$SMOKE" > "$TMP/seed99.yaml"
expect_exit 0 "" run "$TMP/seed99.yaml" --out "$TMP/one_b.h5" --replicates 1 --quiet
expect_exit 1 "cannot judge: Monte Carlo SE unknown" compare "$TMP/one_a.h5" "$TMP/one_b.h5"
grep -q "0 with |z| > 4" "$TMP/out" && pass || fail "compare counted unknown-SE components as z differences: $(tail -1 "$TMP/out")"

# --- command-line errors are bad input: exit code 2
expect_exit 2 "--replicates" run "$SMOKE" --out "$TMP/x.h5" --replicates abc
expect_exit 2 "" run "$TMP/does_not_exist.yaml" --out "$TMP/x.h5"
expect_exit 2 "" run "$SMOKE" --out "$TMP/x.h5" --replicates 99999999999999999999
expect_exit 0 "" --help

# --- kill -9 mid-run, then --resume: bit-identical to an uninterrupted run
expect_exit 0 "" run "$SLOW" --out "$TMP/ref.h5" --quiet --threads 2
"$DPMU" run "$SLOW" --out "$TMP/k.h5" --quiet --threads 2 2>/dev/null &
pid=$!
for _ in $(seq 1 400); do
  size=$(stat -c %s "$TMP/k.h5.journal" 2>/dev/null || echo 0)
  [ "$size" -gt 4000 ] && break
  sleep 0.02
done
kill -9 $pid 2>/dev/null && killed=1 || killed=0
wait $pid 2>/dev/null
if [ $killed -eq 1 ]; then
  [ ! -e "$TMP/k.h5" ] && [ -s "$TMP/k.h5.journal" ] && pass || fail "after kill -9: expected a journal and no half-written .h5"
  expect_exit 3 "--resume" run "$SLOW" --out "$TMP/k.h5" --resume --max-time 1e-6
  expect_exit 0 "from the checkpoint" run "$SLOW" --out "$TMP/k.h5" --resume --threads 1
  grep -q "^dpmu: 60 tasks of 60 (0 from" "$TMP/err" && fail "resume redid finished work" || pass
  same_arrays "$TMP/ref.h5" "$TMP/k.h5" && pass || fail "killed + resumed differs from uninterrupted"
  [ ! -e "$TMP/k.h5.journal" ] && pass || fail "journal left after completion"
else
  fail "the run finished before it could be killed"
fi

# --- --max-time: clean stop, incomplete file, resume completes it
expect_exit 3 "dpmu run" run "$SLOW" --out "$TMP/mt.h5" --max-time 0.3 --threads 1
# the resume hint repeats --replicates (the checkpoint refuses other settings)
expect_exit 3 "--replicates 300 --resume" run "$SLOW" --out "$TMP/mt300.h5" --max-time 0.2 --threads 1 --replicates 300
expect_exit 0 "" run "$SLOW" --out "$TMP/mt300.h5" --threads 1 --replicates 300 --resume --quiet
expect_exit 0 "already complete" run "$SLOW" --out "$TMP/mt300.h5" --threads 1 --replicates 300 --resume
"$PY" -c "
import h5py; f = h5py.File('$TMP/mt.h5', 'r')
assert f.attrs['complete'] == 0
d = f['cell_status/n_done'][()]
assert d.sum() < 600 and (d % 10 == 0).all()
assert (f['summary/sample_mean/n_ok'][()] == d).all()
" && pass || fail "--max-time file"
expect_exit 0 "is incomplete" summarize "$TMP/mt.h5"
expect_exit 0 "" run "$SLOW" --out "$TMP/mt.h5" --resume --quiet
same_arrays "$TMP/ref.h5" "$TMP/mt.h5" && pass || fail "--max-time + resume differs from uninterrupted"

# --- SIGTERM (as SLURM sends before a time limit): clean stop, exit 3, incomplete file, resumable
"$DPMU" run "$SLOW" --out "$TMP/term.h5" --quiet --threads 1 2>"$TMP/err" &
pid=$!
for _ in $(seq 1 400); do
  size=$(stat -c %s "$TMP/term.h5.journal" 2>/dev/null || echo 0)
  [ "$size" -gt 4000 ] && break
  sleep 0.02
done
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 3 ] && "$PY" -c "import h5py; assert h5py.File('$TMP/term.h5', 'r').attrs['complete'] == 0" \
  && pass || fail "SIGTERM: exit $rc (want 3) or file not marked incomplete; $(cat "$TMP/err")"
expect_exit 0 "" run "$SLOW" --out "$TMP/term.h5" --resume --quiet
same_arrays "$TMP/ref.h5" "$TMP/term.h5" && pass || fail "SIGTERM + resume differs from uninterrupted"

# --- unwritable output: a clear message, exit 2
expect_exit 2 "does not exist (create it first)" run "$SMOKE" --out "$TMP/no/such/dir/x.h5"
# merge into a missing folder names the folder (before: "cannot create the lock file")
expect_exit 2 "the output folder $TMP/no/such/dir does not exist (create it first)" merge "$TMP/no/such/dir/m.h5" "$SRC/tests/fixtures/results_schema_1_1.h5"

# --- the SLURM script's array-task and merge stages (without SLURM: no squeue, no sbatch)
for i in 0 1; do
  DPMU="$DPMU" SLURM_ARRAY_TASK_ID=$i SLURM_CPUS_PER_TASK=1 bash "$SRC/scripts/slurm/sweep.sbatch" "$SMOKE" "$TMP/sw.h5" 2 --quiet \
    >/dev/null 2>"$TMP/err" || fail "sweep.sbatch shard $i: $(cat "$TMP/err")"
done
DPMU="$DPMU" DPMU_SWEEP_STAGE=merge bash "$SRC/scripts/slurm/sweep.sbatch" "$SMOKE" "$TMP/sw.h5" 2 >/dev/null 2>"$TMP/err" \
  || fail "sweep.sbatch merge: $(cat "$TMP/err")"
same_arrays "$TMP/t1.h5" "$TMP/sw.h5" && pass || fail "sweep.sbatch result differs from an unsharded run"

# --- every shipped config validates
for cfg in "$SRC"/configs/*.yaml "$SRC"/configs/smoke/*.yaml; do
  expect_exit 0 "" run "$cfg" --dry-run
done

echo "engine_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
