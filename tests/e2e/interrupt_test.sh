#!/usr/bin/env bash
# Ctrl-C stops a long model search in R and in Python (docs/reliability.md "Interrupts"): SIGINT
# sent to an Rscript and to a python3 process in the middle of a private dpmu bma release with
# 30 predictors (an MCMC search of minutes without the signal) stops the call within a few seconds
# with R's interrupt condition / Python's KeyboardInterrupt. The release's noise was drawn before the
# search, so it was charged then (docs/privacy.md "Charge first, then speak"): the ledger holds
# exactly that one charge and stderr says "charged, not delivered". Each process then makes one
# short release with the same ledger, which is charged too (2 releases in all).
#
# Usage: interrupt_test.sh DPMU_EXE SOURCE_DIR BUILD_DIR. Exit 77 (skipped) when neither R (with
# Rcpp) nor the Python module can be used; a part whose front end is missing is skipped.
set -uo pipefail
DPMU=$1 src=$(cd "$2" && pwd) build=$3
source "$src/tests/e2e/lib.sh"

# The whole signal path, per front end: start the script, wait for its "STARTED" line (the long
# call is about to begin), wait 3 s, send SIGINT, and require the process to report within 10 s.
run_interrupted() {
  local name=$1 out=$2; shift 2
  "$@" >"$out" 2>"$out.err" &
  local pid=$! waited=0
  while ! grep -q STARTED "$out" 2>/dev/null; do
    sleep 0.2; waited=$((waited + 1))
    if [ $waited -gt 600 ] || ! kill -0 $pid 2>/dev/null; then
      fail "$name: the script did not start: $(cat "$out" "$out.err")"; kill $pid 2>/dev/null; return 1
    fi
  done
  sleep 3
  local sent
  sent=$(date +%s.%N)
  kill -INT $pid
  local i=0
  while kill -0 $pid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  if kill -0 $pid 2>/dev/null; then
    fail "$name: still running 10 s after SIGINT"; kill -KILL $pid; wait $pid 2>/dev/null; return 1
  fi
  wait $pid
  local rc=$?
  if ! grep -q "^INTERRUPTED" "$out"; then
    fail "$name: no interrupt reported (exit $rc): $(cat "$out" "$out.err")"; return 1
  fi
  # The script prints the time at which the call ended with the interrupt (seconds since the epoch).
  local took
  took=$("$PY" -c "import sys; print(round(float(sys.argv[1]) - $sent, 2))" "$(awk '/^INTERRUPTED/ {print $2}' "$out")")
  echo "$name: the call stopped ${took} s after SIGINT (process exit $rc)"
  if "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) < 2.0 else 1)" "$took"; then pass; else
    fail "$name: the call stopped ${took} s after SIGINT (more than 2 s)"; fi
}

# The number of releases in a ledger.
releases() { "$DPMU" ledger "$1" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['spent']['releases'])"; }

ran=0

# ---- R ----
if command -v Rscript >/dev/null 2>&1 &&
   Rscript -e "quit(status = !requireNamespace('Rcpp', quietly = TRUE))" >/dev/null 2>&1; then
  ran=1
  cp -r "$src/bindings/r" "$TMP/rpkg"
  mkdir "$TMP/rlib"
  if DPMU_BUILD_DIR="$build" R CMD INSTALL --no-test-load -l "$TMP/rlib" "$TMP/rpkg" >"$TMP/rinstall.log" 2>&1; then
    "$DPMU" ledger init "$TMP/r.jsonl" --budget 10 >/dev/null
    cat >"$TMP/long.R" <<'EOF'
library(dpmu)
set.seed(1)
n <- 300; p <- 30
d <- as.data.frame(matrix(rnorm(n * p), n, p))
d$y <- 0.2 * d$V1 + rnorm(n)
ledger <- commandArgs(TRUE)[1]
cat("STARTED\n"); flush(stdout())
t0 <- Sys.time()
r <- tryCatch({
  dpmu::bma(y ~ ., d, epsilon = 0.5, bounds = c(-5, 5), ledger = ledger, mcmc_max_iterations = 1e9)
  "COMPLETED"
}, interrupt = function(e) "INTERRUPTED")
cat(r, sprintf("%.3f", as.numeric(Sys.time())), "\n"); flush(stdout())
# A short release with the same ledger is charged.
fit <- dpmu::bma(y ~ V1 + V2, d, epsilon = 0.5, bounds = c(-5, 5), ledger = ledger)
cat("CHARGED", fit$ledger$releases, "\n")
EOF
    if run_interrupted "R" "$TMP/r.out" env R_LIBS="$TMP/rlib" Rscript --vanilla "$TMP/long.R" "$TMP/r.jsonl"; then
      # The interrupted release was charged once (when its noise was drawn) and said so; the short
      # one after it made the second charge.
      if grep -q "CHARGED 2" "$TMP/r.out" && [ "$(releases "$TMP/r.jsonl")" = 2 ] &&
         grep -q "charged, not delivered" "$TMP/r.out.err"; then pass; else
        fail "R: the ledger should hold the interrupted release and the short one: $(cat "$TMP/r.out" "$TMP/r.out.err"); $("$DPMU" ledger "$TMP/r.jsonl")"
      fi
    fi
  else
    fail "R CMD INSTALL failed: $(tail -20 "$TMP/rinstall.log")"
  fi
else
  echo "SKIP (R part): Rscript or Rcpp is missing"
fi

# ---- Python ----
if ls "$build"/bindings/python/_dpmu*.so >/dev/null 2>&1 && "$PY" -c "import numpy, pandas" >/dev/null 2>&1; then
  ran=1
  mkdir -p "$TMP/py/dpmu"
  cp "$src"/bindings/python/dpmu/*.py "$TMP/py/dpmu/"
  cp "$build"/bindings/python/_dpmu*.so "$TMP/py/dpmu/"
  "$DPMU" ledger init "$TMP/py.jsonl" --budget 10 >/dev/null
  cat >"$TMP/long.py" <<'EOF'
import sys, time
import numpy as np, pandas as pd
import signal
import dpmu
# A background job of a non-interactive shell inherits SIGINT ignored, and Python then installs no
# handler; restore the one an interactive session has (KeyboardInterrupt).
signal.signal(signal.SIGINT, signal.default_int_handler)
rng = np.random.default_rng(1)
n, p = 300, 30
d = pd.DataFrame(rng.standard_normal((n, p)), columns=[f"x{j}" for j in range(p)])
d["y"] = 0.2 * d["x0"] + rng.standard_normal(n)
ledger = sys.argv[1]
print("STARTED", flush=True)
t0 = time.time()
try:
    dpmu.bma(d, "y", epsilon=0.5, bounds=[-5, 5], ledger=ledger, mcmc_max_iterations=10**9)
    r = "COMPLETED"
except KeyboardInterrupt:
    r = "INTERRUPTED"
print(r, f"{time.time():.3f}", flush=True)
fit = dpmu.bma(d, "y", ["x0", "x1"], epsilon=0.5, bounds=[-5, 5], ledger=ledger)
print("CHARGED", fit.ledger["releases"], flush=True)
EOF
  if run_interrupted "Python" "$TMP/py.out" env PYTHONPATH="$TMP/py" PYTHONDONTWRITEBYTECODE=1 "$PY" "$TMP/long.py" \
      "$TMP/py.jsonl"; then
    if grep -q "CHARGED 2" "$TMP/py.out" && [ "$(releases "$TMP/py.jsonl")" = 2 ] &&
       grep -q "charged, not delivered" "$TMP/py.out.err"; then pass; else
      fail "Python: the ledger should hold the interrupted release and the short one: $(cat "$TMP/py.out" "$TMP/py.out.err"); $("$DPMU" ledger "$TMP/py.jsonl")"
    fi
  fi
else
  echo "SKIP (Python part): the extension module was not built, or numpy/pandas are missing"
fi

[ $ran -eq 1 ] || { echo "SKIP: neither R (with Rcpp) nor the Python module is available"; exit 77; }
finish "interrupt_test"
