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

finish ledger_cli_test
