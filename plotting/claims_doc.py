"""Fill the generated passages of a Markdown document from a claims.json, or check that they match.

Usage:
  /usr/bin/python3 plotting/claims_doc.py [--claims docs/claims.json] [--check] FILE.md ...

Every count and verdict a document quotes from the claims table is written between markers, so it
is computed from claims.json rather than copied by hand:

  <!-- claims ID | VARIANT | TEMPLATE -->text<!-- /claims -->

(Inside a Markdown table row write the separators as \\| so the row keeps its cells.) ID is a claim
id of plotting/claims.py; VARIANT selects the entry with that variant label ("" for
the entry without one), or "*" sums the counts over every variant of the claim; TEMPLATE is the
text to write, with fields in braces:

  {supported} {contradicted} {unresolved} {n}   counts of settings (summed over variants for "*")
  {verdict}                                      the entry's verdict ("*": every variant's, joined)
  {label}                                        the verdict printed with its counts, e.g. "partly (3 of
                                                 24 contradicted, 21 supported)"
  {setting}                                      paper | variant | reconstruction | own
  {replicates}                                   replicates per cell of the results used (joined)
  {config_replicates}                            the config's replicates per cell
  {estimate@SETTING} {se@SETTING}                one setting's estimate and MC SE (4 significant
                                                 digits for the estimate, 1 for the SE), or any other
                                                 number of the setting; {abs_NAME@SETTING} its absolute
                                                 value; a format after a colon: {NAME@SETTING:.0f}

A block marker writes a whole paragraph: ``<!-- claims-source -->…<!-- /claims-source -->`` says
which claims.json the passages come from, under which rule, and which results were reduced (their
numbers await a full-size re-run); ``<!-- claims-headline -->…<!-- /claims-headline -->`` writes
the headline counts, on the rows of the paper's setting only.

``--check`` writes nothing and exits 1 if a passage differs from what the claims.json gives (the
test tests/python/test_claims_doc.py runs it on docs/reproduction.md with docs/claims.json);
without it the files are rewritten in place. Exit 2: a marker names a claim, variant or setting
that claims.json does not have.
"""
import argparse
import json
import re
import sys

HEADLINE = re.compile(r"<!-- claims-headline -->(?P<text>.*?)<!-- /claims-headline -->", re.S)
INLINE = re.compile(r"<!-- claims (?P<spec>[^>]*?) -->(?P<text>.*?)<!-- /claims -->", re.S)
SOURCE = re.compile(r"<!-- claims-source -->(?P<text>.*?)<!-- /claims-source -->", re.S)
ANY = re.compile(r"<!-- claims .*?<!-- /claims -->|<!-- claims-source -->.*?<!-- /claims-source -->|"
                 r"<!-- claims-headline -->.*?<!-- /claims-headline -->", re.S)
FIELD = re.compile(r"\{(?P<name>[A-Za-z_0-9]+)(?:@(?P<setting>[^}]*?))?(?::(?P<fmt>[.0-9]*[fge]))?\}")


class MarkerError(Exception):
    pass


def _entries(claims, cid, variant):
    es = [e for e in claims if e["id"] == cid]
    if not es:
        raise MarkerError(f"no claim {cid!r} in the claims file")
    if variant == "*":
        return es
    sel = [e for e in es if e["variant"] == variant]
    if not sel:
        raise MarkerError(f"claim {cid}: no variant {variant!r} (variants: {[e['variant'] for e in es]})")
    return sel


def _join(values):
    values = list(dict.fromkeys(str(v) for v in values))
    return ", ".join(values)


def _setting(entries, label):
    for e in entries:
        for s in e.get("settings", []):
            if s["setting"] == label:
                return s
    raise MarkerError(f"claim {entries[0]['id']}: no setting {label!r}")


def render(spec, claims):
    """The text of one inline marker: spec = 'ID | VARIANT | TEMPLATE'."""
    parts = [p.strip() for p in re.split(r"\\?\|", spec, maxsplit=2)]
    if len(parts) != 3:
        raise MarkerError(f"marker {spec!r}: want 'ID | VARIANT | TEMPLATE'")
    cid, variant, template = parts
    es = _entries(claims, cid, variant)

    def field(m):
        name, setting = m.group("name"), m.group("setting")
        if setting is not None:
            s = _setting(es, setting)
            key = name[4:] if name.startswith("abs_") else name
            if not isinstance(s.get(key), (int, float)):
                raise MarkerError(f"claim {es[0]['id']}, setting {setting!r}: no number {key!r}")
            v = abs(s[key]) if name.startswith("abs_") else s[key]
            return format(v, m.group("fmt") or (".1g" if key == "se" else ".4g"))
        if name in ("supported", "contradicted", "unresolved"):
            return str(sum(e.get("counts", {}).get(name, 0) for e in es))
        if name == "n":
            return str(sum(e.get("n_settings", 0) for e in es))
        if name == "verdict":
            return _join(e["verdict"] for e in es)
        if name == "label":
            return _join(e.get("label") or e["verdict"] for e in es)
        if name == "setting":
            return _join(e.get("setting", "paper") for e in es)
        if name == "replicates":
            return _join(f["replicates"] for e in es for f in e.get("files", []))
        if name == "config_replicates":
            return _join(f["config_replicates"] for e in es for f in e.get("files", []))
        raise MarkerError(f"unknown field {{{name}}}")

    return FIELD.sub(field, template)


def source_text(doc, path):
    """The paragraph of a claims-source marker: which file, which rule, which runs were reduced."""
    rule = doc.get("rule")
    rule_txt = (f"the rule of `{rule}` (Holm's family-wise control, TOST with reading margins)" if rule else
                "the previous rule (each setting at ± 1.96 MC SE, no multiplicity control; vocabulary holds / "
                "partly / does not hold / unresolved / not applicable)")
    files = {}
    for e in doc["claims"]:
        for f in e.get("files", []):
            files[f["config"]] = f
    reduced = sorted(c for c, f in files.items() if f["config_replicates"] not in (None, f["replicates"]))
    full = sorted(c for c in files if c not in reduced)
    txt = (f"Counts and verdicts quoted from the claims table below are generated from `{path}` by "
           f"`plotting/claims_doc.py` ({len(doc['claims'])} entries, computed with {rule_txt}).")
    if full:
        txt += " Full-size results behind it: " + ", ".join(
            f"`{c}` ({files[c]['replicates']})" for c in full) + "."
    stored = sorted({e["evidence_from"].split(":")[0] for e in doc["claims"] if e.get("evidence_from")})
    rejudged = sorted({f["config"] for e in doc["claims"] if e.get("evidence_from") for f in e.get("files", [])})
    if rejudged:
        txt += (" Re-judged under the current rule from the per-setting estimates stored in " +
                ", ".join(f"`{x}`" for x in stored) + " (their results files were not re-run): " +
                ", ".join(f"`{c}`" for c in rejudged) + ".")
    if reduced:
        txt += (" **Reduced runs, whose counts await a full-size re-run** (`bash scripts/reproduce.sh`): " +
                ", ".join(f"`{c}` ({files[c]['replicates']} of {files[c]['config_replicates']} replicates)"
                          for c in reduced) + ".")
    return txt


VERDICT_ORDER = ("holds", "holds within MC error", "undecided", "partly", "does not hold", "figure comparison",
                 "not run")


def headline_text(doc):
    """The headline counts: verdicts of the rows on the paper's setting only (variants,
    reconstructions and our own claims counted apart)."""
    rows = [e for e in doc["claims"] if e.get("setting", "paper") == "paper"]
    counts = {}
    for e in rows:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    ids = {e["id"] for e in rows}
    other = {k: sum(e.get("setting") == k for e in doc["claims"]) for k in ("variant", "reconstruction", "own")}
    return (f"On the paper's setting (the documented reading where the paper is ambiguous): {len(rows)} rows of "
            f"{len(ids)} claims — " + ", ".join(f"{v} {counts[v]}" for v in VERDICT_ORDER if v in counts) +
            f"; apart from these, {other['variant']} variant, {other['reconstruction']} reconstruction and "
            f"{other['own']} own-claim rows.")


def fill(text, doc, path):
    """The document with every marker filled; raises MarkerError on a marker claims.json cannot fill."""
    claims = doc["claims"]
    text = INLINE.sub(lambda m: f"<!-- claims {m.group('spec')} -->{render(m.group('spec'), claims)}<!-- /claims -->",
                      text)
    text = HEADLINE.sub(lambda m: f"<!-- claims-headline -->{headline_text(doc)}<!-- /claims-headline -->", text)
    return SOURCE.sub(lambda m: f"<!-- claims-source -->{source_text(doc, path)}<!-- /claims-source -->", text)


def drift(old, new):
    """The passages that differ between two versions of a filled document, as (was, is) pairs."""
    a = [m.group(0) for m in ANY.finditer(old)]
    b = [m.group(0) for m in ANY.finditer(new)]
    return [(x, y) for x, y in zip(a, b) if x != y]


def main(argv=None):
    parser = argparse.ArgumentParser(description="Fill or check the claims.json passages of Markdown files.")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--claims", default="docs/claims.json")
    parser.add_argument("--check", action="store_true", help="exit 1 if a passage differs; write nothing")
    args = parser.parse_args(argv)
    with open(args.claims) as f:
        doc = json.load(f)
    status = 0
    for path in args.files:
        with open(path) as f:
            old = f.read()
        try:
            new = fill(old, doc, args.claims)
        except MarkerError as exc:
            print(f"error: {path}: {exc}", file=sys.stderr)
            return 2
        if new == old:
            continue
        if args.check:
            for was, now in drift(old, new):
                print(f"{path}: drift from {args.claims}:\n  document: {was}\n  computed: {now}", file=sys.stderr)
            status = 1
        else:
            with open(path, "w") as f:
                f.write(new)
            print(f"{path}: {len(drift(old, new))} passages updated from {args.claims}")
    return status


if __name__ == "__main__":
    sys.exit(main())
