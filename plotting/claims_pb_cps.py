"""PB §5.1 and §5.2.2 (the CPS application, Figure 5): each claim a declaration beside the paper's
sentence (plotting/claims.py evaluates them)."""
import math

import numpy as np

import verdict_rules as vr  # noqa: F401
from claims_core import *  # noqa: F401,F403  (the declaration vocabulary: claim, Group, tests, accessors)
from claims_core import _config_of, _fmt, _num, _p, _retest_coverage, _sq  # noqa: F401


# ----------------------------------------------------------------------------------------------
# PB §5.2.2, Figure 5 (CPS)
# ----------------------------------------------------------------------------------------------

CPS_STEMS = ("fig5_cps", "fig5_cps_centred_age", "fig5_cps_public_bounds")
# Figure 5's horizontal ranges and peak densities, read off the paper's axes (§5.2.2)
PAPER_FIG5 = {1: ((-2.0, 2.0), 4.0), 3: ((-0.01, 0.01), 2000.0), 4: ((0.0, 0.04), 80.0)}
# Figure 5's horizontal tick spacing (β1: −2, −1, 0, 1, 2; β3: −0.010, 0.000, 0.010; β4: 0.00, 0.01, …, 0.04)
PAPER_FIG5_TICKS = {1: 1.0, 3: 0.01, 4: 0.01}


def _cps(ctx):
    return [(s, ctx[s]) for s in CPS_STEMS if s in ctx]


def _cps_panels(ctx):
    """Groups (one per CPS study) and, per group, the panels (st, mechanism, cell, i, j) of the
    histogram coefficients β_j (i = their index among the histograms)."""
    out = []
    for stem, st in _cps(ctx):
        coefs = np.asarray(st.res.calibration["histogram_coefficients"][0])
        coefs = coefs[np.isfinite(coefs)].astype(int)
        panels = [(st, mech, cell(st, mechanism=mech), i, int(j))
                  for mech in values(st, "mechanism") for i, j in enumerate(coefs)]
        out.append((Group(stem), panels))
    return out


def _width(st, c, i):
    return reps(st, "confidence_set_upper", c, i) - reps(st, "confidence_set_lower", c, i)


# "close" on Figure 5: relative to the spread the figure shows, i.e. within a tenth of the range the averaged
# histogram occupies (its central 98%); ours (the word class 'close' of docs/claims.md)
CLOSE_SHARE = 0.1


def close_test(d, se, width):
    """|DP posterior mean − non-private| ≤ CLOSE_SHARE × the central 98% range of the averaged
    histogram of the same panel (TOST)."""
    return approx_outcome(d, se, 0.0, CLOSE_SHARE * width)


@claim(id="PB-5.2.2-close", paper="PB", section="§5.2.2", figure="Figure 5",
       words="In all cases, the differentially private methods are close to the non-private answers.",
       quantity="average DP posterior mean E*(β_j|D) − non-private E(β_j|D), MC SE over runs",
       test="every (mechanism, j ∈ {1, 3, 4}, thresholded or not): the difference is within a tenth of the range "
            "the panel's averaged histogram occupies (its central 98%; TOST)",
       files=list(CPS_STEMS),
       margin="'close' relative to the spread Figure 5 shows: a tenth of the central 98% range of the averaged "
              "histogram of the same panel (ours). The earlier margin, a reading precision (tick spacing / 20), "
              "measured how well a number can be read, not what 'close' means on the figure")
def _cps_close(ctx):
    out = []
    for g, panels in _cps_panels(ctx):
        n_coef = len(panels) // len({p[1] for p in panels})
        st = panels[0][0] if panels else None
        for st, mech, c, i, j in panels:
            if j not in PAPER_FIG5:
                continue
            npm = st.res.calibration["non_private_posterior_mean"][c]
            dens, edges = _panel_density(st, c, i, n_coef)
            width = float(central_range(dens.mean(0), edges)) if len(dens) else math.nan
            for metric, lab in (("posterior_mean_non_thresholded", "non-thresholded"),
                                ("posterior_mean_thresholded", "thresholded")):
                m, se = mean_se(reps(st, metric, c, j - 1))
                d = m - npm[j - 1]
                g.add(f"{mech}, β{j}, {lab}", d, se, close_test(d, se, width), dp=m, non_private=npm[j - 1],
                      tolerance=CLOSE_SHARE * width, histogram_width=width)
        out.append(g)
    return out


def _retest_close(g, stored_all=None):
    """Stored rows of PB-5.2.2-close: the margin from the stored central 98% width of the same panel
    (PB-5.2.2-axes, 'width')."""
    widths = {}
    for e in (stored_all or {}).get("PB-5.2.2-axes", []):
        if e["variant"].startswith(g.label + ": central 98%"):
            for row in e["settings"]:
                widths[row["setting"]] = row.get("width")
    for row in g.settings:
        key = row["setting"].rsplit(", ", 1)[0]
        w = widths.get(key)
        if w is None:
            return None
        t = close_test(row["estimate"], row["se"] or 0.0, w)
        row.update(test=t["test"], p_support=_p(t["p_support"]), p_contradict=_p(t["p_contradict"]),
                   tolerance=CLOSE_SHARE * w, histogram_width=w)
    return g


RETESTS["PB-5.2.2-close"] = _retest_close


@claim(id="PB-5.2.2-spread", paper="PB", section="§5.2.2", figure="Figure 5",
       words="We can also see that the histograms are useful for quantifying the uncertainty introduced by the "
             "mechanism, since their spread increases when the thresholded and non-thresholded methods do not agree "
             "in their estimates.",
       quantity="Spearman correlation over runs between |thresholded − non-thresholded estimate| and the run "
                "histogram's spread, measured two ways: its sd (the histogram's own spread) and the width t_K − t_0 "
                "of its support (the 95% confidence interval of PB §5.1); bootstrap SE",
       test="every (mechanism, j ∈ {1, 3, 4}), each measure: correlation > 0",
       files=list(CPS_STEMS))
def _cps_spread(ctx):
    out = []
    for g, panels in _cps_panels(ctx):
        n_coef = len(panels) // len({p[1] for p in panels})
        stem = g.label
        g.label = stem + ": histogram sd"
        h = Group(stem + ": support width t_K − t_0")
        for st, mech, c, i, j in panels:
            dis = np.abs(reps(st, "posterior_mean_thresholded", c, j - 1) -
                         reps(st, "posterior_mean_non_thresholded", c, j - 1))
            dens = st.replicates("confidence_set_density")[c]
            k = dens.shape[1] // n_coef
            edges = np.asarray(st.res.calibration["histogram_edges"][c], dtype=float)[i * (k + 1):(i + 1) * (k + 1)]
            sd = histogram_sd(dens[:, i * k:(i + 1) * k], edges)
            ok = np.isfinite(dis) & np.isfinite(sd)
            est, se = _spearman_boot(dis[ok], sd[ok])
            g.add(f"{mech}, β{j}", est, se, sign_outcome(est, se, +1))
            width = _width(st, c, i)
            ok = np.isfinite(dis) & np.isfinite(width)
            est, se = _spearman_boot(dis[ok], width[ok])
            h.add(f"{mech}, β{j}", est, se, sign_outcome(est, se, +1))
        out += [g, h]
    return out


def histogram_sd(density, edges):
    """Standard deviation of density histograms [..., K] on ``edges`` (mass at the bin midpoints)."""
    density = np.asarray(density, dtype=float)
    edges = np.asarray(edges, dtype=float)
    w = density * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        w = w / w.sum(-1, keepdims=True)
        mean = (w * mid).sum(-1, keepdims=True)
        return np.sqrt((w * (mid - mean) ** 2).sum(-1))


def _rank(a):
    return np.argsort(np.argsort(a, axis=-1), axis=-1).astype(float)


def _spearman_boot(x, y, draws=BOOTSTRAP_DRAWS, seed=BOOTSTRAP_SEED):
    if len(x) < 3:
        return math.nan, math.nan

    def rho(xx, yy):
        rx, ry = _rank(xx), _rank(yy)
        rx -= rx.mean(axis=-1, keepdims=True)
        ry -= ry.mean(axis=-1, keepdims=True)
        return (rx * ry).sum(-1) / np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1))
    est = float(rho(x[None], y[None])[0])
    idx = np.random.default_rng(seed).integers(0, len(x), size=(draws, len(x)))
    return est, float(np.std(rho(x[idx], y[idx]), ddof=1))


def central_range(density, edges, mass=0.98):
    """Width of the central ``mass`` of a density histogram on ``edges`` (linear within a bin);
    ``density`` [..., K] gives [...] widths (NaN where the histogram is empty)."""
    density = np.asarray(density, dtype=float)
    edges = np.asarray(edges, dtype=float)
    m = density * np.diff(edges)
    tot = m.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        cdf = np.concatenate([np.zeros(m.shape[:-1] + (1,)), np.cumsum(m, -1)], -1) / tot
    lo_q, hi_q = (1 - mass) / 2, 1 - (1 - mass) / 2
    flat = cdf.reshape(-1, cdf.shape[-1])
    out = np.array([np.interp(hi_q, f, edges) - np.interp(lo_q, f, edges) if np.all(np.isfinite(f)) else math.nan
                    for f in flat])
    return out.reshape(cdf.shape[:-1])


def _panel_density(st, c, i, n_coef):
    """Per-run density histogram [R, K] of the i-th histogram coefficient and its edges [K + 1]."""
    dens = st.replicates("confidence_set_density")[c]  # [R, m K]
    k = dens.shape[1] // n_coef
    d = dens[:, i * k:(i + 1) * k]
    edges = np.asarray(st.res.calibration["histogram_edges"][c], dtype=float)[i * (k + 1):(i + 1) * (k + 1)]
    return d[np.all(np.isfinite(d), axis=1)], edges


@claim(id="PB-5.2.2-axes", paper="PB", section="§5.2.2", figure="Figure 5", kind="comparison",
       words="(Figure 5's axes) β1 on [−2, 2] with densities up to ≈ 4; β3 on [−0.010, 0.010] up to ≈ 2 000; β4 on "
             "[0, 0.04] up to ≈ 80.",
       quantity="the width of the central 98% of the averaged histogram (the paper's figure averages the runs' "
                "histograms; its axis spans that average, not one run's support) divided by the width of the "
                "paper's axis, and the peak of the averaged density over the paper's peak; bootstrap SE over runs",
       test="every (mechanism, j): width ratio within [0.5, 2], and peak ratio within [0.5, 2] (same scale as the "
            "paper's figure within a factor 2; TOST)",
       files=list(CPS_STEMS), margin="'the same scale' = within a factor 2 of the paper's axis width and peak (ours)")
def _cps_axes(ctx):
    out = []
    for g, panels in _cps_panels(ctx):
        n_coef = len(panels) // len({p[1] for p in panels})
        stem = g.label
        g.label = stem + ": central 98% of the averaged histogram / the paper's axis width"
        for st, mech, c, i, j in panels:
            if j in PAPER_FIG5:
                (lo, hi), peak = PAPER_FIG5[j]
                d, edges = _panel_density(st, c, i, n_coef)
                if len(d) < 2:
                    continue
                idx = np.random.default_rng(BOOTSTRAP_SEED).integers(0, len(d), size=(BOOTSTRAP_DRAWS, len(d)))
                w = float(central_range(d.mean(0), edges))
                wse = float(np.nanstd(central_range(d[idx].mean(1), edges), ddof=1))
                r, rse = w / (hi - lo), wse / (hi - lo)
                g.add(f"{mech}, β{j}", r, rse, interval_outcome(r, rse, 0.5, 2.0), width=w, paper_axis_width=hi - lo,
                      median_run_width=float(np.median(_width(st, c, i)[np.isfinite(_width(st, c, i))])))
        out.append(g)
        h = Group(stem + ": peak of the averaged density / the paper's peak")
        for st, mech, c, i, j in panels:
            if j in PAPER_FIG5:
                peak = PAPER_FIG5[j][1]
                d, _ = _panel_density(st, c, i, n_coef)
                idx = np.random.default_rng(BOOTSTRAP_SEED).integers(0, len(d), size=(BOOTSTRAP_DRAWS, len(d)))
                est = float(d.mean(0).max()) / peak
                se = float(np.std(d[idx].mean(1).max(-1), ddof=1)) / peak
                h.add(f"{mech}, β{j}", est, se, interval_outcome(est, se, 0.5, 2.0), peak=est * peak, paper_peak=peak)
        out.append(h)
    return out


@claim(id="PB-5.2.2-permuted-pip", paper="PB", section="§5.2.2", figure="Figure 5",
       words="To provide a more challenging benchmark for our methods, we permute the rows for marital status and "
             "education in the design matrix to artificially make the inclusion probabilities for β3 and β5 close "
             "to zero.",
       quantity="non-private posterior inclusion probabilities of the permuted predictors (exact)",
       test="PIP(β3) and PIP(β5) ≤ 0.1 ('close to zero')",
       files=list(CPS_STEMS), margin="'close to zero' = at most 0.1 (ours)")
def _cps_pip(ctx):
    out = []
    for stem, st in _cps(ctx):
        g = Group(stem)
        pip = st.res.calibration["non_private_pip"][0]
        for j in (3, 5):
            g.add(f"β{j}", float(pip[j - 1]), 0.0, interval_outcome(float(pip[j - 1]), 0.0, 0.0, 0.1))
        out.append(g)
    return out


@claim(id="PB-5.2.2-nonprivate-pip-one", paper="PB", section="§5.2.2", figure="Figure 5 (data)",
       words="In this application, the non-private inclusion probabilities are all close to one.",
       quantity="non-private posterior inclusion probabilities of the CPS predictors (exact)",
       test="every predictor: PIP ≥ 0.9 ('close to one', the mirror of 'close to zero' ≤ 0.1 in "
            "PB-5.2.2-permuted-pip). The sentence is about the unpermuted data; the CPS configs permute marital "
            "status and education (β3, β5), so only β1, β2, β4, β6 are computed (in the permuted design)",
       files=list(CPS_STEMS),
       margin="'close to one' = within 0.1 of 1 (ours; a probability axis of the paper has ticks 0.25 apart)")
def _cps_pip_one(ctx):
    out = []
    for stem, st in _cps(ctx):
        g = Group(f"{stem}: unpermuted predictors β1, β2, β4, β6 (β3, β5 need a config without 'permute')")
        pip = st.res.calibration["non_private_pip"][0]
        for j in (1, 2, 4, 6):
            if j - 1 < len(pip):
                g.add(f"β{j}", float(pip[j - 1]), 0.0, interval_outcome(float(pip[j - 1]), 0.0, 0.9, 1.0))
        out.append(g)
    return out


@claim(id="PB-5.1-support-coverage", paper="PB", section="§5.1", figure="Figure 5",
       words="While Hist(T, Ĉ1−α) displays the distribution of the estimator of T(G) constrained to T(Ĉ1−α), its "
             "support, denoted by [t0, tK], corresponds to an 1 − α confidence interval.",
       quantity="coverage over runs of the non-private E(β_j|D) by the run's [t0, tK] (1 − α = 0.95, "
                "non-thresholded G*_r): k of n runs, exact binomial test",
       test="every (mechanism, j ∈ {1, 3, 4}): coverage ≥ 0.945 (one-sided; 0.95 less half a unit of its last "
            "printed digit; a confidence interval may over-cover)",
       files=list(CPS_STEMS),
       margin="'95%' printed: half a unit of the last digit, 0.005 below 0.95; a confidence interval may "
              "over-cover")
def _cps_coverage(ctx):
    out = []
    for g, panels in _cps_panels(ctx):
        g.label += ": coverage of the non-private posterior mean"
        for st, mech, c, i, j in panels:
            npm = float(st.res.calibration["non_private_posterior_mean"][c][j - 1])
            lo, hi = reps(st, "confidence_set_lower", c, i), reps(st, "confidence_set_upper", c, i)
            ok = np.isfinite(lo) & np.isfinite(hi)
            cov = ((lo[ok] <= npm) & (npm <= hi[ok])).astype(float)
            m, _ = mean_se(cov)
            n = int(ok.sum())
            g.add(f"{mech}, β{j}", m, binomial_se(m, n), coverage_test(round(m * n), n, SUPPORT_COVERAGE_BOUND),
                  runs=n)
        out.append(g)
    return out


RETESTS["PB-5.1-support-coverage"] = _retest_coverage(lambda row: SUPPORT_COVERAGE_BOUND)


@claim(id="PB-5.1-gram-coverage", paper="PB", section="§5.1", figure="Figure 5 (its confidence sets)",
       words="By the logic of the parametric bootstrap, the set Ĉ1−α = {G* − E_i : ‖E_i‖ ≤ q̂1−α} ∩ S++ approximates "
             "a 1 − α confidence set for G (Frobenius norm).",
       quantity="coverage over runs of the confidential G by the run's set (metric confidence_set_covers_gram: "
                "‖G* − G‖ ≤ q̂), k of n runs, exact binomial",
       test="every (study, mechanism): coverage ≥ 0.945 (one-sided, as PB-5.1-support-coverage)",
       files=list(CPS_STEMS), margin="'1 − α' = 0.95 printed: 0.005 below it (as PB-5.1-support-coverage)")
def _gram_coverage(ctx):
    out = []
    for stem, st in _cps(ctx):
        g = Group(f"{stem}: coverage of G by the §5.1 set")
        if "confidence_set_covers_gram" not in st.res.summary:
            g.note = (f"{st.path} has no metric confidence_set_covers_gram (written before it existed): re-run "
                      f"{_config_of(stem)}")
            out.append(g)
            continue
        for mech in values(st, "mechanism"):
            c = cell(st, mechanism=mech)
            x = reps(st, "confidence_set_covers_gram", c)
            ok = np.isfinite(x)
            n = int(ok.sum())
            m = float(x[ok].mean()) if n else math.nan
            g.add(f"{mech}", m, binomial_se(m, n), coverage_test(round(m * n), n, SUPPORT_COVERAGE_BOUND), runs=n)
        out.append(g)
    return out
