"""PB §4 and Appendix B (HSB: Figures 1, 2, 6, 7; the type-I study; §4.2's interval; the H11 runs):
each claim a declaration beside the paper's sentence (plotting/claims.py evaluates them)."""
import math

import numpy as np

import verdict_rules as vr  # noqa: F401
from claims_core import *  # noqa: F401,F403  (the declaration vocabulary: claim, Group, tests, accessors)
from claims_core import _config_of, _fmt, _num, _p, _retest_coverage, _sq  # noqa: F401


# ----------------------------------------------------------------------------------------------
# PB §4.4, Figure 1
# ----------------------------------------------------------------------------------------------

claim(id="PB-4.4-fig1-spread-eps", paper="PB", section="§4.4", figure="Figure 1",
       words="As expected, increasing ε and M reduces the variability in P*(H11|D) and P*(H12|D).",
       quantity="interquartile range of P*(H1|D) (the figure's error bars), bootstrap SE",
       test="for every test and M, and every consecutive pair of ε values: IQR(larger ε) − IQR(smaller ε) < 0",
       files=["fig1_hsb_posterior"])(
    monotone_check("fig1_hsb_posterior", "posterior_probability_h1", "iqr", "epsilon", ("test", "num_subsets"), -1,
                   "IQR"))


claim(id="PB-4.4-fig1-spread-M", paper="PB", section="§4.4", figure="Figure 1",
       words="As expected, increasing ε and M reduces the variability in P*(H11|D) and P*(H12|D).",
       quantity="interquartile range of P*(H1|D), bootstrap SE",
       test="for every test and ε, and every consecutive pair of M values: IQR(larger M) − IQR(smaller M) < 0",
       files=["fig1_hsb_posterior"])(
    monotone_check("fig1_hsb_posterior", "posterior_probability_h1", "iqr", "num_subsets", ("test", "epsilon"), -1,
                   "IQR"))


def _shrinkage(ctx, stem, fixed_names):
    st = ctx[stem]
    g = Group("")
    away = lambda v: np.abs(v - 0.5)  # noqa: E731
    for fixed in grid(st, *fixed_names):
        ms = [m for m in values(st, "num_subsets") if cell(st, **fixed, num_subsets=m) is not None]
        for a, b in pairs(ms):
            ca, cb = cell(st, **fixed, num_subsets=a), cell(st, **fixed, num_subsets=b)
            sa = boot_of(st, "posterior_probability_h1", ca, "median", away)
            sb = boot_of(st, "posterior_probability_h1", cb, "median", away)
            d, se = diff(sb, sa)
            desc = ", ".join(f"{k}={v}" for k, v in fixed.items())
            g.add(f"{desc}; M {a}→{b}", d, se, sign_outcome(d, se, -1),
                  **{f"median_at_M{a}": st.boot("posterior_probability_h1", ca, "median")[0],
                     f"median_at_M{b}": st.boot("posterior_probability_h1", cb, "median")[0]})
    return [g]


@claim(id="PB-4.4-fig1-shrinkage", paper="PB", section="§4.4", figure="Figure 1",
       words="Additionally, M induces a conservative bias, in the sense that the posterior probabilities are "
             "shrunk towards 0.5.",
       quantity="|median P*(H1|D) − 0.5| (the figure's midpoints), bootstrap SE",
       test="for every test and ε, and every consecutive pair of M values: |median − 0.5| decreases",
       files=["fig1_hsb_posterior"])
def _fig1_shrinkage(ctx):
    return _shrinkage(ctx, "fig1_hsb_posterior", ("test", "epsilon"))


# A number read off one of the paper's probability axes (ticks 0.25 apart, as on Figures 4 and 6):
# read to a tenth of a tick, margin half of that (verdict_rules.reading_margin)
PROBABILITY_AXIS_MARGIN = vr.reading_margin(tick_spacing=0.25)
FIG1_MARGIN = ("≈ 0.25 and ≈ 0.70 are read off Figure 1's probability axis: ± 0.0125 = half of a tenth of the "
               "0.25 tick spacing (verdict_rules.reading_margin; the axis of Figures 4 and 6 — Figure 1's ticks "
               "are not in the text we have). The printed digits alone (± 0.005) are tighter than a figure can "
               "be read.")


def _approx(ctx, test, target, large_eps=(4.0, 8.0)):
    st = ctx["fig1_hsb_posterior"]
    m_ = PROBABILITY_AXIS_MARGIN
    g = Group("", note=f"margin: {target:.2f} ± {m_:g} (reading margin of the figure's axis)")
    for eps in large_eps:
        c = cell(st, test=test, num_subsets=10, epsilon=eps)
        if c is None:
            continue
        m, se = boot_of(st, "posterior_probability_h1", c, "median")
        g.add(f"M=10, ε={eps:g}", m, se, approx_outcome(m, se, target, m_),
              paper=target, distance_in_se=(m - target) / se if se > 0 else math.nan)
    return [g]


@claim(id="PB-4.4-fig1-M10-H11", paper="PB", section="§4.4", figure="Figure 1",
       words="For example, if M = 10 and ε is large, P*(H11|D) ≈ 0.25.",
       quantity="median of P*(H11|D) at M = 10, bootstrap SE",
       test="at M = 10 and ε ∈ {4, 8} (the large ε of the grid): the median is within 0.25 ± 0.0125 (TOST)",
       files=["fig1_hsb_posterior"], margin=FIG1_MARGIN)
def _fig1_h11(ctx):
    return _approx(ctx, "H1", 0.25)


@claim(id="PB-4.4-fig1-M10-H12", paper="PB", section="§4.4", figure="Figure 1",
       words="For example, if M = 10 and ε is large, … P*(H12|D) ≈ 0.70.",
       quantity="median of P*(H12|D) at M = 10, bootstrap SE",
       test="at M = 10 and ε ∈ {4, 8}: the median is within 0.70 ± 0.0125 (TOST)",
       files=["fig1_hsb_posterior"], margin=FIG1_MARGIN)
def _fig1_h12(ctx):
    return _approx(ctx, "H2", 0.70)


@claim(id="PB-4.4-nonprivate", paper="PB", section="§4.4", figure="Figure 1",
       words="… more conservative than the confidential answers P(H11|D) ≈ 0.07 and P(H12|D) ≈ 0.99.",
       quantity="non-private posterior probability (exact, no Monte Carlo error)",
       test="P(H11|D) in [0.065, 0.075]; P(H12|D) in [0.985, 1] (\"≈ 0.99\"; \"near 1\" in App. B)",
       files=["fig1_hsb_posterior"],
       margin="printed numbers: half a unit of the last printed digit, ± 0.005 (0.99 is also \"near 1\" in App. B, "
              "so its interval extends to 1)")
def _nonprivate(ctx):
    st = ctx["fig1_hsb_posterior"]
    g = Group("")
    for test, (lo, hi) in (("H1", (0.065, 0.075)), ("H2", (0.985, 1.0))):
        c = st.res.select(test=test)[0]
        v = float(st.res.calibration["non_private_posterior_probability_h1"][c, 0])
        g.add(f"{HSB_TESTS[test][0]}", v, 0.0, interval_outcome(v, 0.0, lo, hi))
    return [g]


# ----------------------------------------------------------------------------------------------
# PB §4.4, Figure 2
# ----------------------------------------------------------------------------------------------

LEVELS = (0.05, 0.01)
POWER_MARGIN = 0.05  # "performed well", "best" for a power that no figure prints (ours)


def _critical(ctx, deltas, ms, direction):
    st = ctx["fig2_hsb_likelihood_ratio"]
    out = []
    for cal in values(st, "gaussian_calibration"):
        g = Group(f"Gaussian calibration: {cal}")
        for test in values(st, "test"):
            for m in ms:
                for delta in deltas:
                    c = cell(st, test=test, num_subsets=m, delta=delta, gaussian_calibration=cal)
                    if c is None:
                        continue
                    cc = st.res.calibration["critical_value_corrected"][c]
                    se = st.res.calibration["critical_value_corrected_mcse"][c]
                    cu = st.res.calibration["critical_value_uncorrected"][c]
                    for k, alpha in enumerate(LEVELS):
                        d = cc[k] - cu[k]
                        g.add(f"test {HSB_TESTS[test][0]}, M={m}, δ={delta:g}, α={alpha:g}", d, se[k],
                              sign_outcome(d, se[k], direction), corrected=cc[k], uncorrected=cu[k])
        out.append(g)
    return out


@claim(id="PB-4.4-fig2-corrected-above", paper="PB", section="§4.4", figure="Figure 2",
       words="When δ is small and M ∈ {2, 5}, the corrected critical values (gray + and △) are larger than the "
             "uncorrected ones (black + and △), so if we did not correct the critical values, we would have "
             "inflated type I errors.",
       quantity="corrected − uncorrected critical value of 2 log Λ* (MC SE of the corrected value)",
       test="for both tests, M ∈ {2, 5}, the small δ of the grid (0.01), α ∈ {0.05, 0.01}: difference > 0",
       files=["fig2_hsb_likelihood_ratio"])
def _fig2a(ctx):
    return _critical(ctx, (0.01,), (2, 5), +1)


@claim(id="PB-4.4-fig2-corrected-below", paper="PB", section="§4.4", figure="Figure 2",
       words="For larger δ and M = 10, the corrected critical points are lower than the uncorrected ones, showing "
             "that correcting critical values can increase power.",
       quantity="corrected − uncorrected critical value of 2 log Λ*",
       test="for both tests, M = 10, δ ∈ {0.25, 0.5, 0.75}, α ∈ {0.05, 0.01}: difference < 0",
       files=["fig2_hsb_likelihood_ratio"])
def _fig2b(ctx):
    return _critical(ctx, (0.25, 0.5, 0.75), (10,), -1)


def _rates(st, metric, cal_values=None, **cond):
    """Rejection rate at α = 0.05 with its binomial MC SE for the matching cell."""
    c = cell(st, **cond)
    if c is None:
        return None
    mean = st.res.summary[metric]["mean"][c]
    n = st.res.summary[metric]["n_ok"][c]
    rate, n = float(np.ravel(mean)[0]), int(np.ravel(n)[0])
    return rate, binomial_se(rate, n)


@claim(id="PB-4.4-fig2-H11-below", paper="PB", section="§4.4", figure="Figure 2 (c)",
       words="The distribution of 2 log Λ*10,1 is generally below the corrected critical values, which coincides "
             "with the confidential decision of not rejecting the null.",
       quantity="fraction of releases of 2 log Λ*10,1 above the corrected 0.05 critical value (the paper's "
                "test: reject iff T* > c), binomial MC SE",
       test="for every M and δ: fraction − 0.25 < 0, i.e. the third quartile (the top of the figure's bar) "
            "is below the critical value",
       files=["fig2_hsb_likelihood_ratio"])
def _fig2c(ctx):
    st = ctx["fig2_hsb_likelihood_ratio"]
    out = []
    for cal in values(st, "gaussian_calibration"):
        g = Group(f"Gaussian calibration: {cal}")
        for m in values(st, "num_subsets"):
            for delta in values(st, "delta"):
                r = _rates(st, "reject_corrected", test="H1", num_subsets=m, delta=delta, gaussian_calibration=cal)
                if r:
                    g.add(f"M={m}, δ={delta:g}", r[0] - 0.25, r[1], sign_outcome(r[0] - 0.25, r[1], -1),
                          rejection_rate=r[0])
        out.append(g)
    return out


def _in_stated(setting, ms_special, deltas_special):
    """Whether a setting label 'M=5, δ=0.25' lies in the stated region (M, δ)."""
    parts = dict(p.split("=") for p in str(setting).split(", "))
    return int(parts["M"]) in ms_special and float(parts["δ"]) in deltas_special


def _scoped_most(label, rows, ms_special, deltas_special):
    """"Rejects most of the time …, especially when X", scoped: (1) in X every setting
    rejects more than half of the time; (2) over every (M, δ) a majority of the settings do (the
    sentence's general 'most of the time', not a universal)."""
    region = Group(label + " — rejects most of the time where stated (M > 2, δ ≥ 0.25)",
                   [dict(r) for r in rows if _in_stated(r["setting"], ms_special, deltas_special)])
    every = Group(label + " — rejects most of the time in most (M, δ)", [dict(r) for r in rows], quantifier="most")
    return [region, every]


def _power_especially(st, metric, base, ms_special, deltas_special, label):
    """Power > 0.5 in the stated settings and in most settings, and "especially" in the stated
    settings: the mean power there exceeds the mean power over the other settings (a comparison of
    two groups, not a universal)."""
    g_most = Group(label)
    g_esp = Group(label + " — especially for the stated settings (mean power there vs elsewhere)")
    ms, deltas = values(st, "num_subsets"), values(st, "delta")
    special, reference = [], []
    for m in ms:
        for delta in deltas:
            r = _rates(st, metric, **base, num_subsets=m, delta=delta)
            if r is None:
                continue
            g_most.add(f"M={m}, δ={delta:g}", r[0] - 0.5, r[1], sign_outcome(r[0] - 0.5, r[1], +1),
                       rejection_rate=r[0])
            (special if m in ms_special and delta in deltas_special else reference).append(r)
    if special and reference:
        g_esp.especially(f"M ∈ {sorted(ms_special)}, δ ∈ {sorted(deltas_special)} vs the other (M, δ)", special,
                         reference, +1, mean_special=float(np.mean([a for a, _ in special])),
                         mean_reference=float(np.mean([a for a, _ in reference])))
    return _scoped_most(label, g_most.settings, ms_special, deltas_special) + [g_esp]


@claim(id="PB-4.4-fig2-H12-rejects", paper="PB", section="§4.4", figure="Figure 2 (d)",
       words="In the case of 2 log Λ*10,2, corrected tests would reject the null most of the time, in agreement "
             "with the confidential answer, especially when M > 2 and δ ≥ 0.25.",
       quantity="rejection rate of H02 at 0.05 with corrected critical values, binomial MC SE",
       test="(1) at every (M, δ) with M > 2, δ ≥ 0.25 (the stated settings): rate − 0.5 > 0 (\"most of the time\" = "
            "more than half of the releases); (2) in most (M, δ) of the grid (a majority, Clopper–Pearson): rate > 0.5; "
            "(3) \"especially\": the mean rate over M > 2, δ ≥ 0.25 exceeds the mean rate over the other (M, δ). "
            "Paper's test (reject iff T* > c) and, separately, ours (randomized at the atom T* = U)",
       files=["fig2_hsb_likelihood_ratio"])
def _fig2d(ctx):
    st = ctx["fig2_hsb_likelihood_ratio"]
    out = []
    for metric, name in (("reject_corrected", "paper's test"), ("reject_corrected_randomized", "ours, randomized")):
        for cal in values(st, "gaussian_calibration"):
            out += _power_especially(st, metric, dict(test="H2", gaussian_calibration=cal), (5, 10),
                                     (0.25, 0.5, 0.75), f"{name}, calibration {cal}")
    return out


def _retest_h12(g, stored_all=None):
    if g.label.endswith(" — rejects most of the time"):
        return _scoped_most(g.label[:-len(" — rejects most of the time")], g.settings, (5, 10), (0.25, 0.5, 0.75))
    return g


RETESTS["PB-4.4-fig2-H12-rejects"] = _retest_h12


def _retest_tradeoff(g, stored_all=None):
    """Stored rows of PB-4.4-sensitivity-tradeoff: the bias and power groups are existential ('can')."""
    if g.label.startswith("bias: narrowest U vs widest U"):
        return Group("can introduce bias: narrowest U vs widest U (some setting)", g.settings, g.note, "can")
    if g.label.startswith("power at the narrowest U below 0.5"):
        return Group("can lead to tests that are not powerful: power at the narrowest U below 0.5 (some setting)",
                     g.settings, g.note, "can")
    return g


RETESTS["PB-4.4-sensitivity-tradeoff"] = _retest_tradeoff


@claim(id="PB-4.4-fig2-nonprivate", paper="PB", section="§4.4, App. B", figure="Figures 2, 7",
       words="The non-private test of H01 against H11 does not reject H01 at the 0.01 or 0.05 significance levels, "
             "whereas the non-private test of H02 against H12 rejects H02 at the 0.01 and 0.05 significance levels. "
             "In fact, 2 log Λ10,2 is greater than U [= 7]. … The true, non-private likelihood ratio is above 10.",
       quantity="non-private 2 log Λ10 (exact) against the χ²₁ critical values 3.84 and 6.63",
       test="2 log Λ10,1 < 3.84; 2 log Λ10,2 > 7 (hence > 6.63) and > 10",
       files=["fig2_hsb_likelihood_ratio", "fig7_hsb_lr_censoring"])
def _fig2_np(ctx):
    g = Group("")
    for stem in ("fig2_hsb_likelihood_ratio", "fig7_hsb_lr_censoring"):
        if stem not in ctx:
            continue
        st = ctx[stem]
        for test in (values(st, "test") or ["H2"]):
            c = int(st.res.select(test=test)[0]) if "test" in st.res.cells else 0
            v = float(st.res.calibration["non_private_log_statistic"][c, 0])
            cu = st.res.calibration["critical_value_uncorrected"][c]
            if test == "H1":
                g.add(f"{stem}: 2 log Λ10,1 vs χ²₁ 0.05 value", v - cu[0], 0.0, sign_outcome(v - cu[0], 0.0, -1),
                      statistic=v)
            else:
                for bound, lab in ((7.0, "U = 7"), (10.0, "10")):
                    g.add(f"{stem}: 2 log Λ10,2 vs {lab}", v - bound, 0.0, sign_outcome(v - bound, 0.0, +1),
                          statistic=v)
    return [g]


@claim(id="PB-4.5-U-twice", paper="PB", section="§4.5 (guidelines)", figure="Figure 7",
       words="In the case of likelihood ratios, we recommend setting the lower censoring bound L to 0 … and let the "
             "upper censoring value be greater than the critical value for rejection of the non-private test to "
             "avoid loss of power. Setting U to approximately twice the critical value performed well in our "
             "applications.",
       quantity="power at U = 7 (≈ 2 × 3.84) minus the best power over U ∈ {1, 2, 7, 10}, the paper's plain test",
       test="every (calibration, M, δ): the shortfall is ≥ −0.05 (one-sided; 'performed well' = within 0.05 of "
            "the best U; 0 when U = 7 is the best)",
       files=["fig7_hsb_lr_censoring"],
       margin="power is not printed or plotted (Figure 7 shows the statistic): 'performed well' / 'best' = within "
              "0.05 of the best power, ours; the same margin for PB-B-fig7-power's 'U = 10 best'")
def _u_twice(ctx):
    st = ctx["fig7_hsb_lr_censoring"]
    out = []
    for cal in values(st, "gaussian_calibration"):
        g = Group(f"calibration {cal}")
        for m in values(st, "num_subsets"):
            for delta in values(st, "delta"):
                rates = {u: _rates(st, "reject_corrected", gaussian_calibration=cal, censor_upper=u, num_subsets=m,
                                   delta=delta) for u in values(st, "censor_upper")}
                if 7 not in rates:
                    continue
                best_u = max(rates, key=lambda u: rates[u][0])
                d, se = diff(rates[7], rates[best_u]) if best_u != 7 else (0.0, 0.0)
                g.add(f"M={m}, δ={delta:g} (best U = {best_u:g})", d, se,
                      interval_outcome(d, se, -POWER_MARGIN, math.inf),
                      power_U7=rates[7][0], power_best=rates[best_u][0])
        out.append(g)
    return out


# ----------------------------------------------------------------------------------------------
# PB §4.3 (bias and variance of T~), checked on the HSB runs
# ----------------------------------------------------------------------------------------------

HSB_STUDIES = ("fig1_hsb_posterior", "fig6_hsb_censoring", "fig2_hsb_likelihood_ratio", "fig7_hsb_lr_censoring")


@claim(id="PB-4.3-variance-M", paper="PB", section="§4.3", figure="Figures 1, 2, 6, 7",
       words="The variance of T~ is clearly decreasing in the number of subgroups M.",
       quantity="standard deviation of T~ = Σ T_i^c / M + η (before the release's second censoring), bootstrap SE",
       test="in every HSB study and every setting of the other parameters, for consecutive M: sd(larger M) − "
            "sd(smaller M) < 0",
       files=list(HSB_STUDIES))
def _var_m(ctx):
    out = []
    for stem in HSB_STUDIES:
        if stem not in ctx:
            continue
        st = ctx[stem]
        others = [n for n in ("test", "censor_lower", "censor_upper", "epsilon", "delta", "gaussian_calibration")
                  if n in st.res.cells and len(values(st, n)) > 1]
        g = Group(stem)
        monotone(g, st, "noisy_statistic", "sd", "num_subsets", grid(st, *others), -1, "sd")
        out.append(g)
    return out


@claim(id="PB-4.3-variance-sensitivity", paper="PB", section="§4.3", figure="Figures 6, 7",
       words="… and it is increasing in the sensitivity Δ = U − L because Var(T_i^c) is increasing in Δ.",
       quantity="standard deviation of T~ against the censoring limits, bootstrap SE",
       test="Figures 6 and 7 (the studies that vary the limits): for every (M, ε or δ, calibration) and "
            "consecutive widths Δ: sd(wider) − sd(narrower) > 0",
       files=["fig6_hsb_censoring", "fig7_hsb_lr_censoring"])
def _var_delta(ctx):
    out = []
    for stem, axis, others in (("fig6_hsb_censoring", "censor_upper", ("num_subsets", "epsilon")),
                               ("fig7_hsb_lr_censoring", "censor_upper",
                                ("num_subsets", "delta", "gaussian_calibration"))):
        if stem not in ctx:
            continue
        st = ctx[stem]
        g = Group(stem)
        monotone(g, st, "noisy_statistic", "sd", axis, grid(st, *others), +1, "sd")
        out.append(g)
    return out


def _total_bias(st, c):
    """|E(T~) − 𝒯| with 𝒯 the non-private statistic on the same scale (the censoring limits' scale)."""
    npl = float(st.res.calibration["non_private_log_statistic"][c, 0])
    x = reps(st, "noisy_statistic", c)
    m, se = mean_se(x)
    return abs(m - npl), se, m, npl


@claim(id="PB-4.3-censoring-bias-sensitivity", paper="PB", section="§4.3", figure="Figures 6, 7",
       words="The censoring bias is decreasing in the sensitivity Δ and the number of subgroups M. … In the case "
             "of log-likelihood ratio statistics, the censoring bias … is decreasing in the upper censoring limit U "
             "and the number of subgroups M.",
       quantity="|E(T~) − 𝒯| (𝒯 = the non-private statistic); at fixed M the splitting bias does not depend on "
                "the limits, so its change across limits is the change of the censoring bias; MC SE",
       test="Figures 6 and 7: for every (M, ε or δ, calibration) and consecutive widths: |bias|(wider) − "
            "|bias|(narrower) < 0. (The dependence on M is not separable from the splitting bias with these "
            "runs; see PB-4.3-splitting-bias.)",
       files=["fig6_hsb_censoring", "fig7_hsb_lr_censoring"])
def _cens_bias(ctx):
    out = []
    for stem, others in (("fig6_hsb_censoring", ("num_subsets", "epsilon")),
                         ("fig7_hsb_lr_censoring", ("num_subsets", "delta", "gaussian_calibration"))):
        if stem not in ctx:
            continue
        st = ctx[stem]
        g = Group(stem)
        for fixed in grid(st, *others):
            us = [u for u in values(st, "censor_upper") if cell(st, **fixed, censor_upper=u) is not None]
            for a, b in pairs(us):
                ba = _total_bias(st, cell(st, **fixed, censor_upper=a))
                bb = _total_bias(st, cell(st, **fixed, censor_upper=b))
                d, se = diff(bb[:2], ba[:2])
                desc = ", ".join(f"{k}={v}" for k, v in fixed.items())
                g.add(f"{desc}; U {a:g}→{b:g}", d, se, sign_outcome(d, se, -1), bias_narrow=ba[0], bias_wide=bb[0])
        out.append(g)
    return out


@claim(id="PB-4.3-splitting-bias", paper="PB", section="§4.3", figure="Figures 1, 2, 6, 7",
       words="The data-splitting bias … we observe that it is typically increasing in the number of subsets. … "
             "This phenomenon occurs empirically in Section 4.4 and Appendix B, where the bias increases as the "
             "number of subgroups increase.",
       quantity="|E(T~) − 𝒯| against M at fixed limits (total bias: splitting + censoring), MC SE",
       test="in every HSB study and setting, for consecutive M: |bias|(larger M) − |bias|(smaller M) > 0",
       files=list(HSB_STUDIES), quantifier="most")
def _split_bias(ctx):
    out = []
    for stem in HSB_STUDIES:
        if stem not in ctx:
            continue
        st = ctx[stem]
        others = [n for n in ("test", "censor_lower", "censor_upper", "epsilon", "delta", "gaussian_calibration")
                  if n in st.res.cells and len(values(st, n)) > 1]
        g = Group(stem)
        for fixed in grid(st, *others):
            ms = [m for m in values(st, "num_subsets") if cell(st, **fixed, num_subsets=m) is not None]
            for a, b in pairs(ms):
                ba = _total_bias(st, cell(st, **fixed, num_subsets=a))
                bb = _total_bias(st, cell(st, **fixed, num_subsets=b))
                d, se = diff(bb[:2], ba[:2])
                desc = ", ".join(f"{k}={v}" for k, v in fixed.items())
                g.add(f"{desc}; M {a}→{b}", d, se, sign_outcome(d, se, +1), bias_small_M=ba[0], bias_large_M=bb[0])
        out.append(g)
    return out


def expected_lr_statistic(m, p, p0):
    """E[2 log Λ] of the Gaussian likelihood-ratio test of p predictors on top of p0 (intercept
    included) on m rows under H0: m[ψ((m − p0)/2) − ψ((m − p − p0)/2)], from 1 − R² ~ Beta((m − p −
    p0)/2, p/2) (docs/methods.md §4.3, "Example, LR under H0")."""
    from scipy.special import digamma
    return float(m * (digamma((m - p0) / 2) - digamma((m - p - p0) / 2)))


def simulated_split_lr(n, p, p0, ms, replicates, seed, chunk=4000):
    """Monte Carlo of the split statistic under H0, independently of the closed form: Gaussian
    predictors and response with the tested coefficients 0, the n rows split into M equal subsets,
    2 log Λ = b log(RSS0/RSS1) on each subset of b = n/M rows by least squares, averaged over the M
    subsets. Returns {M: per-replicate averages [replicates]} (the same data sets for every M)."""
    rng = np.random.default_rng(seed)
    out = {m: [] for m in ms}
    done = 0
    while done < replicates:
        r = min(chunk, replicates - done)
        x = np.concatenate([np.ones((r, n, 1)), rng.standard_normal((r, n, p0 + p - 1))], axis=2)
        y = x[:, :, :p0] @ rng.standard_normal((r, p0, 1)) + rng.standard_normal((r, n, 1))
        for m in ms:
            b = n // m
            xs, ys = x.reshape(r * m, b, p0 + p), y.reshape(r * m, b, 1)

            def rss(a):
                beta = np.linalg.solve(np.swapaxes(a, 1, 2) @ a, np.swapaxes(a, 1, 2) @ ys)
                return ((ys - a @ beta) ** 2).sum(axis=(1, 2))
            t = b * np.log(rss(xs[:, :, :p0]) / rss(xs))
            out[m].append(t.reshape(r, m).mean(axis=1))
        done += r
    return {m: np.concatenate(v) for m, v in out.items()}


SPLIT_EXAMPLE = dict(n=200, p=1, p0=2, ms=(1, 2, 5, 10), replicates=80000, seed=20240403)
SPLIT_EXAMPLE_MARGIN = 0.02  # a tenth of the splitting bias at M = 10 (0.19); ours
_SPLIT_CACHE = {}


@claim(id="PB-4.3-splitting-example", paper="PB", section="§4.3", figure="(none; HSB design)",
       words="The data-splitting bias … we observe that it is typically increasing in the number of subsets.",
       quantity="the HSB design (n = 200, p = 1 tested on p0 = 2) under H0: the mean over replicates of the split "
                "statistic Σ T_i/M (T_i = 2 log Λ on b = n/M rows), simulated (80 000 data sets, seeded; no results "
                "file), against the closed form E[2 log Λ] = b[ψ((b − p0)/2) − ψ((b − p − p0)/2)]; MC SE",
       test="(1) every M ∈ {1, 2, 5, 10}: simulation − closed form within ±0.02 (TOST); (2) the splitting bias, "
            "paired on the same data sets: mean(Σ T_i/M) − mean(T on all n) > 0 and growing with M (consecutive M)",
       files=[], self_contained=True,
       margin="±0.02 = a tenth of the splitting bias at M = 10 (ours); the closed form is exact, the margin only "
              "has to hold the simulation's error")
def _split_example(ctx):
    e = SPLIT_EXAMPLE
    if "sims" not in _SPLIT_CACHE:  # seeded: the same numbers on every call, computed once per process
        _SPLIT_CACHE["sims"] = simulated_split_lr(e["n"], e["p"], e["p0"], e["ms"], e["replicates"], e["seed"])
    sims = _SPLIT_CACHE["sims"]
    g = Group("closed form vs simulation")
    h = Group("splitting bias grows with M (simulation, paired)")
    for m in e["ms"]:
        closed = expected_lr_statistic(e["n"] // m, e["p"], e["p0"])
        est, se = mean_se(sims[m])
        g.add(f"M={m}", est - closed, se, approx_outcome(est - closed, se, 0.0, SPLIT_EXAMPLE_MARGIN),
              simulated=est, closed_form=closed)
    for a, b in pairs(e["ms"]):
        d, se = paired_mean(sims[b], sims[a])
        h.add(f"M {a}→{b}", d, se, sign_outcome(d, se, +1),
              closed_form_difference=expected_lr_statistic(e["n"] // b, e["p"], e["p0"]) -
              expected_lr_statistic(e["n"] // a, e["p"], e["p0"]))
    return [g, h]


# ----------------------------------------------------------------------------------------------
# PB Appendix B, Figures 6 and 7
# ----------------------------------------------------------------------------------------------

@claim(id="PB-4.4-sensitivity-tradeoff", paper="PB", section="§4.4", figure="Figure 7",
       words="In Section B of the Appendix, we repeat the simulation study with different censoring limits. "
             "Decreasing the sensitivity U − L decreases the variance, but it can introduce bias and lead to tests "
             "that are not powerful.",
       quantity="Figure 7 (L = 0, U ∈ {1, 2, 7, 10}): sd of T~ (bootstrap SE); |E(T~) − 𝒯| (MC SE); power of the "
                "paper's test at 0.05 (binomial MC SE)",
       test="(1) every (M, δ, calibration): sd(T~) grows with U (consecutive U); (2) 'can introduce bias' "
            "(existential: some (M, δ), Holm across them): |bias| at the narrowest U exceeds that at the widest; "
            "(3) 'can lead to tests that are not powerful' (existential): power at the narrowest U < 0.5 at some (M, δ)",
       files=["fig7_hsb_lr_censoring"])
def _sensitivity_tradeoff(ctx):
    st = ctx["fig7_hsb_lr_censoring"]
    others = ("num_subsets", "delta", "gaussian_calibration")
    var = Group("variance decreases with U − L")
    monotone(var, st, "noisy_statistic", "sd", "censor_upper", grid(st, *others), +1, "sd")
    bias = Group("can introduce bias: narrowest U vs widest U (some setting)", quantifier="can")
    power = Group("can lead to tests that are not powerful: power at the narrowest U below 0.5 (some setting)",
                  quantifier="can")
    us = values(st, "censor_upper")
    for fixed in grid(st, *others):
        c_n, c_w = cell(st, **fixed, censor_upper=min(us)), cell(st, **fixed, censor_upper=max(us))
        if c_n is None or c_w is None:
            continue
        desc = ", ".join(f"{k}={v}" for k, v in fixed.items())
        bn, bw = _total_bias(st, c_n), _total_bias(st, c_w)
        d, se = diff(bn[:2], bw[:2])
        bias.add(f"{desc}; U {min(us):g} vs {max(us):g}", d, se, sign_outcome(d, se, +1), bias_narrow=bn[0],
                 bias_wide=bw[0])
        r = _rates(st, "reject_corrected", censor_upper=min(us), **fixed)
        if r is not None:
            power.add(f"{desc}; U = {min(us):g}", r[0], r[1], sign_outcome(r[0], r[1], -1, 0.5))
    return [var, bias, power]


claim(id="PB-B-fig6-variance-M", paper="PB", section="App. B", figure="Figure 6",
       words="For all censoring limits, increasing the number of subgroups decreases the variance of the output,",
       quantity="variance (sd) of the released P*(H12|D), bootstrap SE",
       test="for every censoring interval and ε, consecutive M: sd(larger M) − sd(smaller M) < 0",
       files=["fig6_hsb_censoring"])(
    monotone_check("fig6_hsb_censoring", "posterior_probability_h1", "sd", "num_subsets", ("censor_upper", "epsilon"),
                   -1, "sd"))


@claim(id="PB-B-fig6-shrinkage", paper="PB", section="App. B", figure="Figure 6",
       words="… but it induces a bias that shrinks the probability to 0.5.",
       quantity="|median P*(H12|D) − 0.5|, bootstrap SE",
       test="for every censoring interval and ε, consecutive M: |median − 0.5| decreases",
       files=["fig6_hsb_censoring"])
def _fig6_shrink(ctx):
    return _shrinkage(ctx, "fig6_hsb_censoring", ("censor_upper", "epsilon"))


@claim(id="PB-B-fig6-variance-limits", paper="PB", section="App. B", figure="Figure 6",
       words="More stringent censoring limits reduce the variance as well, but come at the cost of potential bias: "
             "for instance, censoring the posterior probability at [0.35, 0.65] is clearly too stringent, since "
             "the true posterior probability is much higher than the upper limit.",
       quantity="sd of P*(H12|D) against the censoring interval, bootstrap SE; and the bias of the median",
       test="(1) for every (M, ε), consecutive intervals: sd(wider) − sd(narrower) > 0; (2) for every (M, ε): "
            "|median − P(H12|D)| is larger with [0.35, 0.65] than with [0.001, 0.999]",
       files=["fig6_hsb_censoring"])
def _fig6_limits(ctx):
    st = ctx["fig6_hsb_censoring"]
    g = Group("variance falls with tighter limits")
    monotone(g, st, "posterior_probability_h1", "sd", "censor_upper", grid(st, "num_subsets", "epsilon"), +1, "sd")
    h = Group("bias of [0.35, 0.65] vs [0.001, 0.999]")
    us = values(st, "censor_upper")
    for fixed in grid(st, "num_subsets", "epsilon"):
        c_n, c_w = cell(st, **fixed, censor_upper=min(us)), cell(st, **fixed, censor_upper=max(us))
        npv = float(st.res.calibration["non_private_posterior_probability_h1"][c_n, 0])
        f = lambda v: np.abs(v - npv)  # noqa: E731
        bn = boot_of(st, "posterior_probability_h1", c_n, "median", f)
        bw = boot_of(st, "posterior_probability_h1", c_w, "median", f)
        d, se = diff(bn, bw)
        h.add(f"M={fixed['num_subsets']}, ε={fixed['epsilon']:g}", d, se, sign_outcome(d, se, +1),
              bias_stringent=bn[0], bias_wide=bw[0])
    return [g, h]


def _fig7_groups(st, metric, name):
    out = []
    for cal in values(st, "gaussian_calibration"):
        base = dict(gaussian_calibration=cal)
        weak = Group(f"{name}, calibration {cal} — U ∈ {{1, 2}} not powerful (power < 0.5)")
        best = Group(f"{name}, calibration {cal} — U = 10 best (within {POWER_MARGIN:g} of every other U)")
        strong = Group(f"{name}, calibration {cal} — U = 10 quite powerful (≥ 0.8) for M ≥ 5, δ ≥ 0.25")
        esp = Group(f"{name}, calibration {cal} — U = 10 especially for M ≥ 5, δ ≥ 0.25 (mean power there vs "
                    "elsewhere)")
        special, reference = [], []
        ms, deltas, us = values(st, "num_subsets"), values(st, "delta"), values(st, "censor_upper")
        for m in ms:
            for delta in deltas:
                r10 = _rates(st, metric, **base, censor_upper=10, num_subsets=m, delta=delta)
                for u in us:
                    r = _rates(st, metric, **base, censor_upper=u, num_subsets=m, delta=delta)
                    if u in (1, 2):
                        weak.add(f"U={u:g}, M={m}, δ={delta:g}", r[0] - 0.5, r[1], sign_outcome(r[0] - 0.5, r[1], -1),
                                 power=r[0])
                    if u != 10:
                        d, se = diff(r10, r)
                        best.add(f"M={m}, δ={delta:g}: U=10 vs U={u:g}", d, se,
                                 interval_outcome(d, se, -POWER_MARGIN, math.inf), power_U10=r10[0], power_U=r[0])
                if m >= 5 and delta >= 0.25:
                    strong.add(f"M={m}, δ={delta:g}", r10[0] - 0.8, r10[1], sign_outcome(r10[0] - 0.8, r10[1], +1),
                               power=r10[0])
                    special.append(r10)
                else:
                    reference.append(r10)
        if special and reference:
            esp.especially("U = 10: M ≥ 5, δ ≥ 0.25 vs the other (M, δ)", special, reference, +1,
                           mean_special=float(np.mean([a for a, _ in special])),
                           mean_reference=float(np.mean([a for a, _ in reference])))
        out += [weak, best, strong, esp]
    return out


@claim(id="PB-B-fig7-power", paper="PB", section="App. B", figure="Figure 7",
       words="The true, non-private likelihood ratio is above 10, and if we censor at a much lower value (such as "
             "1 or 2) the test fails to be powerful. The test performs best if the lower bound is 10 [U = 10], in "
             "which case the test is quite powerful, especially for M ≥ 5 and δ ≥ 0.25.",
       quantity="power: rejection rate of H02 at 0.05 with corrected critical values, binomial MC SE",
       test="the paper's test (reject iff T* > c_0.05), both Gaussian calibrations, every (M, δ): (1) power at "
            "U ∈ {1, 2} < 0.5; (2) 'best': power(U = 10) − power(U) ≥ −0.05 for U ∈ {1, 2, 7}; (3) power(U = 10) "
            "> 0.8 for M ≥ 5, δ ≥ 0.25; (4) 'especially': the mean power at U = 10 over M ≥ 5, δ ≥ 0.25 exceeds "
            "that over the other (M, δ)",
       files=["fig7_hsb_lr_censoring"],
       margin="'best' = within 0.05 of every other U (power is not printed or plotted; ours, as PB-4.5-U-twice)")
def _fig7(ctx):
    return _fig7_groups(ctx["fig7_hsb_lr_censoring"], "reject_corrected", "paper's test")


@claim(id="PB-B-fig7-power-randomized", paper="PB", section="App. B", figure="Figure 7",
       words="(as PB-B-fig7-power)",
       quantity="power of our test randomized at the atom T* = U (exact level; not the paper's procedure)",
       test="as PB-B-fig7-power, with the randomized test",
       files=["fig7_hsb_lr_censoring"], margin="as PB-B-fig7-power")
def _fig7_rand(ctx):
    return _fig7_groups(ctx["fig7_hsb_lr_censoring"], "reject_corrected_randomized", "ours, randomized")


# Bradley's (1978, Br. J. Math. Stat. Psychol. 31:144–152) liberal criterion of robustness of a test's
# level: a type-I error rate is adequate when it lies within [α/2, 3α/2]; the claim guards the level,
# so its upper edge 3α/2 is the test (a conservative rate is a loss of power, reported on its own)
BRADLEY_UPPER = 1.5


def type1_level_test(k, n, alpha, structural):
    """"Adequate type I error rates" as the upper half of Bradley's (1978) liberal criterion: the rate
    is at most 3α/2 (one-sided, exact binomial tails on k rejections of n). A structural zero — the
    corrected critical value equals the upper censoring limit U, so T* ≤ U can never exceed it — is
    an exact value, judged without Monte Carlo error (0 ≤ 3α/2), not as a binomial count."""
    if structural:
        return {"test": f"≤ {_fmt(BRADLEY_UPPER * alpha)} (exact: rejection impossible, c_α = U)",
                "p_support": 0.0, "p_contradict": 1.0}
    return binomial_outcome(k, n, -1, BRADLEY_UPPER * alpha)


def type1_cells(st):
    """Per (cell, level) of the type-I study: (label, α, n, rejections of the plain test, of the
    randomized test, structural: c_α ≥ U so the plain test can never reject, c_α, U, c_uncorrected)."""
    keys = st.res.cells["key"] if "key" in st.res.cells else st.res.cells["cell_key"]
    out = []
    for c in range(st.res.n_cells):
        u = float(st.res.cells["censor_upper"][c])
        for k, alpha in enumerate(LEVELS):
            n = int(st.res.summary["reject_corrected"]["n_ok"][c, k])
            r = float(st.res.summary["reject_corrected"]["mean"][c, k])
            rr = float(st.res.summary["reject_corrected_randomized"]["mean"][c, k])
            cc = float(st.res.calibration["critical_value_corrected"][c, k])
            cu = float(st.res.calibration["critical_value_uncorrected"][c, k])
            out.append((f"{keys[c]}; α={alpha:g}", alpha, n, round(r * n), round(rr * n), cc >= u, cc, u, cu, c, k))
    return out


@claim(id="PB-4.3-type1", paper="PB", section="§4.3", figure="type-I calibration (ours)",
       words="Differentially private likelihood ratios Λ*10 are not distributed as their non-private "
             "counterparts. Therefore, the critical values for rejecting H0 with Λ*10 must be bias-corrected to "
             "guarantee adequate type I error rates.",
       quantity="type-I error of the corrected test (data simulated under H0): k rejections of n releases, exact "
                "binomial; exact 0 where the corrected critical value equals U (the plain test cannot reject)",
       test="every cell and α ∈ {0.05, 0.01}: the rate is at most 3α/2 (one-sided: 'adequate' guards against "
            "inflation; a rate of 0 where rejection is impossible is exact and adequate, and is reported as its "
            "own finding, OWN-4.3-type1-degenerate), for the plain test (the paper's) and ours randomized at the "
            "atom; the uncorrected χ² critical values give a rate > α where the corrected value is larger",
       files=["type1_calibration"],
       margin="'adequate type I error rates' = the upper half of Bradley's (1978) liberal criterion, rate ≤ 3α/2: "
              "0.075 at α = 0.05, 0.015 at α = 0.01 (α is exact, so no reading margin); a conservative rate is "
              "adequate for the level and is reported as a loss of power (OWN-4.3-type1-degenerate)")
def _type1(ctx):
    st = ctx["type1_calibration"]
    plain, rand, unc = Group("plain corrected test (the paper's): rate ≤ 3α/2"), \
        Group("randomized at the atom (ours): rate ≤ 3α/2"), \
        Group("uncorrected χ² critical values: inflated where the corrected value is larger")
    for lab, alpha, n, kr, krr, structural, cc, u, cu, c, k in type1_cells(st):
        r, rr = kr / n, krr / n
        plain.add(lab, r, 0.0 if structural else binomial_se(r, n), type1_level_test(kr, n, alpha, structural),
                  rate=r, runs=n, structural_zero=int(structural), corrected=cc, U=u)
        rand.add(lab, rr, binomial_se(rr, n), type1_level_test(krr, n, alpha, False), rate=rr, runs=n)
        if cc > cu + 3 * st.res.calibration["critical_value_corrected_mcse"][c, k]:
            ru = float(st.res.summary["reject_uncorrected"]["mean"][c, k])
            se0 = binomial_se(alpha, n)
            unc.add(lab, ru - alpha, se0, sign_outcome(ru - alpha, se0, +1), rate=ru, corrected=cc, uncorrected=cu)
    return [plain, rand, unc]


@claim(id="OWN-4.3-type1-degenerate", paper="dpmu (own finding on PB)", section="PB §4.3", setting="own",
       figure="type-I calibration (ours)",
       words="PB's plain corrected test (reject iff T* > c_α) is degenerate in some cells: the corrected critical "
             "value is the upper censoring limit U, the atom of T* at U, so the test can never reject — its type-I "
             "rate and its power are exactly 0 there.",
       quantity="per (cell, α) of the type-I study: 1 when the corrected critical value c_α equals U (exact, from "
                "the simulated null distribution), else 0",
       test="the claim is existential ('in some cells'): holds when at least one cell is degenerate; the label "
            "counts the degenerate cells (supported) among all (cell, α)",
       files=["type1_calibration"], quantifier="some")
def _type1_degenerate(ctx):
    st = ctx["type1_calibration"]
    g = Group("plain corrected test: c_α = U (rejection impossible)")
    for lab, alpha, n, kr, krr, structural, cc, u, cu, c, k in type1_cells(st):
        x = 1.0 if structural else 0.0
        g.add(lab, x, 0.0, sign_outcome(x - 0.5, 0.0, +1), corrected=cc, U=u, rate=kr / n)
    return [g]



COVERAGE_MARGIN = 0.005  # '1 − α' printed as 0.95 / 0.99: half a unit of the last digit (as PB-5.1-support-coverage)
HSB_CELL_AXES = ("test", "censor_lower", "censor_upper", "num_subsets", "epsilon", "delta", "gaussian_calibration")


def _level_of(label):
    """α of a component label "alpha=0.05" of the noise_interval_covers metric."""
    name, _, value = str(label).partition("=")
    if name != "alpha" or not value:
        raise ValueError(f"noise_interval_covers: component label '{label}' is not 'alpha=<level>'")
    return float(value)


@claim(id="PB-4.2-interval-coverage", paper="PB", section="§4.2", figure="(none)",
       words="Then, C~α = T~ ± η1−α/2 = [l~α, u~α] is a 1 − α confidence interval for Σ T_i^c/M.",
       quantity="coverage over the releases of a cell of the confidential censored average Σ T_i^c/M (metric "
                "censored_average) by C~α = T~ ± η1−α/2 before any censoring of its end points (metric "
                "noise_interval_covers, α = 0.05 and 0.01), binomial MC SE at 1 − α",
       test="every HSB setting (study × cell × α; Laplace noise in Figures 1 and 6, Gaussian with the exact and the "
            "paper-literal σ in Figures 2 and 7): coverage ≥ 1 − α − 0.005 (one-sided, exact binomial; the natural "
            "upper edge 1 is no edge of the claim)",
       files=list(HSB_STUDIES),
       margin="'1 − α' = 0.95 or 0.99 printed to two digits: half a unit of the last digit, 0.005 below 1 − α (as "
              "PB-5.1-support-coverage); a confidence interval may over-cover")
def _noise_interval_coverage(ctx):
    """Coverage of Σ T_i^c/M by T~ ± η1−α/2 per HSB cell and level (see the claim)."""
    out = []
    for stem in HSB_STUDIES:
        if stem not in ctx:
            continue
        st = ctx[stem]
        g = Group(f"{stem}: coverage of Σ T_i^c/M by T~ ± η1−α/2")
        if "noise_interval_covers" not in st.res.summary:
            g.note = (f"{st.path} has no metric noise_interval_covers (written before it existed): re-run "
                      f"{_config_of(stem)}")
            out.append(g)
            continue
        axes = [n for n in HSB_CELL_AXES if n in st.res.cells and len(values(st, n)) > 1]
        covers = st.replicates("noise_interval_covers")
        labels = st.res.component_labels["noise_interval_covers"]
        for c in range(st.res.n_cells):
            desc = ", ".join(f"{n}={st.res.cells[n][c]:g}" if isinstance(st.res.cells[n][c], (float, np.floating))
                             else f"{n}={st.res.cells[n][c]}" for n in axes)
            for k in range(covers.shape[2]):
                alpha = _level_of(labels[c, k])
                x = covers[c, :, k]
                ok = np.isfinite(x)
                m = float(x[ok].mean()) if ok.any() else math.nan
                n = int(ok.sum())
                g.add(f"{desc}; 1 − α = {1.0 - alpha:g}", m, binomial_se(m, n),
                      coverage_test(round(m * n), n, 1.0 - alpha - COVERAGE_MARGIN), runs=n)
        out.append(g)
    return out


def _nominal_of(setting):
    """1 − α of a stored coverage setting label '…; 1 − α = 0.95'."""
    return float(str(setting).rsplit("1 − α =", 1)[1])


RETESTS["PB-4.2-interval-coverage"] = _retest_coverage(lambda row: _nominal_of(row["setting"]) - COVERAGE_MARGIN)


# The H11 runs of Figures 6 and 7 (configs/*_h11.yaml): the App. B claims recomputed on them
H11_STEMS = {"fig6_hsb_censoring": "fig6_hsb_censoring_h11", "fig7_hsb_lr_censoring": "fig7_hsb_lr_censoring_h11"}
APP_B_CLAIMS = ("PB-B-fig6-variance-M", "PB-B-fig6-shrinkage", "PB-B-fig6-variance-limits", "PB-B-fig7-power")
VERDICT_CLASS = {"holds": "holds", "holds within MC error": "holds", "undecided": "undecided", "partly": "partly",
                 "does not hold": "does not hold"}


@claim(id="PB-B-H11-similar", paper="PB", section="App. B", figure="Figures 6, 7", kind="comparison",
       words="For concreteness, we restrict our attention to the test of H02 against H12 … The results for the test "
             "of H01 against H11 are similar.",
       quantity="the verdict of every App. B claim (PB-B-fig6-*, PB-B-fig7-power; every variant) on the H11 runs "
                "(configs/fig6_hsb_censoring_h11.yaml, configs/fig7_hsb_lr_censoring_h11.yaml) beside its verdict "
                "on the H12 runs",
       test="for every App. B claim and variant: the verdict class on H11 equals that on H12 (holds — including "
            "within MC error —, partly, does not hold); an exact comparison of two verdicts, each already under "
            "the rule's error control",
       files=["fig6_hsb_censoring", "fig7_hsb_lr_censoring", "fig6_hsb_censoring_h11", "fig7_hsb_lr_censoring_h11"],
       margin="'similar' = the same conclusion: the same verdict class of each App. B statement (ours; the paper "
              "shows no H11 figure to compare numbers with)")
def _h11_similar(ctx):
    g = Group("H11 runs vs H12 runs: the same verdict class")
    missing = [f"configs/{h}.yaml" for s, h in H11_STEMS.items() if s in ctx and h not in ctx]
    for cl in CLAIMS:
        if cl.id not in APP_B_CLAIMS or not all(s in ctx and H11_STEMS[s] in ctx for s in cl.files):
            continue
        h11 = dict(ctx, **{s: ctx[H11_STEMS[s]] for s in cl.files})
        for a, b in zip(cl.check(ctx), cl.check(h11)):
            va = vr.judge(a.settings, a.quantifier or cl.quantifier)["verdict"]
            vb = vr.judge(b.settings, b.quantifier or cl.quantifier)["verdict"]
            if va not in VERDICT_CLASS or vb not in VERDICT_CLASS:
                continue
            same = 1.0 if VERDICT_CLASS[va] == VERDICT_CLASS[vb] else -1.0
            g.add(f"{cl.id}" + (f": {a.label}" if a.label else ""), same, 0.0, sign_outcome(same, 0.0, +1),
                  verdict_H12=va, verdict_H11=vb)
    if not g.settings:
        g.note = ("the H11 runs are missing: " + ", ".join(missing) if missing else
                  "no App. B claim could be computed on both tests")
    return [g]
