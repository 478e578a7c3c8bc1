#!/usr/bin/env python3
"""Regenerate (or, with --check, verify) the experiment tables of docs/configs.md.

Each experiment section of docs/configs.md holds a block
    <!-- BEGIN dpmu describe NAME --> ... <!-- END dpmu describe NAME -->
whose contents are exactly `dpmu describe NAME` (Markdown). Every registered experiment must have
such a block. Usage: update-configs-doc.py DPMU [--check] [DOC]; exit 1 on drift with --check.
"""
import re
import subprocess
import sys
from pathlib import Path


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv[1:]
    if not args:
        print("usage: update-configs-doc.py DPMU [--check] [DOC]", file=sys.stderr)
        return 2
    dpmu = args[0]
    doc = Path(args[1]) if len(args) > 1 else Path(__file__).resolve().parent.parent / "docs" / "configs.md"
    described = subprocess.run([dpmu, "describe", "--format", "json"], check=True, capture_output=True, text=True)
    import json

    names = [e["experiment"] for e in json.loads(described.stdout)]
    text = doc.read_text(encoding="utf-8")
    new = text
    problems = []
    for name in names:
        pattern = re.compile(
            r"(<!-- BEGIN dpmu describe " + re.escape(name) + r" -->\n)(.*?)(<!-- END dpmu describe " + re.escape(name) + r" -->)",
            re.S,
        )
        if not pattern.search(new):
            problems.append(f"{doc}: no generated block for experiment '{name}' (add a section with "
                            f"'<!-- BEGIN dpmu describe {name} -->' and '<!-- END dpmu describe {name} -->')")
            continue
        table = subprocess.run([dpmu, "describe", name], check=True, capture_output=True, text=True).stdout
        new = pattern.sub(lambda m: m.group(1) + table + m.group(3), new)
    for stale in re.findall(r"<!-- BEGIN dpmu describe (\S+) -->", new):
        if stale not in names:
            problems.append(f"{doc}: block for '{stale}', which is not a registered experiment")
    if check:
        if new != text:
            problems.append(f"{doc}: experiment tables differ from `dpmu describe`; run "
                            f"/usr/bin/python3 scripts/update-configs-doc.py build/engine/dpmu")
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    for p in problems:
        print(p, file=sys.stderr)
    if new != text:
        doc.write_text(new, encoding="utf-8")
        print(f"updated {doc}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
