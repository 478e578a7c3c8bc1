"""The claims of Peña & Barrientos (2024, JMLR 25; "PB") and Lei et al. (2018; "LCSSF") as
computed checks on dpmu results files.

Usage: /usr/bin/python3 plotting/claims.py RESULTS_DIR [--json claims.json] [--markdown claims.md]
                                          [--evidence docs/claims.json]

The declarations live beside the paper's sentences, one module per paper section:
claims_pb_hsb.py (PB §4 and App. B), claims_pb_ssp.py (PB §5.2.1, §5.3, App. C), claims_pb_cps.py
(PB §5.1, §5.2.2), claims_lcssf.py (LCSSF §5), claims_own.py (ours); their vocabulary (statistics
with Monte Carlo error, the per-setting tests, Group, Claim, the registry, the settings, the
accessors) is claims_core.py, the rule is verdict_rules.py, the rendering claims_render.py. This
file finds the results files, evaluates every declaration and writes claims.json and claims.md.

Every entry of CLAIMS holds the paper's words, the figure, the quantity, the test over the whole
grid of settings the sentence speaks of (one sentence a referee can check: ``test``), the margins
that turn "≈", "close", "similar", "best" into intervals and where they come from (``margin``), and
the quantifier as stated ("all", "most", "tend to"; "especially" is a comparison of groups). For
each setting the test computes an estimate with its Monte Carlo standard error (from the
per-replicate values in ``/replicates``: MC SE of a mean, bootstrap SE of a quantile, spread,
correlation or fraction; paired within a cell where the variants share their data sets) and the
p-values of the claim and of its negation at that setting.

The verdict is computed by plotting/verdict_rules.py, one rule for every claim (its docstring has
the statistics and their sources; docs/claims.md the margins and the measured false-alarm rate):
one-sided tests for inequalities, TOST equivalence tests for intervals, Holm's family-wise control
of contradicted settings at α = 0.05, Clopper–Pearson bounds for majority quantifiers, Holm on
support for existential ones. The verdict labels and their meanings are frozen in
``verdict_rules.LABELS`` (holds, holds within MC error, undecided, partly, does not hold, figure
comparison, not run) and printed with their counts. Every row carries its ``setting`` (paper |
variant | reconstruction | own, with the ``reading`` where the paper is ambiguous).

``--evidence docs/claims.json`` re-judges, under the current rule, the stored per-setting estimates
of the claims whose results files are not under RESULTS_DIR (re-tested by the claim's entry in
RETESTS where its test changed since); such rows say so in ``evidence_from``.

Results files are found anywhere under RESULTS_DIR and identified by the config they were run
from (the ``config_source`` attribute; smoke configs have the same names), so a claim reads e.g.
the results of ``configs/fig7_hsb_lr_censoring.yaml`` wherever they were written.
"""
import argparse
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpmu_h5 import DamagedFile, Results  # noqa: E402
import verdict_rules as vr  # noqa: E402

from claims_core import *  # noqa: F401,F403,E402  (re-exported: the vocabulary of the declarations)
from claims_core import _config_of, _fmt, _num, _p, _sq  # noqa: F401,E402
# The declarations, one module per paper section (importing registers their claims in CLAIMS, in this order)
from claims_pb_hsb import *  # noqa: F401,F403,E402
from claims_pb_ssp import *  # noqa: F401,F403,E402
from claims_pb_ssp import _ssp  # noqa: F401,E402
from claims_pb_cps import *  # noqa: F401,F403,E402
from claims_lcssf import *  # noqa: F401,F403,E402
from claims_own import *  # noqa: F401,F403,E402
from claims_render import *  # noqa: F401,F403,E402
from claims_render import _table_of  # noqa: F401,E402


# ----------------------------------------------------------------------------------------------
# Results files
# ----------------------------------------------------------------------------------------------

class Study:
    """One results file: the Results reader plus per-replicate values (read on demand)."""

    def __init__(self, path):
        self.path = path
        self.res = Results(path)
        with h5py.File(path, "r") as f:
            src = f.attrs.get("config_source", "")
            self.config_source = src.decode() if isinstance(src, bytes) else str(src)
            self.config_yaml = _text(f.attrs.get("config_yaml", ""))
        self.stem = os.path.splitext(os.path.basename(self.config_source))[0] or \
            os.path.splitext(os.path.basename(path))[0]
        self._replicates = {}
        self._boot = {}

    def boot(self, metric, c, stat, k=None):
        """(estimate, bootstrap sample) of a named statistic ('median', 'iqr', 'sd') of the
        replicates of metric in cell c (component k of a vector metric); cached."""
        key = (metric, c, stat, k)
        if key not in self._boot:
            x = self.replicates(metric)[c]
            self._boot[key] = bootstrap_sample(x if k is None else x[:, k], STATS[stat])
        return self._boot[key]

    def replicates(self, metric):
        """Per-replicate values of a metric: float array [C, R] (scalar) or [C, R, K] (vector)."""
        if metric not in self._replicates:
            with h5py.File(self.path, "r") as f:
                self._replicates[metric] = np.asarray(f["replicates"][metric][()], dtype=float)
        return self._replicates[metric]

    def config_replicates(self):
        """Replicates per cell written in the config (None if not found)."""
        for line in self.config_yaml.splitlines():
            if line.startswith("replicates:"):
                try:
                    return int(line.split(":", 1)[1].split("#")[0])
                except ValueError:
                    return None
        return None

    def command(self):
        """The command that reproduces this file (with --replicates if it was run reduced)."""
        cmd = f"build/engine/dpmu run {self.config_source} --out {self.path}"
        if self.config_replicates() != self.res.replicates:
            cmd += f" --replicates {self.res.replicates}"
        return cmd


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def h5_files(results_dir):
    """Sorted paths of the *.h5 files under results_dir, following symlinked folders but entering
    each real folder once (a symlink loop, e.g. a link to its own parent, is not followed again)."""
    seen, out = set(), []
    for root, dirs, files in os.walk(results_dir, followlinks=True):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        keep = []
        for d in sorted(dirs):
            try:
                sd = os.stat(os.path.join(root, d))
            except OSError:
                continue
            if (sd.st_dev, sd.st_ino) not in seen:
                keep.append(d)
        dirs[:] = keep
        out += [os.path.join(root, f) for f in files if f.endswith(".h5")]
    return sorted(out)


def find_studies(results_dir):
    """Map config stem -> Study for every readable dpmu results file under results_dir.
    When two files come from the same config, the one with more replicates wins; at equal
    replicates the file named after the config (STEM.h5, the name scripts/reproduce.sh writes)
    wins over another copy (e.g. a backup STEM.before-cov.h5 kept beside it)."""
    studies = {}
    for path in h5_files(results_dir):
        try:
            st = Study(path)
        except (DamagedFile, OSError, ValueError, KeyError) as exc:
            print(f"claims: skip {path}: {exc}", file=sys.stderr)
            continue
        old = studies.get(st.stem)
        named = os.path.basename(path) == f"{st.stem}.h5"
        if old is None or st.res.replicates > old.res.replicates or \
                (st.res.replicates == old.res.replicates and named and
                 os.path.basename(old.path) != f"{old.stem}.h5"):
            studies[st.stem] = st
    return studies


# ----------------------------------------------------------------------------------------------
# Evaluation and output
# ----------------------------------------------------------------------------------------------

def _judged(cl, g, quantifier):
    """(verdict dict, label) of one group under the rule; a figure comparison gets no verdict."""
    res = vr.judge(g.settings, quantifier)
    if cl.kind == "comparison" and res["verdict"] != "not run":
        res["verdict"] = "figure comparison"
        res["label"] = (f"figure comparison, no verdict ({res['counts']['supported']} of {len(g.settings)} agree, "
                        f"{res['counts']['contradicted']} disagree)")
    return res


def _entry(cl, base, g, files, replicates, reduced, command, source=None):
    quantifier = g.quantifier or cl.quantifier
    res = _judged(cl, g, quantifier)
    setting, reading = setting_of(cl, g)
    extra = {}
    if "fraction_bounds" in res:
        extra["fraction_bounds"] = [round(v, 4) for v in res["fraction_bounds"]]
    if res["verdict"] == "not run":
        extra["reason"] = g.note or "no setting of these results files is one the sentence speaks of"
    if source:
        extra["evidence_from"] = source
    return dict(base, variant=g.label, setting=setting, reading=reading, quantifier=quantifier,
                verdict=res["verdict"], label=res.get("label", res["verdict"]),
                fraction=None if res["fraction"] is None else round(res["fraction"], 4),
                n_settings=len(g.settings), counts=res["counts"], note=g.note, settings=g.settings, files=files,
                replicates=replicates, reduced=reduced, command=command, **extra)


def _stored_groups(cl, stored, stored_all):
    """The groups of a claim rebuilt from the entries of an earlier claims.json (the per-setting
    estimates, MC SEs and p-values it stored), re-tested by the claim's ``retest`` where its test
    changed since (the same function its check uses), and re-judged under the current rule."""
    out = []
    for e in stored:
        rows = [{k: v for k, v in s.items() if k not in ("outcome", "p_contradict_holm")} for s in e["settings"]]
        # The group's own quantifier (e.g. 'can' or 'most' set by a check or a retest) travels with
        # its rows, so that re-judging stored evidence is a fixed point (it was lost before: an
        # existential group re-judged from its own output read as universal).
        own = e.get("quantifier", "")
        g = Group(e["variant"], rows, e.get("note", ""), own if own and own != cl.quantifier else "")
        retest = RETESTS.get(cl.id)
        gs = retest(g, stored_all) if retest else g
        out += [x for x in (gs if isinstance(gs, list) else [gs]) if x is not None]
    return out


def evaluate(results_dir, ctx=None, evidence=None):
    """Evaluate every claim on the results under results_dir (or on ``ctx``, the studies already
    found there by find_studies); returns the list of entries written to claims.json (one per claim
    and group of settings). Each entry records the replicates per cell of every results file it
    used (``replicates``: config → replicates), whether a run was reduced, its ``setting`` (paper |
    variant | reconstruction | own, with the ``reading`` where the paper is ambiguous) and its
    ``label`` (the verdict with its counts). ``evidence``: a claims.json (dict) whose stored
    per-setting evidence is re-judged for the claims whose results files are not under
    results_dir (marked ``evidence_from``)."""
    ctx = find_studies(results_dir) if ctx is None else ctx
    stored = {}
    stored_not_run = {}  # groups the earlier run found no setting for (kept as they were, with their reason)
    for e in (evidence or {}).get("claims", []):
        if e.get("settings"):
            stored.setdefault(e["id"], []).append(e)
        elif e.get("variant") and e.get("verdict") == "not run":
            stored_not_run.setdefault(e["id"], []).append(e)
    entries = []
    for cl in CLAIMS:
        present = [s for s in cl.files if s in ctx]
        base = {"id": cl.id, "paper": cl.paper, "section": cl.section, "figure": cl.figure, "claim": cl.words,
                "quantity": cl.quantity, "test": cl.test, "quantifier": cl.quantifier, "margin": cl.margin,
                "kind": cl.kind, "alpha": vr.ALPHA}
        empty = dict(variant="", setting=cl.setting, reading=cl.reading, verdict="not run", label="not run",
                     fraction=None, n_settings=0, counts={}, settings=[], files=[], replicates={})
        if cl.not_run:
            entries.append(dict(base, **empty, reason=cl.not_run, command=cl.not_run))
            continue
        if cl.self_contained:
            groups = cl.check(ctx)
            for g in groups:
                entries.append(_entry(cl, base, g, [], {}, [], f"/usr/bin/python3 plotting/claims.py {results_dir}"))
            continue
        if not present and cl.id in stored:
            src = (f"{evidence.get('source', 'an earlier claims.json')}: the results of "
                   f"{', '.join(_config_of(s) for s in cl.files)} are not under {results_dir}; their stored "
                   "per-setting estimates are re-judged under the current rule")
            first = stored[cl.id][0]
            files, replicates = first.get("files", []), first.get("replicates", {})
            command = first.get("command", "")
            for g0 in _stored_groups(cl, stored[cl.id], stored):
                for g in split_calibrations(g0):
                    entries.append(_entry(cl, base, g, files, replicates, first.get("reduced", []), command, src))
            entries += [dict(e, **base, evidence_from=src) for e in stored_not_run.get(cl.id, [])]
            continue
        if not present:
            missing = ", ".join(_config_of(s) for s in cl.files)
            reason = (f"results of {missing} not found under {results_dir}; "
                      f"`bash scripts/reproduce.sh` runs every study behind a claim")
            entries.append(dict(base, **empty, reason=reason, command="bash scripts/reproduce.sh"))
            continue
        try:
            groups = cl.check(ctx)
        except Exception as exc:  # a claim that cannot be evaluated on these files says why
            groups = []
            err = f"{type(exc).__name__}: {exc}"
        else:
            err = ""
        files = [{"file": ctx[s].path, "config": ctx[s].config_source, "replicates": ctx[s].res.replicates,
                  "config_replicates": ctx[s].config_replicates(), "complete": ctx[s].res.complete} for s in present]
        replicates = {f["config"]: f["replicates"] for f in files}
        reduced = [f["config"] for f in files if f["config_replicates"] not in (None, f["replicates"])]
        command = " && ".join([ctx[s].command() for s in present] +
                              [f"/usr/bin/python3 plotting/claims.py {results_dir}"])
        if not groups:
            reason = err or "the results files hold no setting the sentence speaks of"
            entries.append(dict(base, **dict(empty, files=files, replicates=replicates), reason=reason,
                                command=command, error=err, reduced=reduced))
            continue
        for g0 in groups:
            for g in split_calibrations(g0):
                entries.append(_entry(cl, base, g, files, replicates, reduced, command))
    return entries


def headline(entries, setting="paper"):
    """Counts of verdict classes over the entries of one setting (the headline counts of the report,
    docs and README use setting 'paper'), and per claim id the table-level view across its rows of
    that setting (verdict_rules.claim_level: Holm across all the rows' settings)."""
    sel = [e for e in entries if e.get("setting", "paper") == setting]
    counts = {v: 0 for v in vr.VERDICTS}
    for e in sel:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    per_claim = {}
    for e in sel:
        per_claim.setdefault(e["id"], []).append([s.get("p_contradict", 1.0) for s in e.get("settings", [])])
    return {"setting": setting, "rows": len(sel), "claims": len(per_claim), "counts": counts,
            "claim_level": {cid: vr.claim_level(f) for cid, f in per_claim.items()}}


def runs_summary(entries):
    """The results files behind the entries: one record per config (file, replicates per cell used,
    the config's replicates, complete) and the list of reduced runs (fewer replicates than the
    config, or unfinished) — written at the top of claims.json so that a full-size table is one
    whose ``reduced_runs`` is empty."""
    runs = {}
    for e in entries:
        for f in e.get("files", []):
            runs[f["config"]] = {k: f.get(k) for k in ("config", "file", "replicates", "config_replicates", "complete")}
    reduced = sorted(c for c, f in runs.items()
                     if f["complete"] is False or f["config_replicates"] not in (None, f["replicates"]))
    return {"runs": list(runs.values()), "reduced_runs": reduced}


def writable_target(path, option):
    """None if ``path`` can be written (a file, new or existing, in an existing writable folder),
    else the error message naming the option: checked before any work, so that a long evaluation
    never ends on an unwritable output."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"{option} {path}: a folder, not a file (give a file name)"
    if not os.path.isdir(folder):
        return f"{option} {path}: the folder {folder} does not exist (create it or give another path)"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"{option} {path}: not writable (check its permissions or give another path)"
    if not os.path.exists(path) and not os.access(folder, os.W_OK | os.X_OK):
        return f"{option} {path}: the folder {folder} is not writable (give another path)"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description="Evaluate the papers' claims on dpmu results files.")
    parser.add_argument("results_dir")
    parser.add_argument("--json", default=None, help="output file (default RESULTS_DIR/claims.json)")
    parser.add_argument("--markdown", default=None, help="output table (default RESULTS_DIR/claims.md)")
    parser.add_argument("--compact", action="store_true", help="write claims.json without indentation")
    parser.add_argument("--evidence", default=None,
                        help="an earlier claims.json (e.g. docs/claims.json): the claims whose results files are not "
                             "under RESULTS_DIR are re-judged from its stored per-setting estimates under the current "
                             "rule (marked evidence_from)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.results_dir):
        print(f"error: {args.results_dir}: no such folder (give the folder of the results files)", file=sys.stderr)
        return 2
    jpath = args.json or os.path.join(args.results_dir, "claims.json")
    mpath = args.markdown or os.path.join(args.results_dir, "claims.md")
    for path, option in ((jpath, "--json"), (mpath, "--markdown")):
        err = writable_target(path, option)
        if err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    evidence = None
    if args.evidence:
        try:
            with open(args.evidence) as f:
                evidence = json.load(f)
            evidence["source"] = args.evidence
        except (OSError, ValueError) as exc:
            print(f"error: --evidence {args.evidence}: not a readable claims.json ({exc})", file=sys.stderr)
            return 2
    entries = evaluate(args.results_dir, evidence=evidence)
    with open(jpath, "w") as f:
        json.dump({"results_dir": args.results_dir, "z": Z95, "alpha": vr.ALPHA, "rule": "plotting/verdict_rules.py",
                   "bootstrap_draws": BOOTSTRAP_DRAWS, **runs_summary(entries),
                   "headline": {s: headline(entries, s) for s in SETTINGS},
                   "claims": entries}, f, indent=None if args.compact else 1, ensure_ascii=False,
                  separators=(",", ":") if args.compact else None)
    with open(mpath, "w") as f:
        f.write(markdown(entries, args.results_dir))
    for e in entries:
        print(f"{e['id']:38s} {e['setting'][:5]:5s} {e['variant'][:46]:46s} {summary_line(e)}")
    print(jpath)
    print(mpath)
    return 0


if __name__ == "__main__":
    sys.exit(main())

