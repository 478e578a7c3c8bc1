#!/usr/bin/env bash
# scripts/reproduce.sh on two small studies at a few replicates (DPMU given, so no build): it runs
# them and ends with the report and claims.json; run again it skips both; a results file of
# another size is run again; an interrupted run (its journal present) is resumed; --plan lists
# every study with a projected time and runs nothing.
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
if grep -q "13 studies" "$TMP/plan" && grep -q "fig3_4_zellner_siow" "$TMP/plan" && grep -q "fig7_hsb_lr_censoring_h11" "$TMP/plan"; then
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
