#!/usr/bin/env bash
# scripts/reproduce.sh on two small studies at a few replicates (DPMU given, so no build): it runs
# them and ends with the report and claims.json; run again it skips both; a damaged finished file (a
# changed byte, a truncated file) is named, moved aside and run again (before: "finished earlier,
# skipped" and the report said "not found"); bad options are refused with the option's name, exit 2,
# before any work (before: a traceback, "unbound variable"); a results file of another size is run
# again; an interrupted run (its journal present) is resumed; --plan lists every study with a
# projected time and runs nothing.
# Usage: reproduce_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"
export DPMU
only=fig1_hsb_posterior,fig6_hsb_censoring
R="$TMP/r"

bash scripts/reproduce.sh --plan > "$TMP/plan" 2>&1
if grep -q "18 studies" "$TMP/plan" && grep -q "fig3_4_zellner_siow" "$TMP/plan" && grep -q "fig7_hsb_lr_censoring_h11" "$TMP/plan"; then
  pass; else fail "--plan: $(cat "$TMP/plan")"; fi

if bash scripts/reproduce.sh --out "$R" --replicates 20 --only "$only" > "$TMP/out1" 2>&1; then pass; else
  fail "first pass: $(tail -5 "$TMP/out1")"; fi
for f in fig1_hsb_posterior.h5 fig6_hsb_censoring.h5 claims.json claims.md report.html; do
  [ -s "$R/$f" ] && pass || fail "first pass wrote no $f"
done
if "$PY" - "$R/claims.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))["claims"]
e = [x for x in d if x["id"] == "PB-4.4-fig1-shrinkage"][0]
assert e["verdict"] != "not run" and e["replicates"] == {"configs/fig1_hsb_posterior.yaml": 20}, e["replicates"]
assert e["reduced"] == ["configs/fig1_hsb_posterior.yaml"], e["reduced"]   # 20 of the config's 10 000
top = json.load(open(sys.argv[1]))
assert top["reduced_runs"] == ["configs/fig1_hsb_posterior.yaml", "configs/fig6_hsb_censoring.yaml"], top["reduced_runs"]
assert {r["config"]: r["replicates"] for r in top["runs"]} == {"configs/fig1_hsb_posterior.yaml": 20,
                                                            "configs/fig6_hsb_censoring.yaml": 20}, top["runs"]
PYEOF
then pass; else fail "claims.json does not record the replicates used and the reduced runs"; fi

# again: both finished at this size, skipped (the report is written again)
bash scripts/reproduce.sh --out "$R" --replicates 20 --only "$only" > "$TMP/out2" 2>&1
[ "$(grep -c 'finished earlier, skipped' "$TMP/out2")" = 2 ] && pass || fail "second pass did not skip: $(cat "$TMP/out2")"

# a damaged finished file (one byte of a data chunk changed; its attributes still say "finished at
# this size"): the plan says damaged and why, the run moves it aside and runs it again, and the
# report uses the new file
"$PY" - "$R/fig1_hsb_posterior.h5" <<'PYEOF'
import sys, h5py
path = sys.argv[1]
with h5py.File(path, "r") as f:
    ds = next(f["replicates"][k] for k in sorted(f["replicates"]) if f["replicates"][k].id.get_num_chunks() > 0)
    info = ds.id.get_chunk_info(0)
    base = f.id.get_create_plist().get_userblock()
with open(path, "r+b") as g:
    at = base + info.byte_offset + info.size // 2
    g.seek(at); b = g.read(1); g.seek(at); g.write(bytes([b[0] ^ 0xFF]))
with h5py.File(path, "r") as f:
    assert bool(f.attrs["complete"]) and int(f.attrs["replicates"]) == 20
PYEOF
bash scripts/reproduce.sh --out "$R" --replicates 20 --only "$only" --plan > "$TMP/plan_d" 2>&1
grep -q "fig1_hsb_posterior *damaged" "$TMP/plan_d" && grep -q "SHA-256 does not match" "$TMP/plan_d" && pass \
  || fail "--plan does not call the damaged file damaged: $(cat "$TMP/plan_d")"
if bash scripts/reproduce.sh --out "$R" --replicates 20 --only "$only" > "$TMP/out_d" 2>&1; then pass; else
  fail "pass over a damaged file: $(tail -5 "$TMP/out_d")"; fi
grep -q "fig1_hsb_posterior: .*damaged.*moved to $R/fig1_hsb_posterior.h5.damaged, running it again" "$TMP/out_d" && pass \
  || fail "the damaged file is not named and run again: $(cat "$TMP/out_d")"
[ "$(grep -c 'finished earlier, skipped' "$TMP/out_d")" = 1 ] && pass || fail "skipped other than fig6: $(cat "$TMP/out_d")"
[ -f "$R/fig1_hsb_posterior.h5.damaged" ] && pass || fail "the damaged file was not kept aside"
if "$PY" - "$R" <<'PYEOF'
import json, sys
sys.path.insert(0, "plotting")
from dpmu_h5 import Results
r = Results(sys.argv[1] + "/fig1_hsb_posterior.h5")
assert r.complete and r.replicates == 20
e = [x for x in json.load(open(sys.argv[1] + "/claims.json"))["claims"] if x["id"] == "PB-4.4-fig1-shrinkage"][0]
assert e["verdict"] != "not run", e
PYEOF
then pass; else fail "the file run again is not intact, or the report did not use it"; fi
# a truncated file: damaged too (before: redone silently as "another size")
cp "$R/fig6_hsb_censoring.h5" "$TMP/fig6_keep.h5"
truncate -s $(( $(stat -c %s "$R/fig6_hsb_censoring.h5") / 2 )) "$R/fig6_hsb_censoring.h5"
bash scripts/reproduce.sh --out "$R" --replicates 20 --only "$only" --plan > "$TMP/plan_t" 2>&1
grep -q "fig6_hsb_censoring *damaged" "$TMP/plan_t" && grep -q "fig6_hsb_censoring.h5: " "$TMP/plan_t" && pass \
  || fail "--plan does not call a truncated file damaged: $(cat "$TMP/plan_t")"
cp "$TMP/fig6_keep.h5" "$R/fig6_hsb_censoring.h5"

# bad options: a message naming the option, exit 2, before any work (DPMU unusable: nothing is built or run)
bad_option() {  # bad_option "stderr substring" ARGS...
  local want="$1"; shift
  DPMU=/nonexistent/dpmu bash scripts/reproduce.sh "$@" > "$TMP/bo_out" 2> "$TMP/bo_err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$TMP/bo_err" && ! grep -q "Traceback\|unbound variable" "$TMP/bo_err"; then pass
  else fail "reproduce.sh $*: exit $rc (want 2), stderr: $(cat "$TMP/bo_err")"; fi
}
bad_option "--replicates must be a whole number from 1 to 1000000000 (replicates per cell), not 'abc'" \
  --out "$R" --replicates abc --only "$only"
bad_option "--replicates must be a whole number" --out "$R" --replicates 0
bad_option "--replicates must be a whole number" --out "$R" --replicates 1e3
bad_option "--replicates must be a whole number" --out "$R" --replicates 99999999999999999999
bad_option "--out needs a value" --replicates 20 --out
bad_option "--out needs a value" --out --plan
bad_option "--replicates needs a value" --replicates
bad_option "--only: 'nosuchstudy' is not a study" --only fig1_hsb_posterior,nosuchstudy --plan
touch "$TMP/a_file"
bad_option "--out $TMP/a_file: exists and is not a folder" --out "$TMP/a_file" --replicates 20
bad_option "--out $TMP/a_file/sub: cannot create or write in this folder" --out "$TMP/a_file/sub" --replicates 20
[ ! -e "$TMP/a_file/sub" ] && pass || fail "a refused --out was created"

# another size: run again; an interrupted run (journal present): resumed
bash scripts/reproduce.sh --out "$R" --replicates 30 --only fig1_hsb_posterior --plan > "$TMP/plan2" 2>&1
grep -q "fig1_hsb_posterior *redo" "$TMP/plan2" && pass || fail "a file of another size is not redone: $(cat "$TMP/plan2")"
rm -f "$R/fig6_hsb_censoring.h5"
"$DPMU" run configs/fig6_hsb_censoring.yaml --out "$R/fig6_hsb_censoring.h5" --replicates 400000 --max-time 1 --quiet \
  >/dev/null 2>&1
if [ -f "$R/fig6_hsb_censoring.h5.journal" ]; then
  bash scripts/reproduce.sh --out "$R" --replicates 400000 --only fig6_hsb_censoring --plan > "$TMP/plan3" 2>&1
  grep -q "fig6_hsb_censoring *resume" "$TMP/plan3" && pass || fail "an interrupted run is not resumed: $(cat "$TMP/plan3")"
else
  fail "dpmu run --max-time 1 left no journal to resume"
fi

echo "reproduce_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
