"""One self-contained HTML page with the reproduction of both papers from dpmu results files.

Usage:
  /usr/bin/python3 plotting/report.py RESULTS_DIR [--out report.html] [--figures DIR]
  /usr/bin/python3 plotting/report.py --compare OLD_DIR NEW_DIR [--out compare.html]

The page holds every figure of Peña & Barrientos (2024, "PB") and Lei et al. (2018, "LCSSF")
for which RESULTS_DIR has results (drawn afresh from the HDF5 files by the figure scripts and
embedded as base64 PNG), the paper's caption and stated numbers beside ours (computed from the
files), the claims table of plotting/claims.py (also written as RESULTS_DIR/claims.json and
claims.md), the reconstructed constants and data substitutions, and what differs from the paper.

``--compare OLD_DIR NEW_DIR`` evaluates the claims and the stated numbers on both result sets and
shows, per claim and per figure, what changed (verdict, fraction of supported settings, the
numbers; both versions of every figure whose pixels differ) — the view after changing a method.
Every ``*.h5`` under the folder is read once, before anything is drawn. A file that cannot be read
(damaged: its SHA-256 or its contents fail; unreadable: not HDF5, no permission, a newer schema) is
named on stderr and in a box at the top of the page, and nothing on the page comes from it; a run
stopped before its first replicate is listed as "no replicate done" (its claims are "not run").
The outputs (``--out``, ``claims.json`` and ``claims.md`` in RESULTS_DIR, ``--figures``) are checked
for writability before any work.
Exit codes: 0 written; 1 written, but some results files could not be read (each named on stderr and
on the page); 2 bad input, before any work: a folder is missing or holds no results file, an output
cannot be written.
"""
import argparse
import base64
import hashlib
import html
import json
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import claims as claims_mod  # noqa: E402
import findings as findings_mod  # noqa: E402
from dpmu_h5 import DamagedFile, figure_note  # noqa: E402

# ----------------------------------------------------------------------------------------------
# The papers' figures: caption (paper's words), the configs whose results draw it, the figure
# files the plotting scripts write, and the numbers the paper states with ours beside them.
# ----------------------------------------------------------------------------------------------

FIGURES = [
    dict(key="PB1", title="PB Figure 1 (§4.4): DP posterior probabilities, HSB", stems=["fig1_hsb_posterior"],
         images=["fig1_hsb_posterior"],
         caption="(The caption of Figure 1 is not in the available text.) §4.4: \"In Figure 1, we show the "
                 "distribution of the differentially private posterior probabilities P*(H11|D) and P*(H12|D) for "
                 "different combinations of ε and M, simulating random data splits and perturbation terms η ~ "
                 "L1(0, Δ/(Mε)). … Each error bar has been computed with 10^4 simulations.\""),
    dict(key="PB2", title="PB Figure 2 (§4.4): DP likelihood-ratio statistics, HSB", stems=["fig2_hsb_likelihood_ratio"],
         images=["fig2_hsb_likelihood_ratio_paper_literal", "fig2_hsb_likelihood_ratio_exact",
                 "fig2_hsb_likelihood_ratio"],
         caption="(The caption of Figure 2 is not in the available text.) §4.4: \"In Figure 2, we show the "
                 "distributions of 2 log Λ*10,1 and 2 log Λ*10,2 for L = 0, U = 7, ε = 1, and different values of "
                 "0 < δ < 1. … The gray + and △ are corrected critical values; black ones are uncorrected.\""),
    dict(key="PB3", title="PB Figure 3 (§5.2.1): PMSE, Zellner–Siow", stems=["fig3_4_zellner_siow"],
         images=["fig3_4_zellner_siow_fig3"],
         caption="Figure 3: Simulation study: Sample size (x-axis) against log(PMSE) (y-axis) with Zellner-Siow prior."),
    dict(key="PB4", title="PB Figure 4 (§5.2.1): P(true model), Zellner–Siow", stems=["fig3_4_zellner_siow"],
         images=["fig3_4_zellner_siow_fig4"],
         caption="Figure 4: Simulation study: Sample size (x-axis) against posterior probability of the true model "
                 "(y-axis) with Zellner-Siow prior."),
    dict(key="PB5", title="PB Figure 5 (§5.2.2): CPS confidence-set histograms", stems=["fig5_cps",
         "fig5_cps_centred_age", "fig5_cps_public_bounds"],
         images=["fig5_cps", "fig5_cps_centred_age", "fig5_cps_public_bounds"],
         caption="Figure 5: Current population survey: Posterior expectations of coefficients β1, β3, and β4 with "
                 "Zellner-Siow prior and ε = 0.9. The vertical solid lines are the non-private posterior "
                 "expectations, whereas the dashed lines and dotted lines are averaged posterior expectations "
                 "estimated with non-thresholded methods and thresholded methods, respectively."),
    dict(key="PB6", title="PB Figure 6 (App. B): censoring limits, P*(H12|D)",
         stems=["fig6_hsb_censoring", "fig6_hsb_censoring_h11"],
         images=["fig6_hsb_censoring", "fig6_hsb_censoring_h11"],
         caption="Figure 6: Distribution of P*(H12|D) as a function of ε, M, and censoring limits. The lower "
                 "endpoint of the error bars is the first quartile of the distribution, the midpoint is the median, "
                 "and the upper endpoint is the third quartile. The dashed lines are the non-private posterior "
                 "probabilities."),
    dict(key="PB7", title="PB Figure 7 (App. B): upper censoring limit U, 2 log Λ*10,2", stems=["fig7_hsb_lr_censoring",
         "fig7_hsb_lr_censoring_h11"],
         images=["fig7_hsb_lr_censoring_paper_literal", "fig7_hsb_lr_censoring_exact",
                 "fig7_hsb_lr_censoring_h11_paper_literal", "fig7_hsb_lr_censoring_h11_exact"],
         caption="Figure 7: Distribution of 2 log Λ*10,1 and 2 log Λ*10,2 as a function of δ, M, and censoring "
                 "upper limit U. The gray + and △ are corrected critical values at the 0.01 and 0.05 significance "
                 "levels, respectively."),
    dict(key="PB8", title="PB Figure 8 (App. C): PMSE, BIC", stems=["fig3_4_zellner_siow", "fig8_9_bic"],
         images=["fig3_4_zellner_siow_fig8", "fig8_9_bic_fig8"],
         caption="Figure 8: Simulation study: Sample size (x-axis) against log(PMSE) (y-axis) with BIC prior."),
    dict(key="PB9", title="PB Figure 9 (App. C): P(true model), BIC", stems=["fig3_4_zellner_siow", "fig8_9_bic"],
         images=["fig3_4_zellner_siow_fig9", "fig8_9_bic_fig9"],
         caption="Figure 9: Simulation study: Sample size (x-axis) against posterior probability of the true model "
                 "(y-axis) with BIC prior."),
    dict(key="L1", title="LCSSF Figure 1 (§5): Algorithm 1, model 1", stems=["lei_simulation"],
         images=["lei_simulation_model1_1pR_2_k1_c1", "lei_simulation_model1_r2_1pR2_k2_c0.5"],
         caption="(Caption not in the available text.) LCSSF §5: \"Figure 1 shows the results for model 1 where "
                 "β0 = (1,1,1,0,0,0)\" — proportion of 500 data sets for which Algorithm 1 selects the true model, "
                 "against φ ∈ [0, n/2], for n ∈ {100, 1000}, R ∈ {1, 2.5, 3.5, 10}, ε ∈ {0.1, 1, 5, 10}."),
    dict(key="L2", title="LCSSF Figure 2 (§5): Algorithm 1, model 2", stems=["lei_simulation"],
         images=["lei_simulation_model2_1pR_2_k1_c1", "lei_simulation_model2_r2_1pR2_k2_c0.5"],
         caption="(Caption not in the available text.) LCSSF §5: \"Figure 2 shows the results for case where "
                 "β0 = (1.5,1,0.5,0,0,0).\""),
    dict(key="T1", title="Ours: type-I error of the corrected tests (PB §4.3)", stems=["type1_calibration"],
         images=["type1_calibration"],
         caption="Not a figure of the papers: the check of PB §4.3's corrected critical values on data simulated "
                 "under H0."),
    dict(key="T2T", title="Ours: DP tests head to head, PB vs Test of Tests vs DP F-test", stems=["head_to_head"],
         images=["head_to_head"],
         caption="Not a figure of the papers: PB's subsample-and-aggregate test (§4) against the Test of Tests "
                 "(Kazan et al. 2023) and the DP F-test (Alabi & Vadhan 2022) on the same simulated data sets at "
                 "matched privacy (docs/methods.md §11): type-I error and power against n."),
    dict(key="T2H", title="Ours: DP tests head to head on the HSB design", stems=["head_to_head_hsb"],
         images=["head_to_head_hsb"],
         caption="Not a figure of the papers: the same three tests on HSB2's design (paper §4.4: the students' "
                 "standardised science, read, write and math scores, resampled to n rows) with a simulated response "
                 "of known effect (docs/head-to-head.md \"HSB design\"): type-I error and power against n."),
    dict(key="PMSE", title="Ours: prediction head to head, SSP model averaging vs AdaSSP", stems=["head_to_head_pmse"],
         images=["head_to_head_pmse_pmse_zellner_siow", "head_to_head_pmse_prob_true_model_zellner_siow"],
         caption="Not a figure of the papers: the paper's SSP model averaging (Laplace, Wishart; Zellner-Siow) "
                 "against the AdaSSP baseline (Wang 2018) on the same data sets of PB §5.2.1's design at the same ε "
                 "(docs/head-to-head.md \"PMSE\"): predictive MSE against n, and the posterior probability of the "
                 "true model with AdaSSP's statistics (plus y'y) analysed by the same model averaging."),
    dict(key="H2H", title="Ours: selecting the true model, LCSSF vs SSP", stems=["selection_head_to_head"],
         images=["selection_head_to_head"],
         caption="Not a figure of the papers: LCSSF Algorithm 1 (oracle φ) against PB's SSP model averaging on "
                 "LCSSF's design."),
]


def _fmt(v, digits=4):
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "—"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    a = abs(v)
    if a != 0 and (a < 1e-3 or a >= 1e5):
        return f"{v:.3g}"
    return f"{v:.{digits}g}"


def stated_numbers(key, ctx):
    """Rows (quantity, paper, ours) for a figure; ours computed from the results files."""
    rows = []
    if key == "PB1" and "fig1_hsb_posterior" in ctx:
        st = ctx["fig1_hsb_posterior"]
        for test, paper, npaper in (("H1", 0.25, 0.07), ("H2", 0.70, 0.99)):
            name = claims_mod.HSB_TESTS[test][1]
            c = claims_mod.cell(st, test=test, num_subsets=10, epsilon=max(claims_mod.values(st, "epsilon")))
            if c is not None:
                m, se = claims_mod.boot_of(st, "posterior_probability_h1", c, "median")
                rows.append((f"median {name}, M = 10, ε = {max(claims_mod.values(st, 'epsilon')):g}", f"≈ {paper:.2f}",
                             f"{m:.4f} ± {se:.4f} (MC SE; {abs(m - paper) / se:.0f} SE from {paper:.2f})"))
            npv = float(st.res.calibration["non_private_posterior_probability_h1"][st.res.select(test=test)[0], 0])
            rows.append((f"non-private {name.replace('P*', 'P')}", f"≈ {npaper:.2f}", _fmt(npv, 8)))
    if key in ("PB2", "PB7"):
        stem = "fig2_hsb_likelihood_ratio" if key == "PB2" else "fig7_hsb_lr_censoring"
        if stem in ctx:
            st = ctx[stem]
            for test in claims_mod.values(st, "test") or ["H2"]:
                c = st.res.select(test=test)[0] if "test" in st.res.cells else 0
                v = float(st.res.calibration["non_private_log_statistic"][c, 0])
                paper = {"H1": "does not reject at 0.05 or 0.01 (χ²₁: 3.84, 6.63)",
                         "H2": "> U = 7" if key == "PB2" else "above 10"}[test]
                rows.append((f"non-private 2 log Λ10,{test[-1]}", paper, _fmt(v)))
    if key == "PB5":
        for stem in ("fig5_cps", "fig5_cps_centred_age", "fig5_cps_public_bounds"):
            if stem not in ctx:
                continue
            st = ctx[stem]
            coefs = np.asarray(st.res.calibration["histogram_coefficients"][0])
            coefs = coefs[np.isfinite(coefs)].astype(int)
            for mech in claims_mod.values(st, "mechanism"):
                c = claims_mod.cell(st, mechanism=mech)
                dens = st.res.summary["confidence_set_density"]["mean"][c]
                edges = np.asarray(st.res.calibration["histogram_edges"][c])
                edges = edges[np.isfinite(edges)]
                k = len(edges) // len(coefs) - 1
                for i, j in enumerate(coefs):
                    if j not in claims_mod.PAPER_FIG5:
                        continue
                    (lo, hi), peak = claims_mod.PAPER_FIG5[j]
                    e = edges[i * (k + 1):(i + 1) * (k + 1)]
                    d = dens[i * k:(i + 1) * k]
                    w = claims_mod.reps(st, "confidence_set_upper", c, i) - claims_mod.reps(st, "confidence_set_lower", c, i)
                    rows.append((f"{stem}, {mech}, β{j}: plotted range; peak density; median run interval width",
                                 f"[{lo:g}, {hi:g}]; ≈ {peak:g}; (histogram inside the axis)",
                                 f"[{_fmt(e[0], 3)}, {_fmt(e[-1], 3)}]; {_fmt(float(np.nanmax(d)), 3)}; "
                                 f"{_fmt(float(np.nanmedian(w)), 3)}"))
    if key in ("PB3", "PB4", "PB8", "PB9"):
        prior = "zellner_siow" if key in ("PB3", "PB4") else "bic"
        metric = "predictive_mse" if key in ("PB3", "PB8") else "prob_true_model"
        acc, stem = claims_mod._ssp(ctx, prior)
        if acc is not None:
            mean = acc.st.res.summary[metric]["mean"]
            v = mean[np.isfinite(mean) & (mean > 0)] if metric == "predictive_mse" else mean[np.isfinite(mean)]
            paper = {"PB3": "1e-12 … 1e-4", "PB8": "1e-11 … 1e-3"}.get(key, "0 … 1")
            rows.append((f"range of the plotted means ({stem}, {acc.st.res.replicates} data sets per cell)",
                         paper, f"{_fmt(float(v.min()), 3)} … {_fmt(float(v.max()), 3)}"))
    if key == "PB6" and "fig6_hsb_censoring" in ctx:
        st = ctx["fig6_hsb_censoring"]
        rows.append(("non-private P(H12|D)", "near 1",
                     _fmt(float(st.res.calibration["non_private_posterior_probability_h1"][0, 0]), 8)))
    return rows


# ----------------------------------------------------------------------------------------------
# Static sections: reconstructed constants, data substitutions, differences from the paper
# ----------------------------------------------------------------------------------------------

CONSTANTS = [
    ("Gaussian noise of PB §4 (Figures 2, 7)", "both: exact calibration (default) and the printed variance "
     "(`paper_literal`, M times larger)", "docs/methods.md A2"),
    ("Bayes factor exponents in the HSB test 2 (Figure 1)", "PB's formula with X0 = (1, science): exponents "
     "(b − p0 − p)/2, (b − p0)/2; scripts/hsb_bf_readings.py shows that Liang et al.'s intercept-only exponents "
     "give the printed 0.70", "docs/reproduction.md (HSB)"),
    ("Simulation design b, σ (SNR 1/2, |Y| < 2)", "b = 1/(7√|T|), σ = √(8/3)/7", "docs/methods.md §5.8, A6"),
    ("n grid between 5 000 and 10⁷", "{5, 10, 50, 100, 500, 1 000, 5 000, 10 000} thousand", "docs/methods.md A13"),
    ("threshold λ", "0.95 quantile of |E_ij|", "docs/methods.md A9"),
    ("Laplace ridge", "Monte Carlo 99th percentile of −eigmin(E)", "docs/methods.md A8"),
    ("Wishart ridge (Sheffet's Remark 2, text not available)", "analytic Davidson–Szarek bound", "docs/methods.md A10"),
    ("Wishart δ (simulation and CPS)", "1/n", "docs/methods.md A14"),
    ("nsim of the confidence sets", "10⁴", "docs/methods.md A12"),
    ("CPS permutation", "independent per column (joint: A11's reading)", "docs/methods.md A11"),
    ("CPS histogram bins", "pilot runs' 0.5–99.5% quantiles widened by 10%", "docs/decisions.md"),
    ("CPS age²", "from raw age (fig5_cps) and, as a reading of the ambiguity, from centred age "
     "(fig5_cps_centred_age)", "docs/decisions.md"),
    ("LCSSF Algorithm 1 constants", "default ε-DP reading (lcssf_delta = r2_1pR2, κ = 2, c = 1/2) and the "
     "LCSSF-accuracy reading (1pR_2, κ = 1, c = 1; not DP for r > 1)", "docs/methods.md §6.6, A21"),
]

SUBSTITUTIONS = [
    ("PB §5.2.2 CPS", "March 2000 CPS extract (49 436 heads of household, income) is not public; we use March "
     "2009 (Hansen's cps09mar, 50 742 full-time workers, wage and salary earnings; education in years)"),
    ("PB §4.4 HSB", "the same 200 students (openintro's hsb2), experiments/data/hsb2.csv"),
    ("LCSSF data examples", "LCSSF's results for them are unknown; nothing to compare with"),
]

DIFFERENCES = [
    "HSB: the median P*(H12|D) at M = 10, ε = 8 is below the paper's 0.70 by many Monte Carlo SEs with PB's printed "
    "Bayes factor; the intercept-only exponents give 0.70 (claims table, PB-4.4-fig1-M10-H12; docs/reproduction.md).",
    "Figures 2 and 7 are drawn for both Gaussian calibrations. Which one the paper ran is not settled: with the exact "
    "calibration the corrected value at δ = 0.01, M = 10 is already below 3.84, which the paper's wording ('for larger "
    "δ and M = 10') does not suggest, while the printed variance gives 7.00 there — weak evidence for the printed "
    "variance (docs/reproduction.md, HSB item 6); the verdicts of both are in the claims table "
    "(PB-4.4-fig2-corrected-below).",
    "Figure 7: the paper's plain test cannot reject where the null law has an atom at U with more mass than α; our "
    "randomized test is reported separately (PB-B-fig7-power-randomized).",
    "Figure 5: different data (CPS 2009); with age² from raw age our intervals are 5–35× wider than the paper's axes; "
    "with age² from centred age β1 and β4 come to the paper's scale, β3 stays wider (PB-5.2.2-axes).",
    "Figures 3, 4, 8, 9: b, σ, λ, the Wishart ridge and the n grid are reconstructions, so absolute PMSE levels differ; "
    "our y-range is wider than the paper's.",
    "LCSSF: the constants of Algorithm 1 are reconstructions; its statements hold only with the LCSSF-accuracy "
    "calibration, which is not DP for r > 1.",
    "Reduced runs: where a results file has fewer replicates than its config, the claims table says so "
    "(column 'replicates') and its Monte Carlo error is larger.",
]


# ----------------------------------------------------------------------------------------------
# Results files: read once; the damaged, unreadable and empty ones named
# ----------------------------------------------------------------------------------------------

class Loaded:
    """The results files of one folder, read once (load_results).

    Attributes
    ----------
    ctx : dict
        config stem -> claims.Study: the files the page is computed from (claims.find_studies's
        choice among the readable ones), runs without any replicate done left out.
    problems : list of (path, message)
        Every ``*.h5`` that cannot be read: damaged (its SHA-256 or contents fail) or unreadable (not
        HDF5, no permission, a schema this reader does not read). Nothing on the page comes from them.
    empty : dict
        config stem -> claims.Study of a run stopped before its first replicate (shown as "no
        replicate done"; its claims are "not run").
    foreign : list of (path, message)
        HDF5 files that are not dpmu results files (named, not an error).
    """

    def __init__(self, ctx, problems, empty, foreign):
        self.ctx, self.problems, self.empty, self.foreign = ctx, problems, empty, foreign


def results_paths(results_dir):
    """Every ``*.h5`` under results_dir, sub-folders included (the files claims.find_studies
    considers); a folder reached twice through symbolic links is read once."""
    paths, seen = [], set()
    for root, dirs, files in os.walk(results_dir, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        paths += [os.path.join(root, f) for f in sorted(files) if f.endswith(".h5") and not f.startswith(".")]
    return paths


def _no_replicate_done(st):
    return not st.res.complete and int(np.asarray(st.res.n_done).sum()) == 0


def load_results(results_dir):
    """Read every results file under results_dir once (see ``Loaded``): the readable ones through
    claims.find_studies; each ``*.h5`` it did not take is read again here to learn why (a damaged
    or unreadable file, or a copy with fewer replicates of a config whose other file is used)."""
    found = claims_mod.find_studies(results_dir)
    used = {os.path.realpath(st.path) for st in found.values()}
    problems, foreign = [], []
    for path in results_paths(results_dir):
        if os.path.realpath(path) in used:
            continue
        try:
            claims_mod.Study(path)  # readable: a copy of a config whose other file is used
        except DamagedFile as exc:
            problems.append((path, str(exc)))
        except ValueError as exc:
            if str(exc).endswith("not a dpmu results file"):
                foreign.append((path, str(exc)))
            else:  # a schema this reader does not read
                problems.append((path, str(exc)))
        except Exception as exc:  # noqa: BLE001 - not HDF5, no permission, ...: named, never fatal
            problems.append((path, f"{path}: not a readable results file ({type(exc).__name__}: {exc})"))
    ctx = {stem: st for stem, st in found.items() if not _no_replicate_done(st)}
    empty = {stem: st for stem, st in found.items() if _no_replicate_done(st)}
    return Loaded(ctx, problems, empty, foreign)


def report_problems(loaded, label=""):
    """Name every unreadable file and every empty run on stderr; returns the number of unreadable files."""
    for _, msg in loaded.problems:
        print(f"report: error: {label}{msg}", file=sys.stderr)
    for _, st in sorted(loaded.empty.items()):
        print(f"report: note: {label}{st.path}: no replicate done (a run stopped before its first replicate; "
              f"continue it with `{st.command()} --resume`)", file=sys.stderr)
    for _, msg in loaded.foreign:
        print(f"report: note: {label}{msg} (ignored)", file=sys.stderr)
    return len(loaded.problems)


def problems_html(loaded, label=""):
    """The box at the top of the page that names every file the page could not use."""
    parts = []
    if loaded.problems:
        n = len(loaded.problems)
        them = "them" if n != 1 else "it"
        parts.append(f"<div class='unreadable' id='unreadable'><p><b>{n} results file{'s' if n != 1 else ''} "
                     f"{html.escape(label)}could not be read</b>; nothing on this page comes from {them}: the figures, "
                     f"numbers and claims that need {them} are missing or 'not run'. Restore {them} or run {them} "
                     "again (<code>scripts/reproduce.sh</code> runs a damaged file again).</p><ul>"
                     + "".join(f"<li><code>{html.escape(path)}</code>: "
                               f"{html.escape(msg[len(path) + 2:] if msg.startswith(path + ': ') else msg)}</li>"
                               for path, msg in loaded.problems) + "</ul></div>")
    if loaded.empty:
        parts.append("<div class='not-run'><p><b>No replicate done</b> (runs stopped before their first replicate; "
                     "their claims are 'not run'):</p><ul>"
                     + "".join(f"<li><code>{html.escape(st.path)}</code> from <code>{html.escape(st.config_source)}"
                               f"</code>: no replicate done; continue it with <code>{html.escape(st.command())} "
                               "--resume</code></li>" for _, st in sorted(loaded.empty.items())) + "</ul></div>")
    if loaded.foreign:
        parts.append("<p class='small'>Ignored (not dpmu results files): "
                     + ", ".join(f"<code>{html.escape(path)}</code>" for path, _ in loaded.foreign) + "</p>")
    return "\n".join(parts)


def note_empty_runs(entries, loaded):
    """A claim whose results are only a run without any replicate done says so (not 'not found')."""
    files = {cl.id: cl.files for cl in claims_mod.CLAIMS}
    for e in entries:
        if e["verdict"] != "not run" or e.get("files"):
            continue
        empty = [loaded.empty[s] for s in files.get(e["id"], []) if s in loaded.empty]
        if empty:
            e["reason"] = e["command"] = "; ".join(
                f"{st.path} ({st.config_source}): no replicate done (a run stopped before its first replicate; "
                f"continue it with `{st.command()} --resume`)" for st in empty)
    return entries


def _unwritable_file(path, what):
    """Why path cannot be written as a file ('' if it can): checked before any work."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"{what} {path}: is a folder (give a file name)"
    if not os.path.isdir(folder):
        return f"{what} {path}: the folder {folder} does not exist (create it first)"
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"{what} {path}: cannot write there (permission denied or a read-only file system)"
    return ""


def _unwritable_folder(path, what):
    """Why path cannot be used as an output folder, created if missing ('' if it can)."""
    top = os.path.abspath(path)
    while not os.path.exists(top):
        top = os.path.dirname(top)
    if not os.path.isdir(top):
        return f"{what} {path}: {top} is not a folder"
    if not os.access(top, os.W_OK | os.X_OK):
        return f"{what} {path}: cannot write in {top} (permission denied or a read-only file system)"
    return ""


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------

def draw_figures(ctx, out_dir):
    """Draw every figure of the studies in ctx into out_dir; returns {stem: path of the PNG}."""
    import plot_all
    pngs = {}
    for st in ctx.values():
        plotter = plot_all.PLOTTERS.get(st.res.experiment)
        if plotter is None:
            continue
        try:
            with figure_note(st.res.incomplete_note()):
                for p in plotter(st.path, out_dir, name=st.stem) if _takes_name(plotter) else plotter(st.path, out_dir):
                    if p.endswith(".png"):
                        pngs[os.path.splitext(os.path.basename(p))[0]] = p
        except Exception as exc:  # a figure that fails is reported on the page, not fatal
            pngs[f"error:{st.stem}"] = f"{type(exc).__name__}: {exc}"
    return pngs


def _takes_name(fn):
    import inspect
    try:
        return "name" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _img(path, alt):
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


# ----------------------------------------------------------------------------------------------
# HTML
# ----------------------------------------------------------------------------------------------

CSS = """
body{font-family:sans-serif;max-width:1300px;margin:1em auto;padding:0 1em;color:#222}
h1{font-size:1.5em;overflow-wrap:anywhere} h2{border-bottom:1px solid #ccc;margin-top:2em} h3{margin-bottom:.3em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0;max-width:100%}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f3f3} .caption{background:#f8f8f0;border-left:4px solid #cc9;padding:.4em .8em;font-size:.9em}
img{max-width:100%;border:1px solid #ddd;margin:.3em 0} .holds{background:#cfc} .partly{background:#ffd}
.does-not-hold{background:#fcc} .not-run{background:#eee} .holds-within-MC-error{background:#dde9f7}
.undecided{background:#ece6d6} .figure-comparison{background:#eee;font-style:italic} .changed{background:#fec}
.setting{display:inline-block;font-size:.75em;padding:0 .4em;border-radius:.6em;border:1px solid #999;margin-left:.3em}
.setting-variant,.setting-reconstruction{background:#f3e6ff;border-color:#a7c} .setting-own{background:#e6f3ff}
.summary{background:#f6f6f6;border-left:4px solid #888;padding:.4em .8em}
.small{font-size:.8em;color:#555} code{font-size:.9em;overflow-wrap:anywhere} p,li{overflow-wrap:anywhere}
table.claims{table-layout:fixed;width:100%} table.claims td{font-size:.95em}
table.claims col.c-claim{width:34%} table.claims col.c-test{width:18%} table.claims col.c-verdict{width:14%}
table.claims col.c-settings{width:34%}
.unreadable{background:#fdd;border-left:4px solid #c00;padding:.2em .8em;margin:.5em 0}
.evidence{margin:.6em 0 1.2em 0;padding:.3em .8em;border-left:4px solid #ccd}
.evidence table{table-layout:fixed;width:100%} ul.settings{margin:.2em 0;padding-left:1.2em}
"""


def _cls(verdict):
    return verdict.replace(" ", "-")


# Short names of the config keys in the settings of a claim (the paper's symbols)
SETTING_NAMES = {"epsilon": "ε", "delta": "δ", "num_subsets": "M", "censor_lower": "L", "censor_upper": "U",
                 "radius": "R", "beta_model": "model", "gaussian_calibration": "calibration",
                 "null_simulations": "null draws", "censoring_scale": "censoring scale", "prior_h0": "P(H0)",
                 "lcssf_delta": "calibration"}


def _setting_tokens(text):
    """The parts of a setting's label ('key=value' or free text), separated by ';' or ', '."""
    out = []
    for tok in re.split(r";\s*|,\s+", text):
        tok = tok.strip()
        if not tok:
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*|\s+)(\S.*)$", tok)
        if m and m.group(1) in SETTING_NAMES:
            sep = "=" if "=" in m.group(2) else " "
            tok = f"{SETTING_NAMES[m.group(1)]}{sep}{m.group(3)}"
        out.append(tok)
    return out


def short_settings(entry):
    """(common, labels): the parts shared by every setting of the entry, and for each setting the
    parts that vary, so a setting reads 'U=3, ε=0.5, n=200' rather than a 180-character key."""
    toks = [_setting_tokens(s["setting"]) for s in entry["settings"]]
    if len(toks) < 2:
        return [], [", ".join(t) for t in toks]
    common = [t for t in toks[0] if all(t in other for other in toks[1:])]
    labels = [", ".join(x for x in t if x not in common) or "—" for t in toks]
    return common, labels


FIGURE_ANCHORS = {"type-I calibration (ours)": ["T1"]}


def figure_anchors(entry):
    """The ids of the report's figure sections a claim's figure field names ('Figures 3, 4' → PB3, PB4)."""
    fig = entry["figure"]
    if fig in FIGURE_ANCHORS:
        return FIGURE_ANCHORS[fig]
    prefix = "L" if fig.startswith("LCSSF") else "PB"
    m = re.match(r"^(?:LCSSF )?Figures? ([0-9, ]+(?:vs [0-9, ]+)?)", fig)
    if not m:
        return []
    return [f"{prefix}{n}" for n in dict.fromkeys(re.findall(r"[0-9]+", m.group(1)))]


def _fmt_est(s):
    est, se = s.get("estimate"), s.get("se")
    if est is None or (isinstance(est, float) and not np.isfinite(est)):
        return "NaN"
    txt = f"{est:.4g}"
    if se:
        txt += f" ± {se:.2g}"
    return txt


SETTING_KEYS = {"setting", "estimate", "se", "test", "p_support", "p_contradict", "p_contradict_holm", "outcome"}


def _extras(s):
    """The other numbers a check stored with a setting (e.g. the two IQRs it compares, the verdicts
    on H11 and H12), as 'name = value' text."""
    return ", ".join(f"{k} = {_fmt(v) if isinstance(v, (int, float)) else v}" for k, v in s.items()
                     if k not in SETTING_KEYS and v is not None)


ORDER = {"contradicted": 0, "unresolved": 1, "supported": 2}
EVIDENCE_ROWS = 40  # settings listed per claim entry on the page (all of them are in claims.json)


def claims_tables(entries, results_dir, present_anchors=()):
    """The claims this run judged, in three tables (the paper's setting; variants and reconstructions;
    our own claims), each followed by its evidence blocks; the claims it could not judge are named in
    the summary paragraph with the command that runs them (scripts/reproduce.sh), not listed as rows."""
    out = []
    judged = [e for e in entries if e["verdict"] != "not run" or e.get("files")]
    for table in ("paper", "variant", "own"):
        rows = [e for e in judged if claims_mod._table_of(e.get("setting", "paper")) == table]
        # every table has its heading (the page's contents link to it), with a line when it is empty
        out.append(f"<h3 id='claims-{table}'>{html.escape(claims_mod.SETTING_TITLES[table])}</h3>")
        if rows:
            out.append(claims_table(rows, results_dir, present_anchors, prefix=f"{table}-"))
        else:
            out.append("<p class='small'>None judged by this run.</p>")
    return "\n".join(out)


def summary_html(entries):
    """The generated top paragraph (plotting/claims.py summary_lines) as HTML."""
    items = []
    for line in claims_mod.summary_lines(entries):
        esc = html.escape(line)
        esc = re.sub(r"`([^`]+)`", r"<code>\1</code>", esc)
        items.append(f"<li>{esc}</li>")
    return "<div class='summary'><ul>" + "".join(items) + "</ul></div>"


def claims_table(entries, results_dir, present_anchors=(), prefix=""):
    """The claims table (fits a 1 400 px window: fixed layout, wrapping cells, settings as short
    lists) and, below it, one evidence block per entry that its verdict links to."""
    rows = ["<table class='claims'><colgroup><col class='c-claim'><col class='c-test'><col class='c-verdict'>"
            "<col class='c-settings'></colgroup>"
            "<tr><th>claim (paper's words)</th><th>test</th><th>verdict</th><th>settings (first; all under the "
            "verdict's link)</th></tr>"]
    blocks = []
    for k, e in enumerate(entries):
        anchor = f"ev-{prefix}{k}"
        common, labels = short_settings(e)
        where = f"{e['paper']} {e['section']}, {e['figure']}"
        variant = f"<br><span class='small'>{html.escape(e['variant'])}</span>" if e["variant"] else ""
        setting = e.get("setting", "paper")
        if setting != "paper" or e.get("reading"):
            variant += (f"<br><span class='setting setting-{setting}' title='{html.escape(e.get('reading', ''))}'>"
                        f"{html.escape(setting)}</span> <span class='small'>{html.escape(e.get('reading', ''))}</span>")
        order = sorted(range(len(e["settings"])), key=lambda i: ORDER.get(e["settings"][i].get("outcome"), 1))
        first = "".join(f"<li>{html.escape(labels[i])}: {html.escape(_fmt_est(e['settings'][i]))} "
                        f"<i>{html.escape(e['settings'][i].get('outcome', ''))}</i></li>" for i in order[:3])
        settings = (f"<span class='small'>{html.escape('; '.join(common))}</span>" if common else "") + \
            (f"<ul class='settings'>{first}</ul>" if first else html.escape(e.get("reason", "")))
        rows.append(f"<tr id='claim-{prefix}{k}'><td><code>{html.escape(e['id'])}</code> <span class='small'>"
                    f"{html.escape(where)}</span><br>{html.escape(e['claim'])}{variant}</td>"
                    f"<td class='small'>{html.escape(e['test'])}</td>"
                    f"<td class='{_cls(e['verdict'])}'><a href='#{anchor}'>{html.escape(claims_mod.summary_line(e))}"
                    f"</a></td><td class='small'>{settings}</td></tr>")
        figs = [a for a in figure_anchors(e) if a in present_anchors]
        reps = ", ".join(f"<code>{html.escape(os.path.basename(f['file']))}</code> from "
                         f"<code>{html.escape(f['config'])}</code>: {f['replicates']} replicates per cell"
                         + ("" if f["replicates"] == f["config_replicates"]
                            else f" (<b>reduced</b>; config {f['config_replicates']})") for f in e["files"])
        head = [f"<div class='evidence' id='{anchor}'><h4>Evidence: <code>{html.escape(e['id'])}</code>"
                + (f" — {html.escape(e['variant'])}" if e["variant"] else "") + "</h4>",
                f"<p class='{_cls(e['verdict'])}'>{html.escape(claims_mod.summary_line(e))} "
                f"<a href='#claim-{prefix}{k}'>(back to the table)</a></p>"]
        if figs:
            head.append("<p>Figure: " + ", ".join(f"<a href='#{a}'>{a}</a>" for a in figs) + "</p>")
        if reps:
            head.append(f"<p class='small'>Results: {reps}.</p>")
        if e.get("margin"):
            head.append(f"<p class='small'>Margin: {html.escape(e['margin'])}</p>")
        if e.get("note"):
            head.append(f"<p class='small'>{html.escape(e['note'])}</p>")
        if e["verdict"] == "not run":
            head.append(f"<p class='small'>{html.escape(e.get('reason', ''))}</p>")
        if common:
            head.append("<p class='small'>Every setting: " + html.escape("; ".join(common)) + "</p>")
        if e["settings"]:
            shown = order[:EVIDENCE_ROWS]
            head.append("<table><colgroup><col style='width:26%'><col style='width:11%'><col style='width:12%'>"
                        "<col style='width:8%'><col style='width:8%'><col style='width:9%'><col style='width:26%'>"
                        "</colgroup><tr><th>setting</th><th>test</th><th>estimate ± MC SE</th><th>p (claim false)</th>"
                        "<th>p (claim true, Holm)</th><th>outcome</th><th>numbers behind it</th></tr>")
            for i in shown:
                s = e["settings"][i]
                head.append(f"<tr><td>{html.escape(labels[i])}</td><td>{html.escape(str(s.get('test', '')))}</td>"
                            f"<td>{html.escape(_fmt_est(s))}</td>"
                            f"<td>{_fmt(s.get('p_support'), 3)}</td><td>{_fmt(s.get('p_contradict_holm'), 3)}</td>"
                            f"<td>{html.escape(s.get('outcome', ''))}</td><td>{html.escape(_extras(s))}</td></tr>")
            head.append("</table>")
            if len(order) > len(shown):
                head.append(f"<p class='small'>{len(order) - len(shown)} more settings (supported ones last) in "
                            "<code>claims.json</code>.</p>")
        head.append("</div>")
        blocks.append("\n".join(head))
    rows.append("</table>")
    return "\n".join(rows) + f"\n<h4 id='evidence-{prefix}'>Evidence per claim entry</h4>\n" + "\n".join(blocks)


def _table(header, rows):
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def figure_sections(ctx, pngs):
    parts = []
    for fig in FIGURES:
        present = [s for s in fig["stems"] if s in ctx]
        if not present:
            continue
        parts.append(f"<h3 id='{fig['key']}'>{html.escape(fig['title'])}</h3>")
        parts.append(f"<div class='caption'><b>Paper:</b> {html.escape(fig['caption'])}</div>")
        files = ", ".join(f"<code>{html.escape(ctx[s].path)}</code> ({ctx[s].res.replicates} replicates per cell"
                          + ("" if ctx[s].config_replicates() == ctx[s].res.replicates
                             else f"; config: {ctx[s].config_replicates()}") + ")" for s in present)
        parts.append(f"<p class='small'>Ours from {files}.</p>")
        rows = stated_numbers(fig["key"], ctx)
        if rows:
            parts.append(_table(["quantity", "paper", "ours"], rows))
        shown = False
        for img in fig["images"]:
            if img in pngs:
                parts.append(_img(pngs[img], f"{fig['title']}: {img}"))
                parts.append(f"<p class='small'>{html.escape(img)}.png</p>")
                shown = True
        for s in present:
            if f"error:{s}" in pngs:
                parts.append(f"<p class='does-not-hold'>figure failed: {html.escape(pngs['error:' + s])}</p>")
        if not shown:
            parts.append("<p class='not-run'>no figure drawn for these results</p>")
    return "\n".join(parts)


CONSTANT_NAMES = ("regularization", "threshold", "noise_sd", "laplace_scale", "wishart_degrees_of_freedom", "delta",
                  "coefficient", "sigma", "clamped_entries", "clamped_x_entries", "clamped_y_entries")


def file_constants(ctx):
    """Rows (config, constant, range over cells) of the calibration constants stored in the files."""
    rows = []
    for stem, st in sorted(ctx.items()):
        for name in CONSTANT_NAMES:
            if name not in st.res.calibration:
                continue
            v = np.asarray(st.res.calibration[name], dtype=float)
            v = v[np.isfinite(v)]
            if v.size == 0:
                continue
            lo, hi = float(v.min()), float(v.max())
            rows.append((stem, name, _fmt(lo) if lo == hi else f"{_fmt(lo)} … {_fmt(hi)}"))
    return rows


CLAIM_ID = re.compile(r"\b(?:PB|LCSSF)-[0-9A-Za-z.]+(?:-[0-9A-Za-z.]+)*")


def evidence_anchors(entries):
    """Entry index -> the id of its evidence block, as claims_tables numbers them (per table)."""
    anchors = {}
    judged = [k for k, e in enumerate(entries) if e["verdict"] != "not run" or e.get("files")]
    for table in ("paper", "variant", "own"):
        rows = [k for k in judged if claims_mod._table_of(entries[k].get("setting", "paper")) == table]
        anchors.update({k: f"ev-{table}-{i}" for i, k in enumerate(rows)})
    return anchors


def _cited_verdicts(text, entries):
    """The computed verdicts of the claims a sentence cites (so the prose cannot state another)."""
    out = []
    anchors = evidence_anchors(entries)
    for cid in dict.fromkeys(CLAIM_ID.findall(text)):
        idx = [k for k, e in enumerate(entries) if e["id"] == cid and k in anchors]
        if idx:
            out.append(f"<code>{html.escape(cid)}</code>: " + "; ".join(
                f"<a href='#{anchors[k]}'>{html.escape((entries[k]['variant'] + ': ') if entries[k]['variant'] else '')}"
                f"{html.escape(entries[k]['verdict'])}</a>" for k in idx))
    return f" <span class='small'>[computed: {' | '.join(out)}]</span>" if out else ""


def present_figures(ctx):
    """The anchors of the figure sections the page holds for these results."""
    return {fig["key"] for fig in FIGURES if any(s in ctx for s in fig["stems"])}


def page(title, body):
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")


def build_report(results_dir, figures_dir=None, loaded=None):
    """The report's HTML for results_dir (also writes claims.json and claims.md there); ``loaded``:
    its files as load_results read them (read here if None)."""
    loaded = load_results(results_dir) if loaded is None else loaded
    ctx = loaded.ctx
    entries = note_empty_runs(claims_mod.evaluate(results_dir, ctx), loaded)
    with open(os.path.join(results_dir, "claims.json"), "w") as f:
        json.dump({"results_dir": results_dir, "z": claims_mod.Z95, "alpha": claims_mod.vr.ALPHA,
                   "rule": "plotting/verdict_rules.py", "bootstrap_draws": claims_mod.BOOTSTRAP_DRAWS,
                   **claims_mod.runs_summary(entries),
                   "headline": {st: claims_mod.headline(entries, st) for st in claims_mod.SETTINGS},
                   "claims": entries}, f, indent=1, ensure_ascii=False)
    with open(os.path.join(results_dir, "claims.md"), "w") as f:
        f.write(claims_mod.markdown(entries, results_dir))
    tmp = None
    if figures_dir is None:
        tmp = tempfile.TemporaryDirectory()
        figures_dir = tmp.name
    pngs = draw_figures(ctx, figures_dir)
    body = [f"<h1>dpmu reproduction report: {html.escape(os.path.abspath(results_dir))}</h1>",
            summary_html(entries),
            "<p>Peña &amp; Barrientos (2024), <i>Differentially private methods for managing model uncertainty in "
            "linear regression</i>, JMLR 25 (PB), and Lei, Charest, Slavković, Smith &amp; Fienberg (2018), "
            "<i>Differentially private model selection with penalized and constrained likelihood</i>, JRSS A "
            "(LCSSF). Every number and figure below is computed from the HDF5 results files; the verdicts are "
            "computed by <code>plotting/claims.py</code> with the one rule of <code>plotting/verdict_rules.py</code> "
            "(tests per setting with Monte Carlo SEs, Holm's family-wise control at α = 0.05).</p>",
            "<p>Results files: " + ", ".join(f"<code>{html.escape(st.path)}</code> ({st.res.replicates})"
                                            for st in ctx.values()) + "</p>",
            problems_html(loaded),
            "<ul><li><a href='#figures'>Figures</a></li><li><a href='#claims'>Claims</a> (<a href='#claims-paper'>the "
            "paper's setting</a>, <a href='#claims-variant'>variants and reconstructions</a>, <a href='#claims-own'>our "
            "own</a>)</li><li><a href='#findings'>Findings against the papers</a></li>"
            "<li><a href='#constants'>Reconstructed constants and data substitutions</a></li>"
            "<li><a href='#differences'>What differs from the paper</a></li></ul>",
            "<h2 id='figures'>Figures, the papers' captions and stated numbers beside ours</h2>",
            figure_sections(ctx, pngs),
            "<h2 id='claims'>Claims</h2>",
            "<p class='small'>Per setting: <i>supported</i> = the claim's one-sided test (inequalities) or TOST "
            "equivalence test (≈, close, similar, best: the paper's number ± its reading margin) rejects 'the claim "
            "is false here' at α = 0.05; <i>contradicted</i> = 'the claim is true here' is rejected after Holm's "
            "step-down correction over the claim's settings (family-wise error ≤ 0.05); <i>unresolved</i> = "
            "neither. " + " ".join(f"<span class='{_cls(v)}'>{html.escape(v)}</span> = {html.escape(d)}."
                                   for v, d in claims_mod.vr.LABELS.items()) +
            " The rule and its measured false-alarm rate: docs/claims.md. All settings with their numbers and "
            "p-values: <code>claims.json</code>. Rows not on the paper's setting are marked "
            "<span class='setting setting-variant'>variant</span> or "
            "<span class='setting setting-reconstruction'>reconstruction</span> with the reading used.</p>",
            claims_tables(entries, results_dir, present_figures(ctx)),
            "<h2 id='findings'>Findings against the papers</h2>",
            "<p class='small'>Where a correct implementation does not give what the paper says: the paper's number, "
            "ours (from this run's claims), the independent computation that confirms ours, and what a reader should "
            "conclude (plotting/findings.py; docs/reproduction.md has the same list for the full-size runs).</p>",
            findings_mod.findings_html(entries),
            "<h2 id='constants'>Reconstructed constants and data substitutions</h2>",
            _table(["constant (not given by the paper)", "our value", "where documented"], CONSTANTS),
            "<p>The constants as computed for these runs (from <code>/calibration</code>; range over the cells):</p>",
            _table(["config", "constant", "value"], file_constants(ctx)),
            _table(["data", "substitution"], SUBSTITUTIONS),
            "<h2 id='differences'>What differs from the paper</h2>",
            "<ul>" + "".join(f"<li>{html.escape(d)}{_cited_verdicts(d, entries)}</li>" for d in DIFFERENCES)
            + "</ul>"]
    out = page("dpmu reproduction report", "\n".join(body))
    if tmp is not None:
        tmp.cleanup()
    return out


def build_compare(old_dir, new_dir, old_loaded=None, new_loaded=None):
    """HTML comparing the claims, stated numbers and figures of two result sets (``*_loaded``: their
    files as load_results read them; read here if None)."""
    old_loaded = load_results(old_dir) if old_loaded is None else old_loaded
    new_loaded = load_results(new_dir) if new_loaded is None else new_loaded
    old_ctx, new_ctx = old_loaded.ctx, new_loaded.ctx
    old_e = note_empty_runs(claims_mod.evaluate(old_dir, old_ctx), old_loaded)
    new_e = note_empty_runs(claims_mod.evaluate(new_dir, new_ctx), new_loaded)
    key = lambda e: (e["id"], e["variant"])  # noqa: E731
    old_map = {key(e): e for e in old_e}
    rows, n_changed = [], 0
    for e in new_e:
        o = old_map.pop(key(e), None)
        ov = "absent" if o is None else claims_mod.summary_line(o)
        nv = claims_mod.summary_line(e)
        of = None if o is None else o["fraction"]
        changed = o is None or o["verdict"] != e["verdict"] or of != e["fraction"]
        n_changed += changed
        rows.append(f"<tr class='{'changed' if changed else ''}'><td><code>{html.escape(e['id'])}</code></td>"
                    f"<td class='small'>{html.escape(e['variant'])}</td><td>{html.escape(ov)}</td>"
                    f"<td>{html.escape(nv)}</td><td>{'' if of is None else f'{of:.2f}'} → "
                    f"{'' if e['fraction'] is None else format(e['fraction'], '.2f')}</td></tr>")
    for o in old_map.values():
        n_changed += 1
        rows.append(f"<tr class='changed'><td><code>{html.escape(o['id'])}</code></td><td>{html.escape(o['variant'])}"
                    f"</td><td>{html.escape(claims_mod.summary_line(o))}</td><td>absent</td><td></td></tr>")
    body = [f"<h1>dpmu report: {html.escape(old_dir)} → {html.escape(new_dir)}</h1>",
            problems_html(old_loaded, f"of {old_dir} "), problems_html(new_loaded, f"of {new_dir} "),
            f"<p>{n_changed} claim entries changed (highlighted).</p>",
            "<h2>Claims</h2><table><tr><th>id</th><th>variant</th><th>old</th><th>new</th><th>fraction</th></tr>",
            "\n".join(rows), "</table>", "<h2>Figures and stated numbers</h2>"]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        old_png, new_png = draw_figures(old_ctx, a), draw_figures(new_ctx, b)
        for fig in FIGURES:
            o_rows, n_rows = stated_numbers(fig["key"], old_ctx), stated_numbers(fig["key"], new_ctx)
            imgs = [i for i in fig["images"] if i in old_png or i in new_png]
            if not (o_rows or n_rows or imgs):
                continue
            body.append(f"<h3>{html.escape(fig['title'])}</h3>")
            o_map = {r[0]: r[2] for r in o_rows}
            table = []
            for q, paper, ours in n_rows:
                was = o_map.pop(q, "absent")
                table.append((q, paper, was, ours, "changed" if was != ours else ""))
            table += [(q, "", v, "absent", "changed") for q, v in o_map.items()]
            if table:
                body.append(_table(["quantity", "paper", "old", "new", ""], table))
            for i in imgs:
                od = _digest(old_png[i]) if i in old_png else None
                nd = _digest(new_png[i]) if i in new_png else None
                if od == nd:
                    body.append(f"<p class='small'>{html.escape(i)}: identical image</p>")
                    continue
                body.append(f"<p class='changed'>{html.escape(i)}: the image changed</p><table><tr><th>old</th><th>new"
                            "</th></tr><tr><td>" + (_img(old_png[i], f"old {i}") if od else "absent") + "</td><td>" +
                            (_img(new_png[i], f"new {i}") if nd else "absent") + "</td></tr></table>")
    return page("dpmu report comparison", "\n".join(body))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write the dpmu reproduction report (one HTML file).")
    parser.add_argument("results_dir", nargs="?")
    parser.add_argument("--out", default=None, help="HTML file (default RESULTS_DIR/report.html)")
    parser.add_argument("--figures", default=None, help="also keep the drawn figures in this folder")
    parser.add_argument("--compare", nargs=2, metavar=("OLD_DIR", "NEW_DIR"))
    args = parser.parse_args(argv)
    dirs = args.compare if args.compare else [args.results_dir]
    if not dirs[0]:
        parser.error("give RESULTS_DIR or --compare OLD_DIR NEW_DIR")
    for d in dirs:
        if not os.path.isdir(d):
            print(f"error: {d}: no such folder (give the folder of the results files)", file=sys.stderr)
            return 2
    # every output is checked before any work (reading and drawing take seconds to minutes)
    out = args.out or ("report_compare.html" if args.compare else os.path.join(args.results_dir, "report.html"))
    why = [_unwritable_file(out, "--out")]
    if not args.compare:
        why += [_unwritable_file(os.path.join(args.results_dir, name), "RESULTS_DIR:")
                for name in ("claims.json", "claims.md")]
        if args.figures:
            why.append(_unwritable_folder(args.figures, "--figures"))
    why = [w for w in why if w]
    if why:
        for w in why:
            print(f"error: {w}", file=sys.stderr)
        return 2
    loaded = []
    for d in dirs:
        lo = load_results(d)
        if not (lo.ctx or lo.problems or lo.empty):
            print(f"error: {d}: no dpmu results files (*.h5) found", file=sys.stderr)
            return 2
        loaded.append(lo)
    n_bad = sum(report_problems(lo, f"{d}: " if args.compare else "") for d, lo in zip(dirs, loaded))
    if args.compare:
        text = build_compare(*args.compare, *loaded)
    else:
        text = build_report(args.results_dir, args.figures, loaded[0])
    with open(out, "w") as f:
        f.write(text)
    print(out)
    if n_bad:
        print(f"report: {out} written without {n_bad} results file{'s' if n_bad != 1 else ''} that could not be "
              "read (named above and at the top of the page)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
