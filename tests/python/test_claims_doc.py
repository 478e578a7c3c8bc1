"""plotting/claims_doc.py: the counts and verdicts docs/reproduction.md quotes from the claims table
are generated from docs/claims.json (the test fails on drift), and the generator itself on a
synthetic claims file."""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "plotting"))
import claims_doc as cd  # noqa: E402

SCRIPT = os.path.join(ROOT, "plotting", "claims_doc.py")
DOC = os.path.join(ROOT, "docs", "reproduction.md")
CLAIMS = os.path.join(ROOT, "docs", "claims.json")


def _entry(cid, variant, sup, con, unr, verdict, reps=100, config_reps=100, settings=()):
    return {"id": cid, "variant": variant, "verdict": verdict, "n_settings": sup + con + unr,
            "counts": {"supported": sup, "contradicted": con, "unresolved": unr}, "settings": list(settings),
            "files": [{"config": "configs/x.yaml", "replicates": reps, "config_replicates": config_reps}]}


SYNTH = {"rule": "plotting/verdict_rules.py", "claims": [
    _entry("A", "", 29, 0, 1, "holds within MC error",
           settings=[{"setting": "M=10, ε=8", "estimate": 0.255189, "se": 0.000530959, "distance_in_se": -38.9}]),
    _entry("B", "v1", 3, 1, 0, "partly", reps=1000, config_reps=4000),
    _entry("B", "v2", 5, 0, 0, "holds", reps=1000, config_reps=4000)]}


def test_fill_counts_verdicts_settings_and_sums():
    text = ("x <!-- claims A |  | {supported} of {n} ({verdict}) -->old<!-- /claims --> y "
            "<!-- claims B | * | {supported} of {n}, {contradicted} contradicted -->old<!-- /claims --> "
            "<!-- claims B | v1 | {replicates} (config {config_replicates}) -->old<!-- /claims --> "
            "<!-- claims A |  | {estimate@M=10, ε=8} ± {se@M=10, ε=8} -->old<!-- /claims -->")
    out = cd.fill(text, SYNTH, "synth.json")
    plain = re.sub(r"<!--.*?-->", "", out)
    assert plain == ("x 29 of 30 (holds within MC error) y 8 of 9, 1 contradicted 1000 (config 4000) "
                     "0.2552 ± 0.0005")
    assert cd.fill(out, SYNTH, "synth.json") == out  # idempotent


def test_table_separators_other_numbers_and_formats():
    text = ("| x | <!-- claims A \\|  \\| {abs_distance_in_se@M=10, ε=8:.0f} SE, {estimate@M=10, ε=8:.3f} -->o"
            "<!-- /claims --> |")
    out = cd.fill(text, SYNTH, "synth.json")
    assert re.sub(r"<!--.*?-->", "", out) == "| x | 39 SE, 0.255 |"


def test_source_block_names_reduced_runs():
    out = cd.fill("<!-- claims-source -->old<!-- /claims-source -->", SYNTH, "synth.json")
    assert "synth.json" in out and "configs/x.yaml` (1000 of 4000 replicates)" in out and "await" in out


def test_unknown_claim_variant_or_setting_is_an_error():
    for spec in ("Z |  | {n}", "B | v3 | {n}", "A |  | {estimate@M=2}", "A |  | {nonsense}", "A | {n}"):
        with pytest.raises(cd.MarkerError):
            cd.fill(f"<!-- claims {spec} -->x<!-- /claims -->", SYNTH, "synth.json")


def test_check_fails_on_drift(tmp_path):
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps(SYNTH))
    doc = tmp_path / "doc.md"
    doc.write_text("in <!-- claims A |  | {supported} of {n} -->273 of 288<!-- /claims -->\n")
    run = lambda *a: subprocess.run([sys.executable, SCRIPT, "--claims", str(claims), *a, str(doc)],  # noqa: E731
                                    capture_output=True, text=True)
    r = run("--check")
    assert r.returncode == 1 and "273 of 288" in r.stderr and "29 of 30" in r.stderr
    assert run().returncode == 0 and "29 of 30" in doc.read_text()
    assert run("--check").returncode == 0
    doc.write_text("<!-- claims Z |  | {n} -->x<!-- /claims -->")
    assert run("--check").returncode == 2


def test_reproduction_md_matches_the_stored_claims_json():
    """docs/reproduction.md quotes docs/claims.json: regenerate with
    /usr/bin/python3 plotting/claims_doc.py --claims docs/claims.json docs/reproduction.md"""
    with open(CLAIMS) as f:
        doc = json.load(f)
    with open(DOC) as f:
        text = f.read()
    new = cd.fill(text, doc, "docs/claims.json")
    assert new == text, cd.drift(text, new)
    assert text.count("<!-- claims ") >= 30 and "<!-- claims-source -->" in text


COUNT = re.compile(r"(?<![\d./])\d+ ?(?:of|/) ?\d+(?![\d/]|\.\d)")
CLAIM_ID = re.compile(r"`(?:PB|LCSSF)-[0-9A-Za-z.\-*]+`")


def test_no_hand_copied_count_next_to_a_claim_id():
    """A paragraph of docs/reproduction.md that cites a claim id quotes its counts through markers:
    no bare 'N of M' or 'N/M' outside them (other numbers — medians, rates — are read from the results
    files by the scripts the page names)."""
    with open(DOC) as f:
        text = f.read()
    stripped = cd.ANY.sub("", text)
    bad = []
    for para in re.split(r"\n\s*\n|\n(?= *(?:\d+\.|\*) )", stripped):
        if CLAIM_ID.search(para):
            bad += [(m.group(0), para[:80]) for m in COUNT.finditer(para)]
    assert not bad, bad


def test_claims_md_table_matches_the_stored_claims_json():
    """The tables of docs/claims.md and docs/claims.json are one computation: every entry's label
    (its verdict with the counts) appears in its row, table by table (the paper's setting, variants
    and reconstructions, our own claims), in the order of claims.json."""
    import claims as cl
    with open(CLAIMS) as f:
        entries = json.load(f)["claims"]
    with open(os.path.join(ROOT, "docs", "claims.md")) as f:
        text = f.read()
    rows = []
    for line in text[re.search(r"^## Claims on the paper", text, re.M).start():].splitlines():
        if line.startswith("| **"):
            cells = [x.strip() for x in re.split(r"(?<!\\)\|", line)]
            rows.append((re.match(r"\*\*([^*]+)\*\*", cells[1]).group(1), cells[5]))
    want = [(e["id"], cl.summary_line(e).replace("|", "/")) for t in ("paper", "variant", "own")
            for e in entries if cl._table_of(e.get("setting", "paper")) == t]
    assert rows == want


def test_every_row_has_a_setting_and_honest_labels():
    """On docs/claims.json: every row has a setting; no row is 'holds' or
    'holds within MC error' with zero supported settings; every 'partly' carries k of n; no row with
    more contradicted than supported settings is 'partly'; the headline counts use paper rows."""
    with open(CLAIMS) as f:
        doc = json.load(f)
    for e in doc["claims"]:
        assert e.get("setting") in ("paper", "variant", "reconstruction", "own"), e["id"]
        c = e.get("counts") or {}
        if e["verdict"] in ("holds", "holds within MC error"):
            assert c.get("supported", 0) > 0, (e["id"], e["variant"])
        if e["verdict"] == "partly":
            assert re.search(r"partly \(\d+ of \d+ contradicted", e["label"]), e["label"]
            assert c["contradicted"] <= c["supported"], (e["id"], e["variant"])
    head = doc["headline"]["paper"]
    assert head["rows"] == sum(e["setting"] == "paper" for e in doc["claims"])
    assert sum(head["counts"].values()) == head["rows"]


def test_headline_block_counts_paper_rows_only():
    synth = {"claims": [dict(_entry("A", "", 2, 0, 0, "holds"), setting="paper"),
                        dict(_entry("A", "v", 0, 2, 0, "does not hold"), setting="variant"),
                        dict(_entry("B", "", 1, 1, 0, "partly"), setting="paper"),
                        dict(_entry("C", "", 1, 0, 0, "holds"), setting="own")]}
    text = cd.headline_text(synth)
    assert "2 rows of 2 claims" in text and "holds 1" in text and "partly 1" in text
    assert "does not hold" not in text and "1 variant" in text and "1 own-claim" in text


def test_findings_block_is_the_declared_list():
    """docs/reproduction.md's "Findings against the papers" is written by plotting/findings.py (five
    findings at least, each with its confirming computation)."""
    import findings
    assert len(findings.FINDINGS) >= 5
    assert all(f["confirmation"] and f["paper"] and f["ours"] and f["conclusion"] for f in findings.FINDINGS)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "plotting", "findings.py"), "--check", DOC],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_readme_headline_matches_the_stored_claims_json():
    """The README's headline counts (paper's setting only) are generated from docs/claims.json."""
    with open(CLAIMS) as f:
        doc = json.load(f)
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    assert "<!-- claims-headline -->" in text
    assert cd.fill(text, doc, "docs/claims.json") == text
