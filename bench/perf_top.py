#!/usr/bin/python3
"""Top functions of a `perf record` profile, with the addresses perf cannot name resolved by addr2line.

This machine's perf does not read dpmu's symbol table (it prints bare addresses such as
0x000000000035dc13 for dpmu's own code), so the self-time samples are summed per address and the
addresses are named with `addr2line -f -C -e BINARY`.
Usage: bench/perf_top.py PERF_DATA BINARY [TOP]   (docs/performance.md "Profile of the study")
"""
import collections
import re
import subprocess
import sys


def main():
    data, binary = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-g", "none",
                          "--percent-limit", "0"], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s+([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(4).strip()))
    addresses = sorted({s for _, dso, s in rows if s.startswith("0x")})
    names = {}
    if addresses:
        res = subprocess.run(["addr2line", "-f", "-C", "-e", binary] + addresses, check=True, capture_output=True,
                             text=True).stdout.splitlines()
        for i, a in enumerate(addresses):
            names[a] = res[2 * i]
    totals = collections.Counter()
    for pct, dso, sym in rows:
        name = names.get(sym, sym)
        name = name.replace("(anonymous namespace)", "anon")
        name = re.sub(r"\{lambda\([^)]*\)#\d+\}", "{lambda}", name)
        name = re.sub(r"<[^<>]*(<[^<>]*(<[^<>]*>[^<>]*)*>[^<>]*)*>", "<>", name)  # template arguments
        name = re.sub(r"\(.*", "", name)  # parameter list
        totals[(dso, name[:140])] += pct
    for (dso, name), pct in totals.most_common(top):
        print(f"{pct:6.2f}%  {dso:22s} {name}")


if __name__ == "__main__":
    main()
