#!/usr/bin/env bash
# Charge first, then speak (docs/privacy.md): nothing a caller of `dpmu bma` can observe depends on
# the noisy statistics before the ledger is charged, and a release whose noise was drawn stays
# charged when it is interrupted.
#  1. Kill at the first stderr byte: a private release whose ridge must be raised (--ridge 0 at a
#     small epsilon: "the ridge was raised to ..." is a function of G*) is killed with SIGKILL the
#     moment its first stderr byte arrives; every such run must already be in the ledger (before the
#     fix the warning came before the charge and 20 of 20 killed runs were uncharged).
#  2. SIGINT after the noise: a release with a long post-processing step (the Sec. 5.1 confidence
#     sets) is sent SIGINT as soon as its charge is in the ledger: it must end with exit 130,
#     "charged, not delivered" on stderr, nothing on stdout, and exactly one charge.
# Usage: charge_first_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
HSB="$SRC/experiments/data/hsb2.csv"

"$DPMU" ledger init "$TMP/l1.jsonl" --budget 1000 >/dev/null 2>"$TMP/err" || fail "ledger init: $(cat "$TMP/err")"
"$DPMU" ledger init "$TMP/l2.jsonl" --budget 1000 >/dev/null 2>"$TMP/err" || fail "ledger init: $(cat "$TMP/err")"

DPMU="$DPMU" HSB="$HSB" L1="$TMP/l1.jsonl" L2="$TMP/l2.jsonl" "$PY" - <<'PYEOF'
import json, os, signal, subprocess, sys, time
dpmu, hsb = os.environ["DPMU"], os.environ["HSB"]
def releases(path):
    out = subprocess.run([dpmu, "ledger", path], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["spent"]["releases"]
bad = 0
# 1. Kill at the first stderr byte.
base = [dpmu, "bma", "--data", hsb, "--response", "read", "--predictors", "math,science,female",
        "--bounds", "0,100", "--epsilon", "0.05", "--ridge", "0", "--ledger", os.environ["L1"]]
spoke = 0
for run in range(20):
    before = releases(os.environ["L1"])
    p = subprocess.Popen(base, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = p.stderr.read(1)
    if first:
        p.kill()
    p.wait()
    p.stderr.close()
    after = releases(os.environ["L1"])
    if first:
        spoke += 1
        if after != before + 1:
            print(f"FAIL: run {run}: stderr spoke ({first!r}...) and the run was killed, but the ledger went "
                  f"{before} -> {after} releases (an uncharged disclosure)")
            bad += 1
if spoke < 15:
    print(f"FAIL: only {spoke} of 20 runs wrote to stderr (expected the ridge warning in nearly all)")
    bad += 1
# 2. SIGINT once the charge is in the ledger, during the confidence-set simulations.
cmd = [dpmu, "bma", "--data", hsb, "--response", "read", "--predictors", "math,science,female,socst,write",
       "--bounds", "0,100", "--epsilon", "1", "--confidence", "0.9", "--simulations", "3000000",
       "--ledger", os.environ["L2"]]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
t0 = time.time()
while releases(os.environ["L2"]) == 0 and p.poll() is None and time.time() - t0 < 120:
    time.sleep(0.05)
if p.poll() is not None:
    print("FAIL: the release ended before its charge was seen in the ledger (charged only at the end?)")
    bad += 1
else:
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    if p.returncode != 130 or b"charged, not delivered" not in err or out.strip():
        print(f"FAIL: SIGINT after the charge: exit {p.returncode}, stdout {out[:200]!r}, stderr {err[-400:]!r}")
        bad += 1
    if releases(os.environ["L2"]) != 1:
        print(f"FAIL: the interrupted release should hold exactly one charge, ledger has {releases(os.environ['L2'])}")
        bad += 1
sys.exit(1 if bad else 0)
PYEOF
if [ $? -eq 0 ]; then pass; else fail "charge-first checks (above)"; fi
finish "charge_first_test"
