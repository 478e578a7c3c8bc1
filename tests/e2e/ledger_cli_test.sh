#!/usr/bin/env bash
# End-to-end tests of `dpmu ledger FILE`: totals by basic composition per data fingerprint on a
# ledger written by hand, the table format, and a damaged or missing ledger ending in a clear
# message and exit code 2 (the ledger is left as it was).
# Usage: ledger_cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"

FA=$(printf 'a%.0s' {1..64})
FB=$(printf 'b%.0s' {1..64})
L="$TMP/ledger.jsonl"
cat >"$L" <<EOF
{"time":"2024-05-01T10:00:00Z","command":"dpmu bma","data_file":"data/hsb2.csv","data_fingerprint":"$FA","epsilon":0.5,"delta":1e-7,"released":["coefficients"]}
{"time":"2024-05-01T11:00:00Z","command":"dpmu select","data_file":"prostate.csv","data_fingerprint":"$FB","epsilon":1,"delta":0,"released":["selected_model"]}
{"time":"2024-05-02T09:30:00Z","command":"dpmu test","data_file":"copy of hsb2.csv","data_fingerprint":"$FA","epsilon":0.25,"delta":2e-7,"released":["log_statistic"],"extra":"ignored"}
EOF

"$DPMU" ledger --help >/dev/null && pass || fail "dpmu ledger --help"

json_check "d['entries'] == 3 and sorted(d['data_sets']) == ['$FA', '$FB'] and 'basic' in d['composition']" ledger "$L"
json_check "(lambda a: a['releases'] == 2 and abs(a['epsilon'] - 0.75) < 1e-12 and abs(a['delta'] - 3e-7) < 1e-18 and a['data_files'] == ['data/hsb2.csv', 'copy of hsb2.csv'] and [r['command'] for r in a['release_list']] == ['dpmu bma', 'dpmu test'] and a['release_list'][1] == {'time': '2024-05-02T09:30:00Z', 'command': 'dpmu test', 'epsilon': 0.25, 'delta': 2e-7})(d['data_sets']['$FA'])" \
  ledger "$L"
json_check "(lambda b: b['releases'] == 1 and b['epsilon'] == 1 and b['delta'] == 0 and b['data_files'] == ['prostate.csv'])(d['data_sets']['$FB'])" \
  ledger "$L" --format json

# --- the table
if "$DPMU" ledger "$L" --format table >"$TMP/table" 2>"$TMP/err"; then
  grep -qF "3 release(s) on 2 data set(s)" "$TMP/table" && grep -qF "data set sha256 $FA" "$TMP/table" &&
    grep -qF "files: data/hsb2.csv, copy of hsb2.csv" "$TMP/table" && grep -qE "total \(2 release\(s\)\) +0\.75 +3e-07" "$TMP/table" &&
    grep -qE "2024-05-01T11:00:00Z +dpmu select +1 +0" "$TMP/table" && pass || fail "table: $(cat "$TMP/table")"
else
  fail "dpmu ledger --format table exited non-zero: $(cat "$TMP/err")"
fi

# --- an empty ledger file: no data sets
: >"$TMP/empty.jsonl"
json_check "d['entries'] == 0 and d['data_sets'] == {}" ledger "$TMP/empty.jsonl"

# --- damaged ledgers: exit 2, a message naming the file and the line; the file is not changed
expect_exit2() {
  local want="$1"; shift
  "$DPMU" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc -ne 2 ]; then fail "dpmu $*: exit code $rc, expected 2; stderr: $(cat "$TMP/err")"; return; fi
  if [ -s "$TMP/out" ]; then fail "dpmu $*: printed on stdout despite the error: $(cat "$TMP/out")"; return; fi
  expect_error "$want" "$@"
}
D="$TMP/damaged.jsonl"
head -n 2 "$L" >"$D"
head -n 1 "$L" | head -c 60 >>"$D"  # a truncated last line (no newline)
cp "$D" "$TMP/damaged.orig"
expect_exit2 "ledger $D line 3: the last line has no newline" ledger "$D"
expect_exit2 "the ledger is damaged; fix or restore it, it is never reset" ledger "$D" --format table
cmp -s "$D" "$TMP/damaged.orig" && pass || fail "dpmu ledger changed a damaged ledger"

sed 's/"epsilon":1,/"epsilon":-1,/' "$L" >"$D"
expect_exit2 "ledger $D line 2: epsilon is -1, but must be finite and >= 0" ledger "$D"
sed '1s/"delta":1e-7,//' "$L" >"$D"
expect_exit2 "ledger $D line 1: missing field 'delta'" ledger "$D"
{ head -n 1 "$L"; echo '{"time": oops}'; } >"$D"
expect_exit2 "ledger $D line 2: not valid JSON" ledger "$D"

# --- other bad input
expect_exit2 "nosuch.jsonl" ledger "$TMP/nosuch.jsonl"
expect_exit2 "--format" ledger "$L" --format csv

# --- the release commands charge the ledger and refuse a release past the budget
HSB="$SRC/experiments/data/hsb2.csv"
PROS="$SRC/experiments/data/prostate.csv"
R="$TMP/releases.jsonl"
BMA=(bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --epsilon 0.75 --ridge-draws 200)
"$DPMU" "${BMA[@]}" --ledger "$R" --budget 2 >"$TMP/r1" 2>"$TMP/e1" && pass || fail "first release refused: $(cat "$TMP/e1")"
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 0.5 --groups 10 --ledger "$R" --budget 2 >"$TMP/r2" 2>"$TMP/e2" && pass || fail "second release refused: $(cat "$TMP/e2")"
# 0.75 + 0.5 + 0.75 = 2.0 fits; a fourth release would exceed 2: refused, exit 2, nothing printed
"$DPMU" "${BMA[@]}" --ledger "$R" --budget 2 >"$TMP/r3" 2>"$TMP/e3" && pass || fail "third release refused: $(cat "$TMP/e3")"
"$DPMU" "${BMA[@]}" --ledger "$R" --budget 2 >"$TMP/r4" 2>"$TMP/e4"
rc=$?
if [ $rc -eq 2 ] && [ ! -s "$TMP/r4" ] && grep -q "budget" "$TMP/e4"; then pass; else fail "over-budget release: rc=$rc, stdout $(head -c 200 "$TMP/r4"), stderr $(cat "$TMP/e4")"; fi
# the ledger shows the three earlier releases on the same fingerprint, totals by basic composition
"$DPMU" ledger "$R" >"$TMP/l.json" 2>/dev/null
FP=$(sha256sum "$HSB" | cut -d' ' -f1)
"$PY" -c "
import json,sys
d=json.load(open('$TMP/l.json'))['data_sets']['$FP']
ok = d['releases']==3 and abs(d['epsilon']-2.0)<1e-12 and d['delta']==0 and [r['command'] for r in d['release_list']]==['dpmu bma','dpmu test','dpmu bma']
sys.exit(0 if ok else 1)" && pass || fail "ledger totals: $(cat "$TMP/l.json")"
# another data set has its own total; Algorithm 2 is charged 2 epsilon and delta
"$DPMU" select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 0.5 --radius 2 --penalty 1 --data-bound 3 --algorithm 2 --delta 1e-6 --ledger "$R" --budget 2,1e-5 >/dev/null 2>"$TMP/e5" && pass || fail "select release refused: $(cat "$TMP/e5")"
"$DPMU" ledger "$R" >"$TMP/l.json" 2>/dev/null
FP2=$(sha256sum "$PROS" | cut -d' ' -f1)
"$PY" -c "
import json,sys
d=json.load(open('$TMP/l.json'))['data_sets']['$FP2']
sys.exit(0 if d['releases']==1 and d['epsilon']==1.0 and d['delta']==1e-6 else 1)" && pass || fail "select charged wrongly: $(cat "$TMP/l.json")"
# a seeded run or a non-private run is not a release; --budget needs --ledger; a damaged ledger refuses
expect_exit2 "--ledger records real releases only" "${BMA[@]}" --seed 1 --ledger "$R"
expect_exit2 "--ledger records real releases only" test --data "$HSB" --response math --tested female --non-private --ledger "$R"
expect_exit2 "--budget needs --ledger" "${BMA[@]}" --budget 1
expect_exit2 "--budget" "${BMA[@]}" --ledger "$R" --budget -1
expect_exit2 "not a release: drop --ledger" audit bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --ledger "$R"
cp "$R" "$TMP/bad.jsonl"
printf '{"time":"x",' >>"$TMP/bad.jsonl"
expect_exit2 "damaged" "${BMA[@]}" --ledger "$TMP/bad.jsonl"
# the data must be a regular file (a FIFO or process substitution would be fingerprinted empty)
mkfifo "$TMP/fifo"
expect_exit2 "must be a regular file" "${BMA[@]/$HSB/$TMP/fifo}" --ledger "$R"
# a refused release (bad input found before the data are read) is not charged
R2="$TMP/charged.jsonl"
"$DPMU" bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --ridge-draws 200 \
  --synthetic-out "$TMP/nofolder/syn.csv" --ledger "$R2" >/dev/null 2>&1
if [ ! -s "$R2" ]; then pass; else fail "a release refused on its options was charged: $(cat "$R2")"; fi

finish ledger_cli_test
