#!/usr/bin/env bash
# End-to-end reliability tests of the engine commands (docs/reliability.md): data-file identity
# across --resume and merge, data paths relative to the config, data checks up front, the lock on
# --out, a file-size limit during the final write, stale temporary files, damaged results files,
# compare refusals, out of memory, YAML limits, dpmu errors, plot_all.py on bad folders.
# Usage: reliability_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
SRC="$(cd "$2" && pwd)"
. "$(dirname "$0")/lib.sh"
SMOKE="$SRC/configs/smoke/normal_mean.yaml"
SLOW="$SRC/configs/smoke/normal_mean_slow.yaml"

# A study on a CSV next to its config (hsb_posterior: DP tests on a fixed data set).
mkdir -p "$TMP/study" "$TMP/elsewhere"
cp "$SRC/experiments/data/hsb2.csv" "$TMP/study/hsb.csv"
cat > "$TMP/study/hsb.yaml" <<'YAML'
experiment: hsb_posterior
master_seed: 5
replicates: 20000
block_size: 100
parameters:
  data_file: hsb.csv
  prior: g-prior
  tested: read
  epsilon: 1
grid:
  num_subsets: [2, 5, 10, 20]
YAML

# --- item 13: data_file resolves against the config's folder, from any working directory
(cd "$TMP/elsewhere" && "$DPMU" run ../study/hsb.yaml --dry-run >"$TMP/out" 2>"$TMP/err") \
  && grep -q "data file: hsb.csv ($TMP/study/hsb.csv), sha256 " "$TMP/out" && pass \
  || fail "data_file relative to the config folder: $(cat "$TMP/err" "$TMP/out" | head -c 1500)"
# ./hsb.csv and hsb.csv are the same cell (same key, same numbers)
sed 's|data_file: hsb.csv|data_file: ./hsb.csv|' "$TMP/study/hsb.yaml" > "$TMP/study/dot.yaml"
"$DPMU" run "$TMP/study/hsb.yaml" --dry-run > "$TMP/plain.txt" 2>&1
"$DPMU" run "$TMP/study/dot.yaml" --dry-run > "$TMP/dot.txt" 2>&1
diff <(grep -v "^study:" "$TMP/plain.txt") <(grep -v "^study:" "$TMP/dot.txt") >/dev/null && grep -q "data_file=hsb.csv;" "$TMP/dot.txt" \
  && pass || fail "./hsb.csv and hsb.csv give different cells: $(diff "$TMP/plain.txt" "$TMP/dot.txt" | head -5)"
# the shipped configs' repository-relative paths still work from any folder, with the same cell keys
(cd "$TMP/elsewhere" && "$DPMU" run "$SRC/configs/smoke/fig5_cps.yaml" --dry-run >"$TMP/out" 2>"$TMP/err") \
  && grep -q "data_file=experiments/data/cps09mar.csv;" "$TMP/out" && pass \
  || fail "shipped config from another folder: $(head -c 1500 "$TMP/err")"

# --- item 6: the data file's contents are part of the study: resume and merge refuse a change
expect_exit 3 "--resume" run "$TMP/study/hsb.yaml" --out "$TMP/h.h5" --max-time 0.05 --threads 1
sed -i '2s/^70,0,4,1,1,1,57/70,0,4,1,1,1,58/' "$TMP/study/hsb.csv"   # one value of row 1 (read 57 -> 58)
expect_exit 2 "the checkpoint was computed from other data: data file hsb.csv differs" \
  run "$TMP/study/hsb.yaml" --out "$TMP/h.h5" --resume
expect_exit 0 "" run "$TMP/study/hsb.yaml" --out "$TMP/s1.h5" --shard 1/2 --quiet
cp "$SRC/experiments/data/hsb2.csv" "$TMP/study/hsb.csv"                # the original again
expect_exit 0 "" run "$TMP/study/hsb.yaml" --out "$TMP/s0.h5" --shard 0/2 --quiet
expect_exit 2 "were computed from different data: data file hsb.csv differs" merge "$TMP/m.h5" "$TMP/s0.h5" "$TMP/s1.h5"
[ ! -e "$TMP/m.h5" ] && pass || fail "a refused merge wrote its output"
expect_exit 0 "" run "$TMP/study/hsb.yaml" --out "$TMP/h.h5" --resume --quiet
"$PY" -c "
import h5py; f = h5py.File('$TMP/h.h5', 'r')
assert [x.decode() if isinstance(x, bytes) else x for x in f.attrs['data_files']] == ['hsb.csv']
assert len(f.attrs['data_sha256'][0]) == 64
" && pass || fail "data_files / data_sha256 attributes"

# --- item 12: data problems are config errors found by --dry-run (exit 2, naming the input)
bad_data() {  # bad_data "message" "sed expression on hsb.yaml" [csv contents]
  local want="$1" expr="$2"
  sed "$expr" "$TMP/study/hsb.yaml" > "$TMP/study/bad.yaml"
  expect_exit 2 "$want" run "$TMP/study/bad.yaml" --dry-run
}
bad_data "bad.yaml:6: data_file: 'missing.csv' does not exist" 's|data_file: hsb.csv|data_file: missing.csv|'
bad_data "bad.yaml:8: tested: " 's|tested: read|tested: reading|'
bad_data "no column 'reading'" 's|tested: read|tested: reading|'
bad_data "bad.yaml:11: num_subsets: the number of subsets M is 500" 's|num_subsets: \[2, 5, 10, 20\]|num_subsets: [2, 500]|'
bad_data "largest admissible M is 50 (hsb.csv has 200 rows)" 's|num_subsets: \[2, 5, 10, 20\]|num_subsets: [2, 500]|'
bad_data "tested: 'math' is the response" 's|tested: read|tested: math|'
awk -F, 'BEGIN{OFS=","} NR>1{$10=50} {print}' "$SRC/experiments/data/hsb2.csv" > "$TMP/study/const.csv"
bad_data "science' of $TMP/study/const.csv is constant (every row is 50)" 's|data_file: hsb.csv|data_file: const.csv\n  common: science|'
awk -F, 'BEGIN{OFS=","} NR==5{$7="nan"} {print}' "$SRC/experiments/data/hsb2.csv" > "$TMP/study/nan.csv"
bad_data "bad.yaml:6: data_file: " 's|data_file: hsb.csv|data_file: nan.csv|'
bad_data "nan.csv" 's|data_file: hsb.csv|data_file: nan.csv|'
# the same problems stop a real run before the first replicate, leaving no output
sed 's|tested: read|tested: math|' "$TMP/study/hsb.yaml" > "$TMP/study/bad.yaml"
expect_exit 2 "is the response" run "$TMP/study/bad.yaml" --out "$TMP/bad.h5"
[ ! -e "$TMP/bad.h5" ] && [ ! -e "$TMP/bad.h5.journal" ] && pass || fail "a data error left output files"

# --- item 5: repeated grid values (compared as numbers) are an error naming the parameter
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\ngrid:\n  n: 10\n  mu: [0, -0.0]\n' > "$TMP/dup.yaml"
expect_exit 2 "dup.yaml:6: grid.mu[1]: '-0.0' repeats grid.mu[0] ('0'): both are the value 0 of mu" run "$TMP/dup.yaml" --dry-run
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\ngrid:\n  n: [1, 1.0]\n' > "$TMP/dup2.yaml"
expect_exit 2 "grid.n[1]: '1.0' repeats grid.n[0] ('1'): both are the value 1 of n" run "$TMP/dup2.yaml" --dry-run

# --- item 17: YAML documents, 1e3-style integers, a grid too large, deep nesting
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\nparameters: {n: 3}\n---\nreplicates: 7\n' > "$TMP/two.yaml"
expect_exit 2 "two.yaml:6: the file holds 2 YAML documents" run "$TMP/two.yaml" --dry-run
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 1e3\nparameters: {n: 3}\n' > "$TMP/e3.yaml"
expect_exit 0 "replicates: 1000 per cell" run "$TMP/e3.yaml" --dry-run
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\ngrid:\n  n: {from: 1, to: 100000, count: 100000}\n  mu: {from: 0, to: 1, count: 100000}\n' > "$TMP/big.yaml"
start=$(date +%s)
expect_exit 2 "this block has 10000000000 cells (100000 (n) x 100000 (mu))" run "$TMP/big.yaml" --dry-run
[ $(( $(date +%s) - start )) -lt 10 ] && pass || fail "a 10^10-cell grid took $(( $(date +%s) - start )) s to refuse"
"$PY" -c "print('experiment: normal_mean\nmaster_seed: 1\nreplicates: 5\ndescription: ' + '[' * 5000 + ']' * 5000)" > "$TMP/deep.yaml"
expect_exit 2 "nested more than" run "$TMP/deep.yaml" --dry-run

# --- item 7: one run at a time on an --out (the second exits 2 naming the first's PID)
printf 'experiment: normal_mean\nmaster_seed: 2\nreplicates: 3000\nblock_size: 10\ngrid:\n  n: [20000, 40000]\n' > "$TMP/long.yaml"
"$DPMU" run "$TMP/long.yaml" --out "$TMP/lock.h5" --quiet --threads 1 2>"$TMP/first_err" &
pid=$!
for _ in $(seq 1 400); do [ -s "$TMP/lock.h5.journal" ] && break; sleep 0.02; done
expect_exit 2 "another dpmu process (PID $pid) is writing this results file" run "$SMOKE" --out "$TMP/lock.h5" --quiet
expect_exit 2 "another dpmu process (PID $pid)" run "$TMP/long.yaml" --out "$TMP/lock.h5" --resume --quiet
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 3 ] && pass || fail "the locked run: exit $rc after SIGTERM: $(cat "$TMP/first_err")"
[ ! -e "$TMP/lock.h5.lock" ] && pass || fail "lock file left after the run"
expect_exit 3 "" run "$TMP/long.yaml" --out "$TMP/lock.h5" --resume --quiet --max-time 0.2   # the lock is free again
# simultaneous starts of two different configs on one --out: exactly one wins, nothing is lost silently
for i in 1 2 3; do
  rm -f "$TMP/race.h5"*
  "$DPMU" run "$SMOKE" --out "$TMP/race.h5" --quiet 2>"$TMP/ra" & a=$!
  "$DPMU" run "$TMP/e3.yaml" --out "$TMP/race.h5" --quiet 2>"$TMP/rb" & b=$!
  wait $a; ra=$?; wait $b; rb=$?
  if { [ $ra -eq 0 ] && [ $rb -eq 2 ]; } || { [ $ra -eq 2 ] && [ $rb -eq 0 ]; }; then pass
  else fail "simultaneous runs on one --out: exits $ra and $rb; $(cat "$TMP/ra" "$TMP/rb")"; fi
done

# --- item 9: a file-size limit during the final write: clear message, journal intact, no temp file
expect_exit 0 "" run "$SLOW" --out "$TMP/ref.h5" --quiet
# (the journal, about 26 kB at the end, fits under the 40 kB limit; the 57 kB results file does not)
(ulimit -f 40; exec "$DPMU" run "$SLOW" --out "$TMP/fz.h5" --quiet) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -qF "$TMP/fz.h5: cannot write the results file" "$TMP/err" && grep -qF "File too large" "$TMP/err" \
  && grep -qF "The checkpoint $TMP/fz.h5.journal is intact" "$TMP/err" && pass \
  || fail "file-size limit: exit $rc (want 2); $(cat "$TMP/err")"
[ ! -e "$TMP/fz.h5" ] && [ -s "$TMP/fz.h5.journal" ] && [ -z "$(ls "$TMP" | grep 'fz.h5.tmp')" ] && pass \
  || fail "after the failed write: $(ls "$TMP" | grep fz)"
# a stale temporary file of a killed run (a PID that no longer runs) is removed by the resume
sleep 0 & deadpid=$!; wait $deadpid
echo partial > "$TMP/fz.h5.tmp-$deadpid"
expect_exit 0 "removed 1 temporary file(s) left by killed runs: $TMP/fz.h5.tmp-$deadpid" run "$SLOW" --out "$TMP/fz.h5" --resume
same_arrays "$TMP/ref.h5" "$TMP/fz.h5" && pass || fail "resumed after the failed write differs from an uninterrupted run"
[ ! -e "$TMP/fz.h5.tmp-$deadpid" ] && pass || fail "stale temporary file not removed"
# merge cleans up too
echo partial > "$TMP/mg.h5.tmp-$deadpid"
expect_exit 0 "" run "$SMOKE" --out "$TMP/a0.h5" --shard 0/2 --quiet
expect_exit 0 "" run "$SMOKE" --out "$TMP/a1.h5" --shard 1/2 --quiet
expect_exit 0 "" merge "$TMP/mg.h5" "$TMP/a0.h5" "$TMP/a1.h5"
[ ! -e "$TMP/mg.h5.tmp-$deadpid" ] && pass || fail "merge left a stale temporary file"

# --- item 10: damaged files are refused by summarize, compare, merge and the plots
expect_exit 0 "" run "$SMOKE" --out "$TMP/good.h5" --quiet
cp "$TMP/good.h5" "$TMP/copy.h5"
damage() {  # damage IN OUT how: flip one byte of a data chunk (numbers) or of a cell key (a string)
  "$PY" - "$1" "$2" "$3" <<'PYEOF'
import sys, h5py
src, dst, how = sys.argv[1:]
data = bytearray(open(src, "rb").read())
if how == "chunk":
    with h5py.File(src, "r") as f:
        ds = f["replicates/sample_mean"]
        at = ds.id.get_chunk_info(0).byte_offset + 8 * 123 + 6   # a high byte of replicate 123 of cell 0
else:
    at = data.index(b"mu=1;n=2000;sigma=2") + 3
data[at] ^= 0x01
open(dst, "wb").write(bytes(data))
PYEOF
}
damage "$TMP/good.h5" "$TMP/bad_chunk.h5" chunk
damage "$TMP/good.h5" "$TMP/bad_key.h5" key
for f in bad_chunk bad_key; do
  expect_exit 2 "$TMP/$f.h5: the results file is damaged" summarize "$TMP/$f.h5"
  expect_exit 2 "the results file is damaged" compare "$TMP/good.h5" "$TMP/$f.h5"
  expect_exit 2 "the results file is damaged" errors "$TMP/$f.h5"
done
expect_exit 2 "the results file is damaged" merge "$TMP/mbad.h5" "$TMP/a0.h5" "$TMP/bad_chunk.h5"
expect_exit 0 "equal" compare "$TMP/good.h5" "$TMP/copy.h5"
mkdir -p "$TMP/plots_bad" && cp "$TMP/bad_chunk.h5" "$TMP/plots_bad/"
"$PY" "$SRC/plotting/plot_all.py" "$TMP/plots_bad" --out "$TMP/plots_bad/fig" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "damaged" "$TMP/err" && pass || fail "plot_all.py on a damaged file: exit $rc; $(cat "$TMP/out" "$TMP/err")"
# schema 2.0 (checksums since 1.1), with Fletcher32 on chunked datasets; h5py reads it
"$PY" -c "
import h5py; f = h5py.File('$TMP/good.h5', 'r')
assert list(f.attrs['schema_version']) == [2, 1]
head = open('$TMP/good.h5', 'rb').read(512)
import hashlib
assert head.startswith(b'dpmu-results\nsha256 ') and head[20:84].decode() == hashlib.sha256(open('$TMP/good.h5', 'rb').read()[512:]).hexdigest()
ds = f['replicates/sample_mean']
assert ds.chunks is not None and ds.fletcher32, (ds.chunks, ds.fletcher32)
assert f['summary/sample_mean/mean'].fletcher32
" && pass || fail "checksummed layout"

# --- item 10: compare says why two files cannot be compared
expect_exit 2 "is shard 0/2 of a study" compare "$TMP/good.h5" "$TMP/a0.h5"
expect_exit 3 "" run "$SLOW" --out "$TMP/inc.h5" --max-time 0.05 --threads 1
expect_exit 2 "is incomplete (a stopped run" compare "$TMP/inc.h5" "$TMP/ref.h5"
expect_exit 1 "" compare "$TMP/inc.h5" "$TMP/ref.h5" --allow-incomplete
expect_exit 2 "holds experiment 'hsb_posterior' but" compare "$TMP/h.h5" "$TMP/good.h5"

# --- item 12: dpmu errors prints /errors readably (an old schema-1.0 file with two failed replicates)
"$PY" - "$TMP/good.h5" "$TMP/old.h5" <<'PYEOF'
# a file as dpmu 1.0 wrote it (no user block, no checksums), with two /errors records
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as src, h5py.File(sys.argv[2], "w") as dst:
    for k, v in src.attrs.items():
        if k not in ("data_files", "data_sha256"):
            dst.attrs[k] = v
    dst.attrs["schema_version"] = np.array([1, 0], dtype=np.int32)
    for name in src:
        if name != "errors":
            src.copy(src[name], dst, name=name)
    e = dst.create_group("errors")
    e["cell"] = np.array([2, 2], dtype=np.uint64)
    e["cell_id"] = np.array([src["cells/cell_id"][2]] * 2, dtype=np.uint64)
    e["replicate"] = np.array([7, 9], dtype=np.uint64)
    s = h5py.string_dtype()
    e.create_dataset("stage", data=np.array(["replicate", "replicate"], dtype=object), dtype=s)
    e.create_dataset("message", data=np.array(["singular matrix\nin subset 3"] * 2, dtype=object), dtype=s)
PYEOF
expect_exit 0 "2 failed replicate record(s) in 1 of 6 cells" errors "$TMP/old.h5"
grep -qF "2 x  replicate: singular matrix\\x0ain subset 3" "$TMP/out" && grep -qE "^ +2 +9  replicate  singular" "$TMP/out" \
  && pass || fail "dpmu errors table: $(cat "$TMP/out")"
expect_exit 0 "" errors "$TMP/old.h5" --format json
"$PY" -c "
import json; d = json.load(open('$TMP/out'))
assert d['errors'] == 2 and d['error_list'][1]['replicate'] == 9 and d['cells'][0]['n_failed'] == 2
assert d['error_list'][0]['key'] == 'mu=0;n=50;sigma=2'
" && pass || fail "dpmu errors json: $(head -c 800 "$TMP/out")"
expect_exit 0 "0 failed replicate record(s)" errors "$TMP/good.h5"
expect_exit 0 "" summarize "$TMP/old.h5"   # schema 1.0 files are still read
expect_exit 0 "sample_mean" export "$TMP/old.h5"

# --- item 11: out of memory is a message and exit 2 in every command, never an abort
"$PY" -c "
print('experiment: normal_mean\nmaster_seed: 1\nreplicates: 400000\nblock_size: 50000\ngrid:\n  n: 1\n  mu: [0, 1, 2, 3]')" > "$TMP/wide.yaml"
expect_exit 0 "" run "$TMP/wide.yaml" --out "$TMP/wide.h5" --quiet
cp "$TMP/wide.h5" "$TMP/wide2.h5"
limit=${DPMU_TEST_VLIMIT_KB:-90000}  # above what dpmu needs to start (~40 MB), below the 64 MB of values
for cmd in "summarize $TMP/wide.h5" "compare $TMP/wide.h5 $TMP/wide2.h5" "merge $TMP/wide_m.h5 $TMP/wide.h5" \
           "errors $TMP/wide.h5" "run $TMP/wide.yaml --out $TMP/wide_r.h5 --quiet --threads 1"; do
  # shellcheck disable=SC2086
  (ulimit -v $limit; exec "$DPMU" $cmd) >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ $rc -eq 2 ] && grep -q "^dpmu: error: out of memory while " "$TMP/err"; then pass
  else fail "ulimit -v $limit dpmu $cmd: exit $rc; $(head -c 600 "$TMP/err")"; fi
done

# --- item 18: plot_all.py refuses a missing or empty folder and marks an incomplete file's figures
"$PY" "$SRC/plotting/plot_all.py" "$TMP/no_such_folder" >"$TMP/out" 2>"$TMP/err"
rc=$?; [ $rc -eq 2 ] && grep -q "no such folder" "$TMP/err" && pass || fail "plot_all.py missing folder: exit $rc"
mkdir -p "$TMP/empty"
"$PY" "$SRC/plotting/plot_all.py" "$TMP/empty" >"$TMP/out" 2>"$TMP/err"
rc=$?; [ $rc -eq 2 ] && grep -q "no results files" "$TMP/err" && pass || fail "plot_all.py empty folder: exit $rc"
mkdir -p "$TMP/plots_inc"
(cd "$SRC" && "$DPMU" run configs/smoke/type1_calibration.yaml --out "$TMP/plots_inc/t1.h5" --max-time 0.5 --threads 1 --quiet 2>/dev/null)
"$PY" "$SRC/plotting/plot_all.py" "$TMP/plots_inc" --out "$TMP/plots_inc/fig" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "(incomplete)" "$TMP/out" && grep -q "INCOMPLETE RUN" "$TMP/err" && pass \
  || fail "plot_all.py on an incomplete file: exit $rc; $(cat "$TMP/out" "$TMP/err")"

# --- round 4: counts and times bounded up front, naming the option and the limit
# B4: --max-time beyond 1e9 s is refused before any work (before: 1e10 s overflowed the deadline in
# nanoseconds, and the run stopped at once: "0 of 8 tasks done", exit 3); 1e9 s runs to the end
expect_exit 2 "--max-time: 1e+10 s is beyond the limit of 1e9 s" run "$SMOKE" --out "$TMP/mt_big.h5" --max-time 1e10
[ ! -e "$TMP/mt_big.h5" ] && [ ! -e "$TMP/mt_big.h5.journal" ] && pass || fail "a refused --max-time left files"
expect_exit 2 "--max-time: inf s is beyond the limit" run "$SMOKE" --out "$TMP/mt_inf.h5" --max-time inf
expect_exit 0 "" run "$SMOKE" --out "$TMP/mt_1e9.h5" --max-time 1e9 --quiet
# B5: replicates (and block_size) are read in 64 bits and bounded (10^9) by --dry-run and run, and a
# dry run counts its tasks without listing them (before: replicates: 40000000000 built a plan of
# 1.6*10^8 tasks in memory, about 2.6 GB, then printed it as valid)
huge_dry_run() {  # huge_dry_run "message" CONFIG: exit 2 with the message within 30 s and 1 GB
  (ulimit -v 1000000; exec timeout 30 "$DPMU" run "$2" --dry-run) >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$1" "$TMP/err"; then pass
  else fail "dry run of $(basename "$2"): exit $rc, expected 2 with '$1'; $(head -c 600 "$TMP/err")"; fi
}
sed 's/^replicates: .*/replicates: 40000000000/' "$SMOKE" > "$TMP/huge_reps.yaml"
huge_dry_run "huge_reps.yaml:5: replicates: 40000000000 is beyond the limit of 1000000000 (10^9) replicates per cell" "$TMP/huge_reps.yaml"
sed 's/^replicates: .*/replicates: 1e20/' "$SMOKE" > "$TMP/huge_reps2.yaml"
huge_dry_run "replicates: 1e20 is beyond the limit of 1000000000" "$TMP/huge_reps2.yaml"
sed 's/^block_size: .*/block_size: 99999999999999999999/' "$SMOKE" > "$TMP/huge_block.yaml"
huge_dry_run "block_size: 99999999999999999999 is beyond the limit" "$TMP/huge_block.yaml"
sed -e 's/^replicates: .*/replicates: 1000000000/' -e 's/^block_size: .*/block_size: 1/' "$SMOKE" > "$TMP/many_tasks.yaml"
huge_dry_run "block_size: the study has 6000000000 tasks (6 data groups x 1000000000 blocks of block_size 1 replicates); a study has at most 10000000 (10^7) tasks: raise block_size to at least 601" "$TMP/many_tasks.yaml"
sed -e 's/^replicates: .*/replicates: 1000000000/' -e 's/^block_size: .*/block_size: 1000000/' "$SMOKE" > "$TMP/big_results.yaml"
huge_dry_run "storing the results (6 cells x 1000000000 replicates, 3e+10 values) needs about 240.0 GB" "$TMP/big_results.yaml"
expect_exit 2 "--replicates: Value 40000000000 not in range" run "$SMOKE" --replicates 40000000000 --dry-run
# at the task limit a dry run is quick and small: 10^7 replicates of one cell in 10^7 tasks, counted
printf 'experiment: normal_mean\nmaster_seed: 1\nreplicates: 1e7\nblock_size: 1\nparameters:\n  sigma: 1\n  n: 5\n  mu: 0\n' > "$TMP/limit.yaml"
(ulimit -v 1000000; exec timeout 30 "$DPMU" run "$TMP/limit.yaml" --dry-run --shard 1/3) >"$TMP/out" 2>"$TMP/err" \
  && grep -qF "work: 10000000 replicates in 10000000 tasks; this shard (1/3): 3333333 tasks" "$TMP/out" && pass \
  || fail "dry run at the limits: $(cat "$TMP/err" "$TMP/out" | head -c 800)"

# B7: the CSV header check is linear in the number of columns (before: a pairwise comparison; a
# 140 000-column header took over a minute, 10 000 columns 0.5 s, 30 000 columns 3.5 s); its
# 1 MB header no longer makes the 280 KB second line "longer than 1 MiB"
"$PY" - "$TMP/wide140k.csv" <<'PYEOF'
import sys, random
random.seed(1)
k = 140000
with open(sys.argv[1], "w") as f:
    f.write(",".join(f"c{j}" for j in range(1, k + 1)) + "\n")
    for i in range(12):
        row = [str(random.randint(0, 99)), str(random.randint(0, 99))] + ["0"] * (k - 2)
        f.write(",".join(row) + "\n")
PYEOF
start=$(date +%s.%N)
timeout 30 "$DPMU" test --non-private --data "$TMP/wide140k.csv" --response c1 --tested c2 >"$TMP/out" 2>"$TMP/err"
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
[ $rc -eq 0 ] && "$PY" -c "import json; json.load(open('$TMP/out'))" && pass \
  || fail "a 140 000-column header: exit $rc after ${secs} s (limit 30 s); $(head -c 300 "$TMP/err")"
echo "reliability_test: a 140 000-column CSV header read in ${secs} s"
# a name repeated far apart is still found (the last column repeats the first)
sed '1s/c140000$/c1/' "$TMP/wide140k.csv" > "$TMP/wide_dup.csv"
timeout 30 "$DPMU" test --non-private --data "$TMP/wide_dup.csv" --response c2 --tested c3 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -qF "line 1: column 'c1' appears twice in the header" "$TMP/err" && pass \
  || fail "a repeated name in a wide header: exit $rc; $(head -c 300 "$TMP/err")"

# WEAK messages of round 4: each option named, with its limit, before any work
HSB="$SRC/experiments/data/hsb2.csv"
# --audit-samples / --audit-pilot beyond 10^8 (before: "out of memory", the option unnamed)
expect_exit 2 "--audit-samples: 100000000000 is beyond the limit of 100000000 (10^8) releases per data set" \
  audit test --data "$HSB" --response math --tested female --epsilon 1 --groups 10 --audit-samples 100000000000
expect_exit 2 "--audit-pilot: 100000000000 is beyond the limit" \
  audit test --data "$HSB" --response math --tested female --epsilon 1 --groups 10 --audit-pilot 100000000000
# dpmu test --simulations beyond 10^8, as R and Python (before: "out of memory"); nothing charged
"$DPMU" ledger init "$TMP/sim.ledger" --budget 5 >/dev/null 2>&1
cp "$TMP/sim.ledger" "$TMP/sim.ledger.before"
expect_exit 2 "--simulations: 100000000000 is out of range; give a whole number from 100 to 100000000 (10^8)" \
  test --data "$HSB" --response math --tested female --epsilon 1 --groups 10 --prior lr --simulations 100000000000 \
  --ledger "$TMP/sim.ledger"
cmp -s "$TMP/sim.ledger" "$TMP/sim.ledger.before" && pass || fail "a refused --simulations changed the ledger"
# --mcmc-max-iterations 0 is refused as in R and Python (before: accepted as the default)
expect_exit 2 "--mcmc-max-iterations: '0' is not a whole number >= 1" \
  bma --non-private --data "$HSB" --response math --predictors science,read --mcmc --mcmc-max-iterations 0
# plan-bma: designs that overflow, and bounds whose sensitivity overflows or underflows, name the
# options (before: "replicate 0 failed: noisy_gram_matrix: gram(2, 2) is inf", "--check-ssp-mechanism: ...",
# "--gram-diagonal-bounds: ...")
PLAN=(plan-bma --n 1000 --epsilon 1 --replicates 10)
plan_error() {  # plan_error "message" options...: exit 2 with the message, no internal name
  local want="$1"; shift
  expect_exit 2 "$want" "${PLAN[@]}" "$@"
  if grep -q -- "--check-ssp-mechanism\|--gram-diagonal-bounds\|replicate 0 failed" "$TMP/err"; then
    fail "plan-bma $*: an internal name in the message: $(cat "$TMP/err")"
  else pass; fi
}
plan_error "--coefficients, --sigma: the simulated response has a standard deviation of about" --coefficients 1e200,1 --sigma 1
plan_error "--sigma: the simulated response" --p 3 --sigma 1e200
plan_error "--signal-z: the simulated response" --p 3 --true-model-size 1 --signal-z 1e-300
plan_error "--bounds: predictor 1 ranges over a width of 2e+200" --coefficients 1,1 --bounds=-1e200,1e200
plan_error "--bounds: predictor 1 ranges over a width of inf" --coefficients 1,1 --bounds=-1e308,1e308
plan_error "--bounds: noise_l1_sensitivity is 0" --coefficients 1,1 --bounds=-1e-170,1e-170
# a large but finite design still runs (the plug-in analysis: the noise-aware sampler mixes slowly when
# the columns differ by 100 orders of magnitude, docs/bma.md "Uncertainty")
expect_exit 0 "" "${PLAN[@]}" --coefficients 1e100,1 --sigma 1e100 --seed 1 --uncertainty plug-in

finish reliability_test
