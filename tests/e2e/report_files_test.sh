#!/usr/bin/env bash
# plotting/report.py on the results files it cannot use and on outputs it cannot write (no Chromium):
# - a damaged file (one byte of a data chunk changed; a truncated copy) and a file that is not HDF5
#   are named on stderr and at the top of the page, the page is still written from the readable
#   files, and the exit code is 1 (before: exit 0 and never named); also with --compare;
# - a run stopped before its first replicate is shown as "no replicate done", its claims "not run"
#   (before: KeyError);
# - an output that cannot be written (--out in a missing folder or naming a folder, --figures under
#   a file, RESULTS_DIR read-only for claims.json) is refused with exit 2 before any work: claims.json
#   is not written (before: the report was computed, then a traceback).
# Usage: report_files_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"

# report DIR ARGS...: run report.py; sets rc, leaves stdout/stderr in $TMP/rout, $TMP/rerr
report() { "$PY" plotting/report.py "$@" >"$TMP/rout" 2>"$TMP/rerr"; rc=$?; }
no_traceback() { if grep -q "Traceback" "$TMP/rerr"; then fail "$1: a traceback: $(tail -3 "$TMP/rerr")"; else pass; fi; }

# damage FILE: change one byte in the middle of the first stored chunk of /replicates (the file's
# attributes stay readable, so only a check of its contents finds it)
damage() {
  "$PY" - "$1" <<'PYEOF'
import sys, h5py
path = sys.argv[1]
with h5py.File(path, "r") as f:
    ds = next(f["replicates"][k] for k in sorted(f["replicates"]) if f["replicates"][k].id.get_num_chunks() > 0)
    info = ds.id.get_chunk_info(0)
    base = f.id.get_create_plist().get_userblock()   # chunk addresses are relative to the HDF5 base address
with open(path, "r+b") as g:
    at = base + info.byte_offset + info.size // 2
    g.seek(at); b = g.read(1); g.seek(at); g.write(bytes([b[0] ^ 0xFF]))
with h5py.File(path, "r") as f:   # precondition: the attributes still read as a finished run
    assert bool(f.attrs["complete"]) and int(f.attrs["replicates"]) > 0
PYEOF
}

mkdir -p "$TMP/good" "$TMP/mixed" "$TMP/empty"
for c in fig1_hsb_posterior fig6_hsb_censoring fig2_hsb_likelihood_ratio; do
  "$DPMU" run "configs/smoke/$c.yaml" --out "$TMP/good/$c.h5" --quiet 2>"$TMP/err" || fail "dpmu run $c: $(cat "$TMP/err")"
done

# --- every readable file: exit 0, nothing named
report "$TMP/good" --out "$TMP/good.html"
[ $rc -eq 0 ] && ! grep -q "could not be read" "$TMP/good.html" && pass || fail "good folder: exit $rc: $(cat "$TMP/rerr")"

# --- damaged (a changed byte), truncated, and not HDF5: named on stderr and on the page, exit 1,
#     the page written from the readable file
cp "$TMP/good/fig1_hsb_posterior.h5" "$TMP/good/fig6_hsb_censoring.h5" "$TMP/good/fig2_hsb_likelihood_ratio.h5" "$TMP/mixed/"
if damage "$TMP/mixed/fig6_hsb_censoring.h5"; then pass; else fail "could not damage a chunk of fig6_hsb_censoring.h5"; fi
size=$(stat -c %s "$TMP/mixed/fig2_hsb_likelihood_ratio.h5")
truncate -s $((size / 2)) "$TMP/mixed/fig2_hsb_likelihood_ratio.h5"
mkdir -p "$TMP/mixed/sub"
echo "not a results file" > "$TMP/mixed/sub/notes.h5"
report "$TMP/mixed" --out "$TMP/mixed.html"
[ $rc -eq 1 ] && pass || fail "damaged files: exit $rc (want 1): $(cat "$TMP/rerr")"
no_traceback "damaged files"
for f in fig6_hsb_censoring.h5 fig2_hsb_likelihood_ratio.h5 sub/notes.h5; do
  grep -q "error: .*$TMP/mixed/$f" "$TMP/rerr" && pass || fail "stderr does not name $f: $(cat "$TMP/rerr")"
  if "$PY" - "$TMP/mixed.html" "$TMP/mixed/$f" <<'PYEOF'
import html, sys
s = open(sys.argv[1]).read()
box = s[s.index("id='unreadable'"):]
box = box[:box.index("</div>")]
assert "3 results files" in box and "could not be read" in box, box[:300]
assert html.escape(sys.argv[2]) in box, sys.argv[2]
PYEOF
  then pass; else fail "the page does not name $f in its box of unreadable files"; fi
done
grep -q "SHA-256 does not match" "$TMP/rerr" && pass || fail "the damaged file's message does not say its checksum failed"
grep -q "<img " "$TMP/mixed.html" && grep -q "fig1_hsb_posterior.h5" "$TMP/mixed.html" && pass \
  || fail "the page lacks the readable file's figures"
if "$PY" - "$TMP/mixed/claims.json" <<'PYEOF'
import json, sys
d = {e["id"]: e for e in json.load(open(sys.argv[1]))["claims"]}
assert d["PB-4.4-fig1-shrinkage"]["verdict"] != "not run"        # from the readable file
assert d["PB-B-fig6-shrinkage"]["verdict"] == "not run", d["PB-B-fig6-shrinkage"]   # from the damaged one: nothing
PYEOF
then pass; else fail "claims.json: verdicts from the readable file only"; fi

# --- --compare: a damaged file in either folder is named, exit 1
report --compare "$TMP/good" "$TMP/mixed" --out "$TMP/cmp.html"
[ $rc -eq 1 ] && grep -q "fig6_hsb_censoring.h5" "$TMP/rerr" && grep -q "id='unreadable'" "$TMP/cmp.html" && pass \
  || fail "--compare with a damaged file: exit $rc: $(cat "$TMP/rerr")"

# --- a run stopped before its first replicate: "no replicate done", no crash, exit 0
"$DPMU" run configs/smoke/fig1_hsb_posterior.yaml --out "$TMP/empty/fig1_hsb_posterior.h5" --replicates 100000 \
  --max-time 1e-6 --quiet >/dev/null 2>"$TMP/err"
if "$PY" -c "
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
assert not f.attrs['complete'] and int(np.asarray(f['cell_status']['n_done']).sum()) == 0
" "$TMP/empty/fig1_hsb_posterior.h5"; then pass; else fail "precondition: no run without any replicate done: $(cat "$TMP/err")"; fi
cp "$TMP/good/fig6_hsb_censoring.h5" "$TMP/empty/"
report "$TMP/empty" --out "$TMP/empty.html"
[ $rc -eq 0 ] && pass || fail "a run with no replicate done: exit $rc: $(tail -5 "$TMP/rerr")"
no_traceback "a run with no replicate done"
grep -q "no replicate done" "$TMP/empty.html" && grep -q "fig1_hsb_posterior.h5: no replicate done" "$TMP/rerr" && pass \
  || fail "the empty run is not shown as 'no replicate done': $(cat "$TMP/rerr")"
if "$PY" - "$TMP/empty/claims.json" <<'PYEOF'
import json, sys
d = {e["id"]: e for e in json.load(open(sys.argv[1]))["claims"]}
e = d["PB-4.4-fig1-shrinkage"]
assert e["verdict"] == "not run" and "no replicate done" in e["reason"], e
assert d["PB-B-fig6-shrinkage"]["verdict"] != "not run"
PYEOF
then pass; else fail "claims.json: the empty run's claims are 'not run' because no replicate was done"; fi
# the empty run alone
mkdir -p "$TMP/empty_only" && cp "$TMP/empty/fig1_hsb_posterior.h5" "$TMP/empty_only/"
report "$TMP/empty_only"
[ $rc -eq 0 ] && [ -s "$TMP/empty_only/report.html" ] && pass || fail "a folder with only an empty run: exit $rc: $(tail -5 "$TMP/rerr")"

# --- outputs that cannot be written: exit 2 before any work (claims.json not written), naming the option
rm -f "$TMP/good/claims.json"
report "$TMP/good" --out "$TMP/missing-folder/report.html"
[ $rc -eq 2 ] && grep -q -- "--out .*missing-folder.* does not exist" "$TMP/rerr" && [ ! -e "$TMP/good/claims.json" ] && pass \
  || fail "--out in a missing folder: exit $rc, claims.json $( [ -e "$TMP/good/claims.json" ] && echo written || echo absent): $(cat "$TMP/rerr")"
no_traceback "--out in a missing folder"
report "$TMP/good" --out "$TMP/mixed"
[ $rc -eq 2 ] && grep -q -- "--out .*is a folder" "$TMP/rerr" && [ ! -e "$TMP/good/claims.json" ] && pass \
  || fail "--out naming a folder: exit $rc: $(cat "$TMP/rerr")"
report "$TMP/good" --out "$TMP/g.html" --figures "$TMP/mixed/sub/notes.h5/figs"
[ $rc -eq 2 ] && grep -q -- "--figures .*is not a folder" "$TMP/rerr" && [ ! -e "$TMP/good/claims.json" ] && pass \
  || fail "--figures under a file: exit $rc: $(cat "$TMP/rerr")"
report --compare "$TMP/good" "$TMP/good" --out "$TMP/missing-folder/c.html"
[ $rc -eq 2 ] && grep -q -- "--out" "$TMP/rerr" && pass || fail "--compare --out in a missing folder: exit $rc: $(cat "$TMP/rerr")"
# RESULTS_DIR where claims.json cannot be written (a folder in its place; root may write anywhere else)
mkdir -p "$TMP/ro" && cp "$TMP/good/fig1_hsb_posterior.h5" "$TMP/ro/" && mkdir "$TMP/ro/claims.json"
report "$TMP/ro" --out "$TMP/ro.html"
[ $rc -eq 2 ] && grep -q "claims.json: is a folder" "$TMP/rerr" && [ ! -e "$TMP/ro.html" ] && pass \
  || fail "RESULTS_DIR/claims.json not writable: exit $rc: $(cat "$TMP/rerr")"

finish report_files_test
