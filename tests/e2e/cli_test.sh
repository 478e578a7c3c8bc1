#!/usr/bin/env bash
# End-to-end tests of the `dpmu` command: outputs against the HSB2 reference values and
# every bad input ending in a clear message with a non-zero exit.
# Usage: cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
PY=/usr/bin/python3
HSB="$SRC/experiments/data/hsb2.csv"
FIX="$SRC/tests/fixtures"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
passes=0

pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error "substring of stderr" args...   (non-zero exit, message on stderr, nothing on stdout)
expect_error() {
  local want="$1"; shift
  "$DPMU" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc -eq 0 ]; then fail "expected failure: dpmu $*"; return; fi
  if [ $rc -ge 128 ]; then fail "crashed (signal $((rc - 128))): dpmu $*"; return; fi
  if ! grep -qF -- "$want" "$TMP/err"; then
    fail "dpmu $*: stderr lacks '$want'; got: $(cat "$TMP/err")"; return
  fi
  pass
}

# json_check 'python expression on d' args...
json_check() {
  local expr="$1"; shift
  if ! "$DPMU" "$@" >"$TMP/out" 2>"$TMP/err"; then fail "dpmu $* exited non-zero: $(cat "$TMP/err")"; return; fi
  if ! "$PY" -c "import json,sys; d=json.load(open('$TMP/out')); sys.exit(0 if ($expr) else 1)"; then
    fail "dpmu $*: check failed: $expr; output: $(cat "$TMP/out")"; return
  fi
  pass
}

# --- help and version
"$DPMU" --help >/dev/null && pass || fail "dpmu --help"
"$DPMU" test --help >/dev/null && pass || fail "dpmu test --help"
"$DPMU" --version | grep -q "dpmu 0" && pass || fail "dpmu --version"

# --- reference values, every prior, both HSB tests
REF="$SRC/tests/reference/hsb2_tests.json"
for prior in g-prior zellner-siow hyper-g hyper-g-n robust bic aic lr; do
  want1=$("$PY" -c "import json; print(json.load(open('$REF'))['tests'][0]['log_statistic']['$prior'])")
  want2=$("$PY" -c "import json; print(json.load(open('$REF'))['tests'][1]['log_statistic']['$prior'])")
  json_check "abs(d['log_statistic'] - ($want1)) < 1e-6 and d['p0'] == 1 and d['n'] == 200" \
    test --non-private --data "$HSB" --response math --tested female --prior "$prior"
  json_check "abs(d['log_statistic'] - ($want2)) < 1e-6 and d['p0'] == 2 and abs(d['two_log_likelihood_ratio'] - 42.92716022878533) < 1e-9" \
    test --non-private --data "$HSB" --response math --common science --tested read --prior "$prior"
done
json_check "abs(d['posterior_probability_h1'] - 0.0713) < 0.0005 and d['prior_parameters']['g'] == 200" \
  test --non-private --data "$HSB" --response math --tested female --prior g-prior
json_check "d['posterior_probability_h1'] > 0.99" \
  test --non-private --data "$HSB" --response math --common science --tested read
json_check "'posterior_probability_h1' not in d and d['statistic'] == 'log_information_criterion'" \
  test --non-private --data "$HSB" --response math --tested female --prior lr
json_check "abs(d['posterior_probability_h1'] - 1/(1 + 3*0.07133234071119672**-1*(1-0.07133234071119672))) < 1e-9" \
  test --non-private --data "$HSB" --response math --tested female --prior-h0 0.75
json_check "d['prior_parameters']['g'] == 50" \
  test --non-private --data "$HSB" --response math --tested female --g 50
json_check "len(d['tested']) == 2 and d['p'] == 2 and d['p0'] == 3" \
  test --non-private --data "$HSB" --response math --common science,socst --tested read,write --prior zellner-siow
json_check "d['common'] == [] and d['p0'] == 1" \
  test --non-private --data "$HSB" --response math --common "" --tested female

# --- bad input: clear message, non-zero exit, never a crash
expect_error "no column 'nosuch'" test --non-private --data "$HSB" --response math --tested nosuch
expect_error "unknown prior 'zelner'" test --non-private --data "$HSB" --response math --tested female --prior zelner
expect_error "a is 2, but must be finite and > 2" test --non-private --data "$HSB" --response math --tested female --prior hyper-g --a 2
expect_error "g is -1" test --non-private --data "$HSB" --response math --tested female --g -1
expect_error "--prior-h0 is 1.5" test --non-private --data "$HSB" --response math --tested female --prior-h0 1.5
expect_error "named twice" test --non-private --data "$HSB" --response math --tested math
expect_error "'five' is not a number" test --non-private --data "$FIX/non_numeric.csv" --response a --tested b
expect_error "not finite" test --non-private --data "$FIX/nan.csv" --response a --tested b
expect_error "empty cell" test --non-private --data "$FIX/empty_cell.csv" --response a --tested b
expect_error "File does not exist" test --non-private --data "$TMP/none.csv" --response a --tested b
expect_error "--tested is required" test --non-private --data "$HSB" --response math
printf 'y,x,z\n1,2,4\n2,3,6\n' > "$TMP/few.csv"
expect_error "at least p0 + p + 1" test --non-private --data "$TMP/few.csv" --response y --common x --tested z
printf 'y,x,z\n1,1,2\n2,2,4\n4,3,6\n3,4,8\n' > "$TMP/collinear.csv"
expect_error "'z' is collinear" test --non-private --data "$TMP/collinear.csv" --response y --common x --tested z
printf 'y,x\n1,1\n3,2\n5,3\n7,4\n' > "$TMP/exact.csv"
expect_error "R² = 1" test --non-private --data "$TMP/exact.csv" --response y --tested x

echo "cli_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
