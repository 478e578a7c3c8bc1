"""Rendering of the claims table: the printed verdict of an entry, the generated summary paragraph,
the rule text and the Markdown tables by setting (plotting/claims.py writes claims.md with them;
plotting/report.py renders the same lines as HTML)."""
import verdict_rules as vr
from claims_core import CLAIMS
from claims_pb_cps import CLOSE_SHARE
from claims_pb_ssp import IDENTICAL_SHARE, PMSE_IDENTICAL_DECADES
from claims_lcssf import LEI_MARGIN


def summary_line(e):
    """The verdict as printed: its label with the counts that justify it; a claim not run names the
    command that runs it."""
    if e["verdict"] == "not run":
        return f"not run (run: {e.get('command') or 'bash scripts/reproduce.sh'})"
    if e["verdict"] == "figure comparison":
        return e.get("label") or "figure comparison, no verdict"
    return vr.label(e["verdict"], e["counts"], e["n_settings"])


def evidence_text(e, k=3):
    """A few settings as text: the contradicted and unresolved first, then supported ones."""
    order = {"contradicted": 0, "unresolved": 1, "supported": 2}
    rows = sorted(e["settings"], key=lambda s: order[s.get("outcome", "unresolved")])[:k]
    parts = []
    for s in rows:
        est = s["estimate"]
        se = s["se"]
        txt = f"{s['setting']}: {est:.4g}" if est is not None else f"{s['setting']}: NaN"
        if se:
            txt += f" ± {se:.2g}"
        parts.append(f"{txt} [{s.get('outcome', 'unresolved')}]")
    return "; ".join(parts)


def rule_markdown():
    """The verdict rule, the quantifiers and every claim's margins as Markdown (generated from
    verdict_rules.py and the declarations, so docs/claims.md cannot drift from the code)."""
    lines = ["## The verdict rule", "",
             f"One rule for every claim, `plotting/verdict_rules.py`, at α = {vr.ALPHA:g}:", "",
             "* **Per setting** the claim is an inequality (θ > b, θ < b: one-sided z-test), an interval "
             "(lo ≤ θ ≤ hi) or an approximate equality (θ ≈ the paper's number ± its margin). *Supported*: the "
             "test of 'the claim is false here' rejects (for an interval, the two one-sided tests, TOST, of "
             "Schuirmann 1987: the 90% interval lies inside); *contradicted*: the test of 'the claim is true "
             "here' rejects after Holm's (1979) step-down correction over the settings of the group; "
             "*unresolved*: neither. Exact numbers (no Monte Carlo error) are decided exactly; an exact tie "
             "decides nothing.",
             "* **Across settings** (the grid the sentence speaks of): Holm controls the family-wise error of "
             "the contradictions (the chance that a claim true everywhere shows any contradicted setting is at "
             "most α, whatever the dependence between settings). Holm rather than Benjamini–Hochberg: a "
             "universal claim is contradicted by one contradicted setting, so the error to bound is 'at least one "
             "false contradiction', the family-wise error, which BH does not bound. Support of a universal needs "
             "every setting supported at level α (intersection–union, Berger 1982).",
             "* **Quantifiers as stated**: 'all' (and plain statements) as above; 'most', 'in most cases', "
             "'typically', 'tend to' = more than half of the settings, decided by one-sided Clopper–Pearson "
             "bounds of the fraction of settings where the claim is true (lower bound from the supported count, "
             "upper from the not-contradicted count) against 1/2; 'especially when X' = one comparison of the "
             "mean over the settings in X with the mean over the others (not a universal); 'can', 'some', "
             "'a proper choice … leads to' = existential: one setting supported after Holm's correction of the "
             "support p-values suffices, every setting contradicted refutes. A best value over a grid (the best "
             "φ) or a share of a grid reaching a bound is tested per grid point with the selection paid for "
             "(Bonferroni over the grid); a structural exact value (an atom, a rejection that is impossible) is "
             "judged as exact.",
             "* **Verdicts** (frozen in `verdict_rules.LABELS`, printed with their counts):"] + \
            [f"  * *{v}*: {doc}." for v, doc in vr.LABELS.items()] + [
             "* **Settings**: every row says whether it is on the paper's `setting` (where the paper is ambiguous, "
             "the documented reading, named in the row), a `variant` of ours, a `reconstruction` (another "
             "reading of what the paper leaves unsaid) or our `own` claim; headline counts use the paper's "
             "setting only, variants and reconstructions have their own table.",
             "* **Margins** for '≈', 'close', 'similar', 'best' are derived from how precisely the paper's "
             "number can be read or what the word means on the figure, one margin per word class:",
             "",
             "  | word class | margin | why |",
             "  |---|---|---|",
             "  | ≈ a number read off a figure | tick spacing / 20 (probability axes, ticks 0.25 apart: ± 0.0125) | "
             "the precision a figure can be read to: a tenth of a tick, half of it either way |",
             "  | ≈ a number printed in the text | half a unit of the last printed digit | the number's own "
             "precision |",
             f"  | close (Figure 5) | {CLOSE_SHARE:g} × the central 98% range of the panel's averaged histogram | "
             "relative to the spread the figure shows, not to its ticks |",
             f"  | almost identical (two figures) | {IDENTICAL_SHARE:g} of the span of the axis shown: ± 0.05 on a "
             f"probability axis, ± {PMSE_IDENTICAL_DECADES:g} decade on the 8-decade PMSE axis | what the eye can tell "
             "apart between two figures |",
             f"  | small (a drop in a proportion) | 0.1, below 0 by at most {LEI_MARGIN:g} | ours |",
             "  | same scale (Figure 5's axes) | a factor 2 | a figure comparison, shown without a verdict |",
             "",
             "  Where the paper gives no number to read (power, 'wide range') the margin is ours and says so.",
             f"* **Measured family-wise false-alarm rate** of the whole rule: {vr.MEASURED_FALSE_ALARM_TEXT} "
             "(tests/python/test_verdict_rules.py).", "",
             "### Margins and quantifiers per claim", "",
             "| claim | quantifier | margin and its derivation |", "|---|---|---|"]
    seen = set()
    for cl in CLAIMS:
        if cl.id in seen:
            continue
        seen.add(cl.id)
        lines.append(f"| {cl.id} | {cl.quantifier} | {(cl.margin or '—').replace('|', '/')} |")
    return "\n".join(lines) + "\n"


SETTING_TITLES = {
    "paper": "Claims on the paper's setting",
    "variant": "Variants and reconstructions (sensitivity analyses: our changes, and other readings of what the "
               "paper leaves unsaid)",
    "own": "Our own claims",
}
REPRODUCE = "bash scripts/reproduce.sh"


def _table_of(setting):
    return "variant" if setting in ("variant", "reconstruction") else setting


def summary_lines(entries):
    """The top paragraph of the report and of claims.md, generated from the entries: what the run
    covers, how many claims are judged on the paper's setting and with which verdicts, what is red on
    the paper's setting and why (one line each), and the command that fills the rest. Plain text with
    `code` in backticks."""
    files = {}
    for e in entries:
        for f in e.get("files", []):
            files[f["config"]] = f
    ids = list(dict.fromkeys(e["id"] for e in entries))
    judged = [e for e in entries if e["verdict"] != "not run"]
    judged_ids = list(dict.fromkeys(e["id"] for e in judged))
    missing = [i for i in ids if i not in judged_ids]
    paper = [e for e in judged if e.get("setting") == "paper"]
    counts = {}
    for e in paper:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    order = [v for v in vr.VERDICTS if v in counts]
    lines = [f"This run covers {len(files)} results file{'s' if len(files) != 1 else ''} "
             f"({', '.join(f'`{c}`' for c in sorted(files)) or 'none'}) and judges {len(judged_ids)} of the "
             f"{len(ids)} claims ({len(judged)} rows)."]
    if paper:
        lines.append(f"On the paper's setting (or its documented reading where the paper is ambiguous): "
                     f"{len(paper)} rows of {len(dict.fromkeys(e['id'] for e in paper))} claims — "
                     + ", ".join(f"{v}: {counts[v]}" for v in order) + ". "
                     f"Variants and reconstructions: {sum(_table_of(e.get('setting')) == 'variant' for e in judged)} rows "
                     f"(their own table); our own claims: {sum(e.get('setting') == 'own' for e in judged)} rows.")
    red = [e for e in paper if e["verdict"] == "does not hold"]
    for e in red:
        worst = next((x for x in e["settings"] if x.get("outcome") == "contradicted"), None)
        ev = ""
        if worst is not None and worst.get("estimate") is not None:
            ev = f"; e.g. {worst['setting']}: {worst['estimate']:.4g} against {worst.get('test', '')}"
        lines.append(f"Red: `{e['id']}`" + (f" ({e['variant']})" if e["variant"] else "") +
                     f" — {summary_line(e)}{ev}.")
    if missing:
        lines.append(f"Not judged by this run: {len(missing)} claim{'s' if len(missing) != 1 else ''} whose studies it "
                     "did not run; "
                     f"`{REPRODUCE}` runs every study behind a claim (about 22 min on 2 free cores once `dpmu` is "
                     f"built; docs/performance.md) and fills them: " + ", ".join(f"`{i}`" for i in missing) + ".")
    return lines


def markdown(entries, results_dir=None):
    """The claims tables in Markdown (the paper's setting; variants and reconstructions; our own
    claims), preceded by the generated summary and the results files they were computed from."""
    files = {}
    for e in entries:
        for f in e["files"]:
            files[f["file"]] = f
    lines = ["# Claims of both papers, checked on dpmu results", "",
             "Generated by `/usr/bin/python3 plotting/claims.py "
             f"{results_dir or 'RESULTS_DIR'}` — do not edit; the verdict rule (one-sided tests, TOST with "
             "reading margins, Holm's family-wise control at α = 0.05): plotting/verdict_rules.py and the head of "
             "docs/claims.md; docs/decisions.md (\"One verdict rule\"). All settings with their numbers and "
             "p-values are in claims.json.", "",
             "## Summary", ""] + [f"* {x}" for x in summary_lines(entries)] + [
             "", rule_markdown(), "## Results files", "",
             "Replicates per cell; the config's number where a run was reduced:", ""]
    for f in files.values():
        red = "" if f["replicates"] == f["config_replicates"] else f" (reduced; config: {f['config_replicates']})"
        lines.append(f"* `{f['file']}` from `{f['config']}`: {f['replicates']}{red}")
    stored = sorted({e["evidence_from"] for e in entries if e.get("evidence_from")})
    if stored:
        lines += ["", "Re-judged from stored evidence (results files not in this folder):", ""] + \
            [f"* {x}" for x in stored]
    for table in ("paper", "variant", "own"):
        rows = [e for e in entries if _table_of(e.get("setting", "paper")) == table]
        if not rows:
            continue
        lines += ["", f"## {SETTING_TITLES[table]}", "",
                  "| claim | figure | variant | setting (reading) | verdict | evidence (first settings: estimate ± MC SE) |",
                  "|---|---|---|---|---|---|"]
        for e in rows:
            words = e["claim"].replace("|", "\\|")
            setting = e.get("setting", "paper") + (f": {e['reading']}" if e.get("reading") else "")
            lines.append(f"| **{e['id']}** {words} | {e['figure']} | {e['variant'].replace('|', '/')} | "
                         f"{setting.replace('|', '/')} | {summary_line(e)} | "
                         f"{(evidence_text(e) or e.get('reason', '')).replace('|', '/')} |")
    return "\n".join(lines) + "\n"
