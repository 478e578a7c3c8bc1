#!/usr/bin/env bash
# End-to-end tests of the privacy-budget ledger through the `dpmu` command: `dpmu ledger init`,
# the releases charging it (test, bma, select), the budget fixed at creation (a per-call --budget
# may only be lower; `set-budget` is a recorded act), keyed fingerprints of exactly the bytes
# analysed (a data file swapped while a release waits for the ledger's lock is not what is charged,
# and cannot escape the budget), `dpmu ledger FILE` (JSON and table), and damaged or foreign
# ledgers ending in a clear message and exit code 2 with the file left as it was; the accountants
# (basic, tight, zcdp) and their totals.
# Usage: ledger_cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"

HSB="$SRC/experiments/data/hsb2.csv"
PROS="$SRC/experiments/data/prostate.csv"
expect_exit2() {
  local want="$1"; shift
  "$DPMU" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "dpmu $*: exit code $rc, expected 2; stderr: $(cat "$TMP/err")"; return; fi
  if [ -s "$TMP/out" ]; then fail "dpmu $*: printed on stdout despite the error: $(cat "$TMP/out")"; return; fi
  expect_error "$want" "$@"
}
# hmac KEYFILE DATAFILE: the keyed fingerprint a ledger records for these bytes
hmac() { "$PY" -c "import hmac,hashlib,sys; k=open(sys.argv[1]).read().strip().encode(); print(hmac.new(k, open(sys.argv[2],'rb').read(), hashlib.sha256).hexdigest())" "$1" "$2"; }

"$DPMU" ledger --help >/dev/null && pass || fail "dpmu ledger --help"

# --- init: a header with the budget, a private key file; never re-initialised
L="$TMP/ledger.jsonl"
"$DPMU" ledger init "$L" --budget 2,1e-5 >"$TMP/out" 2>"$TMP/err" && pass || fail "ledger init: $(cat "$TMP/err")"
[ "$(stat -c %a "$L.key")" = "600" ] && pass || fail "key file mode $(stat -c %a "$L.key")"
head -n 1 "$L" | grep -q '"dpmu_ledger":2' && ! grep -qF "$(cat "$L.key")" "$L" && pass || fail "header: $(head -n 1 "$L")"
expect_exit2 "never reset" ledger init "$L" --budget 5
json_check "d['budget'] == {'epsilon': 2, 'delta': 1e-5} and d['entries'] == 0 and d['spent']['epsilon'] == 0" ledger "$L"

# --- releases charge it; the ledger totals every release, whatever the data file
BMA=(bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --epsilon 0.75 --ridge-draws 200)
"$DPMU" "${BMA[@]}" --ledger "$L" >"$TMP/r1" 2>"$TMP/e1" && pass || fail "first release refused: $(cat "$TMP/e1")"
"$PY" -c "import json,sys; d=json.load(open('$TMP/r1')); l=d['settings']['ledger']; sys.exit(0 if l['epsilon']==0.75 and l['total_epsilon']==0.75 and l['budget_epsilon']==2 else 1)" \
  && pass || fail "the release does not report its charge: $(head -c 600 "$TMP/r1")"
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --ledger "$L" >"$TMP/r2" 2>"$TMP/e2" && pass || fail "second release refused: $(cat "$TMP/e2")"
"$DPMU" select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 0.25 --radius 2 --penalty 1 --data-bound 3 --algorithm 2 --delta 1e-6 --ledger "$L" >/dev/null 2>"$TMP/e3" && pass || fail "select release refused: $(cat "$TMP/e3")"
# 0.75 + 0.5 + 2 x 0.25 = 1.75; another 0.75 would make 2.5 > 2: refused, exit 2, nothing printed
"$DPMU" "${BMA[@]}" --ledger "$L" >"$TMP/r4" 2>"$TMP/e4"
rc=$?
if [ $rc -eq 2 ] && [ ! -s "$TMP/r4" ] && grep -q "privacy budget exceeded" "$TMP/e4"; then pass; else fail "over-budget release: rc=$rc, stdout $(head -c 200 "$TMP/r4"), stderr $(cat "$TMP/e4")"; fi
FA=$(hmac "$L.key" "$HSB")
FB=$(hmac "$L.key" "$PROS")
json_check "d['spent'] == {'epsilon': 1.75, 'delta': 1e-6, 'releases': 3} and sorted(d['data_sets']) == sorted(['$FA', '$FB']) and [r['command'] for r in d['data_sets']['$FA']['release_list']] == ['dpmu bma', 'dpmu test'] and d['data_sets']['$FB']['epsilon'] == 0.5" ledger "$L"
grep -qF "$(sha256sum "$HSB" | cut -d' ' -f1)" "$L" && fail "the ledger holds the unkeyed SHA-256 of the data" || pass
if "$DPMU" ledger "$L" --format table >"$TMP/table" 2>"$TMP/err"; then
  grep -qF "3 release(s); spent epsilon=1.75, delta=1e-06 of the budget epsilon=2, delta=1e-05" "$TMP/table" &&
    grep -qF "data fingerprint ${FA:0:16}" "$TMP/table" && grep -qE "total \(2 release\(s\)\) +1\.25 +0" "$TMP/table" &&
    pass || fail "table: $(cat "$TMP/table")"
else
  fail "dpmu ledger --format table exited non-zero: $(cat "$TMP/err")"
fi

# --- the budget is the ledger's: a per-call --budget may only be lower; changing it is recorded
expect_exit2 "may only be lower" "${BMA[@]/0.75/0.1}" --ledger "$L" --budget 3
expect_exit2 "privacy budget exceeded" "${BMA[@]/0.75/0.1}" --ledger "$L" --budget 1.8,1e-5
"$DPMU" ledger set-budget "$L" --budget 3,1e-5 --reason "custodian approval 2026-12" >/dev/null 2>"$TMP/err" && pass || fail "set-budget: $(cat "$TMP/err")"
"$DPMU" "${BMA[@]}" --ledger "$L" >/dev/null 2>"$TMP/err" && pass || fail "release after set-budget refused: $(cat "$TMP/err")"
json_check "d['budget']['epsilon'] == 3 and d['budget_changes'][0]['reason'] == 'custodian approval 2026-12' and d['spent']['epsilon'] == 2.5" ledger "$L"
expect_exit2 "--reason" ledger set-budget "$L" --budget 4

# --- a new ledger: created by a release with --budget (then fixed), refused without one
N="$TMP/new.jsonl"
expect_exit2 "dpmu ledger init" "${BMA[@]}" --ledger "$N"
[ ! -e "$N" ] && pass || fail "a release without a budget created a ledger"
"$DPMU" "${BMA[@]}" --ledger "$N" --budget 1 >/dev/null 2>"$TMP/err" && pass || fail "creating release refused: $(cat "$TMP/err")"
expect_exit2 "privacy budget exceeded" "${BMA[@]}" --ledger "$N"
expect_exit2 "may only be lower" "${BMA[@]}" --ledger "$N" --budget 2.4

# --- the race: the data file swapped while a release waits for the ledger's lock. The release
# analyses the bytes it read once and is charged on them; the swap cannot escape the budget.
RL="$TMP/race.jsonl"
"$DPMU" ledger init "$RL" --budget 1 >/dev/null
D="$TMP/data.csv"
cp "$HSB" "$D"
cp "$HSB" "$TMP/orig.csv"
awk -F, 'NR == 1 || NR > 2' "$HSB" >"$TMP/other.csv"  # one row fewer: other bytes
ok=0
for i in 1 2 3; do
  flock "$RL" sleep 1.5 &
  holder=$!
  sleep 0.3
  "$DPMU" test --data "$D" --response math --tested female --epsilon 0.6 --groups 10 --ledger "$RL" >"$TMP/race$i" 2>"$TMP/race$i.err" &
  rel=$!
  sleep 0.5
  if [ $((i % 2)) -eq 1 ]; then cp "$TMP/other.csv" "$D"; else cp "$TMP/orig.csv" "$D"; fi
  wait $holder
  wait $rel && ok=$((ok + 1))
done
[ $ok -eq 1 ] && pass || fail "race: $ok of 3 releases of epsilon 0.6 passed under budget 1"
F1=$(hmac "$RL.key" "$TMP/orig.csv")
F2=$(hmac "$RL.key" "$TMP/other.csv")
# the one charged release was analysed on the original bytes (they were read before the swap)
"$PY" -c "
import json,sys
lines=[json.loads(l) for l in open('$RL')][1:]
sys.exit(0 if len(lines)==1 and lines[0]['data_fingerprint']=='$F1' and lines[0]['data_fingerprint']!='$F2' else 1)" \
  && pass || fail "race: ledger $(cat "$RL")"

# --- process substitution: the bytes read once are analysed and fingerprinted
P="$TMP/pipe.jsonl"
"$DPMU" ledger init "$P" --budget 1 >/dev/null
"$DPMU" test --data <(cat "$HSB") --response math --tested female --epsilon 0.5 --groups 10 --ledger "$P" >/dev/null 2>"$TMP/err" \
  && grep -qF "$(hmac "$P.key" "$HSB")" "$P" && pass || fail "process substitution: $(cat "$TMP/err") $(cat "$P")"

# --- not releases; bad options; damaged, old and foreign ledgers; nothing charged on refusal
expect_exit2 "a ledger records real releases only" "${BMA[@]}" --seed 1 --ledger "$L"
expect_exit2 "a ledger records real releases only" test --data "$HSB" --response math --tested female --non-private --ledger "$L"
expect_exit2 "needs a ledger" "${BMA[@]}" --budget 1
expect_exit2 "--budget" "${BMA[@]}" --ledger "$L" --budget -1
expect_exit2 "not a release: drop --ledger" audit bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --ledger "$L"
cp "$L" "$TMP/bad.jsonl"; cp "$L.key" "$TMP/bad.jsonl.key"
printf '{"time":"x",' >>"$TMP/bad.jsonl"
cp "$TMP/bad.jsonl" "$TMP/bad.orig"
expect_exit2 "line 7: the last line has no newline" ledger "$TMP/bad.jsonl"
expect_exit2 "never reset" "${BMA[@]}" --ledger "$TMP/bad.jsonl"
cmp -s "$TMP/bad.jsonl" "$TMP/bad.orig" && pass || fail "a damaged ledger was changed"
FA0=$(printf 'a%.0s' {1..64})
echo "{\"time\":\"2024-05-01T10:00:00Z\",\"command\":\"dpmu bma\",\"data_file\":\"d.csv\",\"data_fingerprint\":\"$FA0\",\"epsilon\":0.5,\"delta\":0,\"released\":[]}" >"$TMP/old.jsonl"
expect_exit2 "not a dpmu ledger header" ledger "$TMP/old.jsonl"
expect_exit2 "not a dpmu ledger header" "${BMA[@]}" --ledger "$TMP/old.jsonl"
cp "$L" "$TMP/nokey.jsonl"
expect_exit2 "key file" "${BMA[@]}" --ledger "$TMP/nokey.jsonl"
expect_exit2 "nosuch.jsonl" ledger "$TMP/nosuch.jsonl"
expect_exit2 "--format" ledger "$L" --format csv
R2="$TMP/charged.jsonl"
"$DPMU" ledger init "$R2" --budget 1 >/dev/null
"$DPMU" bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --ridge-draws 200 \
  --synthetic-out "$TMP/nofolder/syn.csv" --ledger "$R2" >/dev/null 2>&1
[ "$(wc -l <"$R2")" -eq 1 ] && pass || fail "a release refused on its options was charged: $(cat "$R2")"

# --- DPMU_LEDGER is the default ledger of a real release (not of a seeded run); absolute once read
E="$TMP/env.jsonl"
"$DPMU" ledger init "$E" --budget 5 >/dev/null
(cd "$TMP" && DPMU_LEDGER=env.jsonl "$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 >/dev/null 2>"$TMP/err") &&
  [ "$(wc -l <"$E")" -eq 2 ] && pass || fail "DPMU_LEDGER not charged: $(cat "$TMP/err") $(cat "$E")"
DPMU_LEDGER="$E" "$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --seed 1 >/dev/null 2>"$TMP/err" &&
  [ "$(wc -l <"$E")" -eq 2 ] && pass || fail "a seeded run used DPMU_LEDGER: $(cat "$TMP/err")"

# --- an emptied ledger whose key remains is truncated, not new: refused, never reset
T="$TMP/trunc.jsonl"
"$DPMU" ledger init "$T" --budget 1 >/dev/null
: >"$T"
expect_exit2 "truncated" "${BMA[@]}" --ledger "$T" --budget 1
[ ! -s "$T" ] && pass || fail "a truncated ledger was re-created: $(cat "$T")"

# --- --plot is a file name, never shell code
"$DPMU" "${BMA[@]}" --seed 1 --plot "$TMP/x'; touch $TMP/pwned; echo '.png" >/dev/null 2>&1
[ ! -e "$TMP/pwned" ] && pass || fail "--plot ran shell code"

# --- an output never replaces the ledger or its key, not even with --force; outputs never collide
cp "$L" "$TMP/l.before"
expect_exit2 "is a privacy-budget ledger" "${BMA[@]}" --seed 1 --synthetic-out "$L" --force
expect_exit2 "never overwritten" "${BMA[@]}" --ledger "$L" --synthetic-out "$L" --force
expect_exit2 "never overwritten" "${BMA[@]}" --ledger "$L" --synthetic-out "$L.key" --force
expect_exit2 "never overwritten" "${BMA[@]}" --ledger "$TMP/future.jsonl" --budget 1 --plot "$TMP/future.jsonl"
expect_exit2 "never overwritten" "${BMA[@]}" --seed 1 --plot "$TMP/same.png" --synthetic-out "$TMP/same.png"
cmp -s "$L" "$TMP/l.before" && [ ! -e "$TMP/future.jsonl" ] && pass || fail "a refused output changed the ledger"

# --- a lost write to standard output is exit 2, never 0 (the release stays charged)
F="$TMP/full.jsonl"
"$DPMU" ledger init "$F" --budget 5 >/dev/null
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --ledger "$F" >/dev/full 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "cannot write the output" "$TMP/err" && grep -q "charged to ledger $F (charged, not delivered" "$TMP/err" &&
  [ "$(wc -l <"$F")" -eq 2 ] && pass || fail "release to /dev/full: rc=$rc, $(cat "$TMP/err")"

# --- validation before any budget is spent: a release that fails (or is refused) before it is
# ready to print charges nothing (before: --ridge 1e308 and a huge --simulations were charged, then failed)
V="$TMP/validate.jsonl"
"$DPMU" ledger init "$V" --budget 5 >/dev/null
cp "$V" "$TMP/v.before"
expect_exit2 "--ridge 1e+308 is above" "${BMA[@]}" --ledger "$V" --ridge 1e308
expect_exit2 "--simulations must be a whole number in [1, 100000000], got 2000000000" "${BMA[@]}" --ledger "$V" --confidence 0.9 --simulations 2000000000
expect_exit2 "--bounds: widths u - l down to 2e-170" bma --data "$HSB" --response read --predictors write,math --bounds=-1e-170,1e-170 --epsilon 0.5 --ledger "$V"
expect_exit2 "--censor -1e+308,1e+308: the width U - L = inf" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --censor=-1e308,1e308 --ledger "$V"
expect_exit2 "privacy budget exceeded" "${BMA[@]/0.75/6}" --ledger "$V"
cmp -s "$V" "$TMP/v.before" && pass || fail "a refused or failed release was charged: $(tail -n 1 "$V")"
for cmd in "describe normal_mean" "ledger $L" "plan-test --n 100 --epsilon 1 --simulations 100 --seed 1"; do
  # shellcheck disable=SC2086
  "$DPMU" $cmd >/dev/full 2>"$TMP/err"
  rc=$?
  [ $rc -eq 2 ] && pass || fail "dpmu $cmd >/dev/full: exit $rc"
done

# --- accountants (docs/privacy.md "Accountants"): 10 analytic-Gaussian test releases at (0.5, 1e-6)
# under a budget of (2, 1e-5): a tight ledger takes all ten (tight total 1.52 at delta 1e-5), a basic
# one refuses the fifth (basic 2.5 > 2); every entry records its mechanism.
GT=(test --data "$HSB" --response math --tested female --epsilon 0.5 --delta 1e-6 --groups 10)
T="$TMP/tight.jsonl"
"$DPMU" ledger init "$T" --budget 2,1e-5 --accountant tight >"$TMP/out" 2>"$TMP/err" && grep -q "tight accountant" "$TMP/out" &&
  head -n 1 "$T" | grep -q '"accountant":"tight"' && pass || fail "ledger init --accountant tight: $(cat "$TMP/out" "$TMP/err")"
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do "$DPMU" "${GT[@]}" --ledger "$T" >"$TMP/g$i" 2>"$TMP/err" && ok=$((ok + 1)); done
[ $ok -eq 10 ] && pass || fail "tight ledger: only $ok of 10 Gaussian releases went through: $(cat "$TMP/err")"
"$PY" -c "import json,sys; l=json.load(open('$TMP/g10'))['settings']['ledger']; sys.exit(0 if l['accountant']=='tight' and abs(l['accounted_total']['epsilon']-1.5225)<1e-3 and l['total_epsilon']==5 else 1)" \
  && pass || fail "the 10th release's charge: $(head -c 800 "$TMP/g10")"
json_check "d['accountant'] == 'tight' and d['totals']['basic']['epsilon'] == 5 and abs(d['totals']['basic']['delta'] - 1e-5) < 1e-18 and abs(d['totals']['tight']['epsilon'] - 1.5225) < 1e-3 and d['totals']['tight']['delta'] == 1e-5 and 'tight' in d['totals']['tight']['accountant'] and d['totals']['tight']['gaussian']['releases'] == 10 and abs(d['remaining']['epsilon'] - (2 - d['totals']['tight']['epsilon'])) < 1e-12 and all(r['mechanism'] == 'gaussian' for s in d['data_sets'].values() for r in s['release_list'])" ledger "$T"
"$DPMU" ledger "$T" --format table >"$TMP/table" 2>"$TMP/err" && grep -qE "tight total: epsilon=1\.522[0-9]* at delta=1e-05 \(Gaussian releases 10" "$TMP/table" &&
  grep -q "checked with the tight accountant" "$TMP/table" && pass || fail "tight table: $(cat "$TMP/table" "$TMP/err")"
B="$TMP/basic.jsonl"
"$DPMU" ledger init "$B" --budget 2,1e-5 >/dev/null
for i in 1 2 3 4; do "$DPMU" "${GT[@]}" --ledger "$B" >/dev/null 2>"$TMP/err" || fail "basic ledger: release $i refused: $(cat "$TMP/err")"; done
expect_exit2 "privacy budget exceeded" "${GT[@]}" --ledger "$B"
json_check "d['accountant'] == 'basic' and d['spent']['releases'] == 4 and d['totals']['basic']['epsilon'] == 2 and d['totals']['tight']['epsilon'] < 1.2" ledger "$B"
# a zCDP budget; an accountant that does not suit the budget is refused before anything is written
Z="$TMP/rho.jsonl"
"$DPMU" ledger init "$Z" --budget rho=0.05 >/dev/null 2>"$TMP/err" && pass || fail "ledger init rho: $(cat "$TMP/err")"
"$DPMU" "${GT[@]}" --ledger "$Z" >/dev/null 2>"$TMP/err" && pass || fail "rho ledger: Gaussian release refused: $(cat "$TMP/err")"
json_check "d['accountant'] == 'zcdp' and d['budget'] == {'rho': 0.05} and abs(d['totals']['zcdp']['rho'] - 0.0077012) < 1e-6" ledger "$Z"
expect_exit2 "cannot be accounted in zCDP" select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 0.25 --radius 2 --penalty 1 --data-bound 3 --algorithm 2 --delta 1e-6 --ledger "$Z"
expect_exit2 "goes with the zcdp accountant" ledger init "$TMP/badacc.jsonl" --budget 1 --accountant zcdp
[ ! -e "$TMP/badacc.jsonl" ] && pass || fail "a refused init wrote $TMP/badacc.jsonl"
# an old ledger (no accountant in the header, no mechanism in its entries) keeps working: basic
O="$TMP/oldacc.jsonl"
"$DPMU" ledger init "$O" --budget 1 >/dev/null
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --ledger "$O" >/dev/null 2>&1
"$PY" -c "
import json,sys
lines=[json.loads(x) for x in open(sys.argv[1])]
lines[0].pop('accountant'); lines[1].pop('mechanism')
open(sys.argv[1],'w').write(''.join(json.dumps(x, separators=(',', ':'))+'\n' for x in lines))" "$O"
json_check "d['accountant'] == 'basic' and d['spent']['epsilon'] == 0.5 and d['totals']['tight']['basic_composition']['releases'] == 1" ledger "$O"
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --ledger "$O" >/dev/null 2>"$TMP/err" && pass || fail "old ledger: release refused: $(cat "$TMP/err")"
expect_exit2 "privacy budget exceeded" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --ledger "$O"

finish ledger_cli_test
