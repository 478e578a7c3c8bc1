#!/usr/bin/env python3
"""Black-box privacy audit of a dpmu release command, from outside the binary.

Runs `DPMU <command> --data D --seed i` and `... --data D' --seed j` (independent seeds, so the
noise is simulation noise with the release's law) for N seeds each, extracts one printed field,
and bounds epsilon from below like `dpmu audit`: the event is chosen on the first half of the
samples, the bound (two one-sided Clopper-Pearson limits at 97.5 % each) on the second half.
It is independent of the C++ auditor and works on any version of dpmu, so it measures the old
release paths too (docs/privacy.md, "Audit results").

Usage:
  black_box_audit.py --dpmu BIN --data hsb2.csv --row 0 --set female=1e6,write=-1e6 \
      --field privacy.clamped_entries -N 400 -- bma --response read --predictors female,write ...
Fields: a dotted path into the JSON; a list, list of lists or object is flattened into a vector.
Needs numpy and scipy (Debian: python3-numpy, python3-scipy).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.stats import beta


def flatten(v):
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in flatten(v[k])]
    if isinstance(v, list):
        return [x for e in v for x in flatten(e)]
    if isinstance(v, bool):
        return [float(v)]
    return [float(v)]


def field(d, path):
    for part in path.split("."):
        d = d[part]
    return flatten(d)


def releases(dpmu, args, data, path, seeds):
    out = []
    for s in seeds:
        r = subprocess.run([dpmu] + args + ["--data", data, "--seed", str(s)], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("dpmu failed: " + r.stderr)
        out.append(field(json.loads(r.stdout), path))
    return np.array(out)


def cp_lower(k, n, a):
    return 0.0 if k == 0 else beta.ppf(a, k, n - k + 1)


def cp_upper(k, n, a):
    return 1.0 if k == n else beta.ppf(1 - a, k + 1, n - k)


def bound(k1, k2, n, a):
    p, q = cp_lower(k1, n, a), cp_upper(k2, n, a)
    return max(0.0, math.log(p / q)) if p > 0 else 0.0


def audit(a, b, events=50, confidence=0.95):
    h = len(a) // 2
    med_a, med_b = np.median(a[:h], axis=0), np.median(b[:h], axis=0)
    score = lambda x: np.abs(x - med_b).sum(axis=1) - np.abs(x - med_a).sum(axis=1)
    sa, sb = score(a), score(b)
    cand = np.unique(np.concatenate([sa[:h], sb[:h]]))
    cand = cand[np.linspace(0, len(cand) - 1, min(events, len(cand))).astype(int)]
    al = (1 - confidence) / 2
    best, best_b = None, -1
    for t in cand:
        for upper in (True, False):
            for rev in (False, True):
                ev = (lambda s: s > t) if upper else (lambda s: s <= t)
                k1, k2 = int(ev(sa[:h]).sum()), int(ev(sb[:h]).sum())
                if rev:
                    k1, k2 = k2, k1
                bb = bound(k1, k2, h, al)
                if bb > best_b:
                    best_b, best = bb, (t, upper, rev)
    t, upper, rev = best
    ev = (lambda s: s > t) if upper else (lambda s: s <= t)
    n2 = len(a) - h
    k1, k2 = int(ev(sa[h:]).sum()), int(ev(sb[h:]).sum())
    if rev:
        k1, k2 = k2, k1
    return bound(k1, k2, n2, al), k1 / n2, k2 / n2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dpmu", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--row", type=int, default=0, help="data row (0-based) to replace")
    ap.add_argument("--set", required=True, help="col=value,... for the replaced row")
    ap.add_argument("--field", required=True)
    ap.add_argument("-N", type=int, default=400, help="releases per data set")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    o = ap.parse_args()
    args = [x for x in o.command if x != "--"]
    rows = list(csv.reader(open(o.data)))
    head = rows[0]
    for kv in o.set.split(","):
        k, v = kv.split("=")
        rows[1 + o.row][head.index(k)] = v
    fd, neighbour = tempfile.mkstemp(suffix=".csv")
    with os.fdopen(fd, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    a = releases(o.dpmu, args, o.data, o.field, range(1, o.N + 1))
    b = releases(o.dpmu, args, neighbour, o.field, range(10**6, 10**6 + o.N))
    os.unlink(neighbour)
    lb, p, q = audit(a, b)
    print(json.dumps({"field": o.field, "N": o.N, "epsilon_lower_bound": lb, "p": p, "q": q}))


if __name__ == "__main__":
    main()
