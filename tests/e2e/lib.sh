# Shared helpers of the end-to-end test scripts (sourced, not run).
# The sourcing script sets DPMU (the binary) and may set REF (a JSON file visible as `r` in
# json_check expressions). Provides TMP (removed on exit), pass, fail, expect_error, json_check, finish.
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
passes=0

pass() { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error "substring of stderr" args...   (non-zero exit, not a crash, message on stderr)
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

# json_check 'python expression on d (the output) and r (the REF file, if any)' args...
json_check() {
  local expr="$1"; shift
  if ! "$DPMU" "$@" >"$TMP/out" 2>"$TMP/err"; then fail "dpmu $* exited non-zero: $(cat "$TMP/err")"; return; fi
  if ! REF_FILE="${REF:-}" "$PY" -c "import json,math,os,sys; d=json.load(open('$TMP/out')); rf=os.environ['REF_FILE']; r=json.load(open(rf)) if rf else None; sys.exit(0 if ($expr) else 1)"; then
    fail "dpmu $*: check failed: $expr; output: $(head -c 3000 "$TMP/out")"; return
  fi
  pass
}

# expect_exit CODE "output substring" args...   (exact exit code; substring of stderr or stdout)
expect_exit() {
  local want_rc="$1" want="$2"; shift 2
  "$DPMU" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  if [ $rc -ne "$want_rc" ]; then fail "dpmu $*: exit $rc, expected $want_rc; stderr: $(cat "$TMP/err")"; return; fi
  if [ -n "$want" ] && ! grep -qF -- "$want" "$TMP/err" "$TMP/out"; then
    fail "dpmu $*: output lacks '$want'; got: $(cat "$TMP/err" "$TMP/out")"; return
  fi
  pass
}

# same_arrays A.h5 B.h5: /replicates, /replicates_done, /calibration and /summary bit-identical.
same_arrays() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert sorted(a["replicates"]) == sorted(b["replicates"])
for k in a["replicates"]:
    x, y = a["replicates"][k][()], b["replicates"][k][()]
    assert x.shape == y.shape and x.tobytes() == y.tobytes(), k
assert a["replicates_done"][()].tobytes() == b["replicates_done"][()].tobytes()
for k in a["calibration"]:
    assert a["calibration"][k][()].tobytes() == b["calibration"][k][()].tobytes(), k
for k in a["summary"]:
    for s in a["summary"][k]:
        assert a["summary"][k][s][()].tobytes() == b["summary"][k][s][()].tobytes(), (k, s)
PYEOF
}

# finish NAME: print the closing "N passed, N failed" line and exit non-zero on failures.
finish() {
  echo "$1: $passes passed, $failures failed"
  [ $failures -eq 0 ]
}
