"""LCSSF §5 (Lei et al. 2018, Figures 1-2; docs/methods.md §6.6, docs/lcssf.md): each claim a
declaration beside the paper's sentence (plotting/claims.py evaluates them)."""
import math

import numpy as np

import verdict_rules as vr  # noqa: F401
from claims_core import *  # noqa: F401,F403  (the declaration vocabulary: claim, Group, tests, accessors)
from claims_core import _config_of, _fmt, _num, _p, _retest_coverage, _sq  # noqa: F401


# ----------------------------------------------------------------------------------------------
# LCSSF §5 (docs/methods.md §6.6), Figures 1-2
# ----------------------------------------------------------------------------------------------

def _lei_best(st, c):
    mean = st.res.summary["prob_true_model"]["mean"][c]
    mcse = st.res.summary["prob_true_model"]["mcse"][c]
    k = int(np.nanargmax(mean))
    phi = st.res.summary["penalty"]["mean"][c]
    return float(mean[k]), float(mcse[k]), float(phi[k]), mean


def _lei_groups(ctx, body):
    if "lei_simulation" not in ctx:
        return []
    st = ctx["lei_simulation"]
    out = []
    for delta_kind in values(st, "lcssf_delta"):
        g = Group(f"calibration lcssf_delta = {delta_kind}")
        body(st, dict(lcssf_delta=delta_kind), g)
        out.append(g)
    return out


def _lei_pairs(st, base, g, loops, cond_a, cond_b, outcome):
    """For every combination of the parameters in ``loops``: best(cond_a) − best(cond_b) with its
    MC SE, classified by ``outcome(d, se)``."""
    for fixed in grid(st, *loops):
        a = _lei_best(st, cell(st, **base, **fixed, **cond_a))
        b = _lei_best(st, cell(st, **base, **fixed, **cond_b))
        d, se = diff(a[:2], b[:2])
        g.add(", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in fixed.items()), d, se,
              outcome(d, se), best_a=a[0], best_b=b[0])


def _best_phi_centre(st, c):
    """Centre (mean φ) of the φ values whose proportion correct is at least 0.9 × the best."""
    mean = np.asarray(st.res.summary["prob_true_model"]["mean"][c], dtype=float)
    phi = np.asarray(st.res.summary["penalty"]["mean"][c], dtype=float)
    ok = np.isfinite(mean) & (mean >= 0.9 * np.nanmax(mean))
    return float(phi[ok].mean())


def _w90(mean):
    return float(np.mean(np.asarray(mean) >= 0.9))


def _w90_boot(st, c):
    """(w90, bootstrap SE): the fraction of the φ grid where the proportion correct is ≥ 0.9, and
    its SE from resampling the replicates (the φ values of a replicate share its data set)."""
    x = np.asarray(st.replicates("prob_true_model")[c], dtype=float)  # [R, K]
    w = _w90(np.nanmean(x, axis=0))
    if x.ndim != 2 or x.shape[0] < 2:
        return w, math.nan
    idx = np.random.default_rng(BOOTSTRAP_SEED).integers(0, x.shape[0], size=(BOOTSTRAP_DRAWS, x.shape[0]))
    boot = np.array([_w90(np.nanmean(x[i], axis=0)) for i in idx])
    return w, float(np.std(boot, ddof=1))


# Lei et al.'s proportion-correct axes, read like the other figures (ticks 0.2 apart assumed: the figures are
# not in the text we have): margin 0.01
LEI_MARGIN = vr.reading_margin(tick_spacing=0.2)
WIDE_RANGE = 0.2  # "a wide range of φ", "an entire interval": a fifth of the grid [0, n/2] (ours)


def _lei_counts(st, c):
    """Per φ of one LCSSF cell: (k correct selections, n data sets), from the summary's proportion and
    its count of finished replicates."""
    mean = np.asarray(st.res.summary["prob_true_model"]["mean"][c], dtype=float)
    n_ok = np.broadcast_to(np.asarray(st.res.summary["prob_true_model"]["n_ok"][c], dtype=float), mean.shape)
    return np.round(mean * n_ok), n_ok


def lei_grid_test(cells, bound, share=None):
    """"The proportion correct reaches ``bound``" over a penalty grid with the selection paid for
    (verdict_rules.at_least over every φ of every cell in ``cells``, each φ by exact binomial
    tails): share None = the best φ (m = 1: "best over the grid ≥ bound"); share w = at least a
    fraction w of the φ grid (m = ⌈w K⌉: "a wide range of φ")."""
    ps, pc = [], []
    for st, c in cells:
        k, n = _lei_counts(st, c)
        for ki, ni in zip(k, n):
            a, b = vr.binomial_greater(ki, ni, bound)
            ps.append(a)
            pc.append(b)
    m = 1 if share is None else max(1, math.ceil(share * len(ps) - 1e-9))
    p_s, p_c = vr.at_least(ps, pc, m)
    what = "best φ" if share is None else f"at least {m} of {len(ps)} φ"
    return {"test": f"{what} ≥ {_fmt(bound)} (exact binomial per φ, Bonferroni over the grid)",
            "p_support": p_s, "p_contradict": p_c}


def _model1(fixed):
    return fixed.get("beta_model", "model1") == "model1"


@claim(id="LCSSF-5-R1-poor", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="Except for with the smallest value of R the procedure is very successful … The poor results for R = 1 "
             "are explained by the fact that since R is much smaller than the true ℓ1 norm of β0, the parameter can "
             "not be estimated properly.",
       quantity="best proportion correct over the φ grid, MC SE at the best φ (model 1: the paragraph is about "
                "Figure 1; model 2 is LCSSF-5-model2-harder's 'very similar')",
       test="every (n, ε) of model 1: best(R = 2.5) − best(R = 1) > 0",
       files=["lei_simulation"])
def _lei_r1(ctx):
    return _lei_groups(ctx, lambda st, base, g: _lei_pairs(
        st, dict(base, beta_model="model1"), g, ("n", "epsilon"), dict(radius=2.5), dict(radius=1),
        lambda d, se: sign_outcome(d, se, +1)))


@claim(id="LCSSF-5-very-successful", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="Except for with the smallest value of R the procedure is very successful at choosing the correct "
             "model over a wide range of φ values.",
       quantity="model 1: the proportion correct at each φ of the grid (k of 500 data sets), with the selection "
                "over the grid paid for (Bonferroni over the 51 φ)",
       test="every (n, ε ≥ 1, R ≠ 1) of model 1 (ε = 0.1 is the 'stricter privacy' of LCSSF-5-eps): (1) the best φ "
            "reaches 0.9 ('very successful'); (2) at least a fifth of the φ grid reaches 0.9 ('a wide range of φ'); "
            "exact binomial per φ",
       files=["lei_simulation"],
       margin="'very successful' = at least 0.9 correct, 'wide range' = a fifth of the φ grid (ours)")
def _lei_very_successful(ctx):
    if "lei_simulation" not in ctx:
        return []
    st = ctx["lei_simulation"]
    out = []
    for delta_kind in values(st, "lcssf_delta"):
        base = dict(lcssf_delta=delta_kind)
        g = Group(f"calibration lcssf_delta = {delta_kind}: best proportion ≥ 0.9")
        h = Group(f"calibration lcssf_delta = {delta_kind}: at least a fifth of the φ grid ≥ 0.9")
        for fixed in grid(st, "n", "epsilon", "radius"):
            if fixed["radius"] == 1 or fixed["epsilon"] < 1:
                continue
            c = cell(st, **base, beta_model="model1", **fixed)
            if c is None:
                continue
            lab = f"n={fixed['n']}, ε={fixed['epsilon']:g}, R={fixed['radius']:g}"
            best = _lei_best(st, c)
            g.add(lab, best[0], best[1], lei_grid_test([(st, c)], 0.9))
            w, se = _w90_boot(st, c)
            h.add(lab, w, se, lei_grid_test([(st, c)], 0.9, WIDE_RANGE))
        out += [g, h]
    return out


@claim(id="LCSSF-5-structure", paper="LCSSF", section="§5", figure="LCSSF Figures 1, 2",
       words="The sensitivity of the procedure to choices of R and φ thus depends on the structure of the true "
             "parameter β0.",
       quantity="sensitivity to R: spread (max − min) of the best proportion correct over R ∈ {2.5, 3.5, 10}; "
                "sensitivity to φ: 1 − w90; model 2 (β0 = (1.5, 1, 0.5, 0, 0, 0)) minus model 1 (β0 = (1, 1, 1, "
                "0, 0, 0)), MC / bootstrap SE",
       test="(1) every (n, ε): the spread over R is larger for model 2; (2) every (n, R ≠ 1, ε): w90 is smaller for "
            "model 2; in most settings ('depends on': a majority, Clopper–Pearson bound above 1/2)",
       files=["lei_simulation"], quantifier="most")
def _lei_structure(ctx):
    if "lei_simulation" not in ctx:
        return []
    st = ctx["lei_simulation"]
    out = []
    for delta_kind in values(st, "lcssf_delta"):
        base = dict(lcssf_delta=delta_kind)
        g = Group(f"calibration lcssf_delta = {delta_kind}: sensitivity to R, model 2 − model 1")
        h = Group(f"calibration lcssf_delta = {delta_kind}: w90, model 1 − model 2")
        radii = [r for r in values(st, "radius") if r != 1]
        for fixed in grid(st, "n", "epsilon"):
            spread = {}
            for model in ("model1", "model2"):
                bests = [_lei_best(st, cell(st, **base, beta_model=model, radius=r, **fixed)) for r in radii]
                hi, lo = max(bests, key=lambda v: v[0]), min(bests, key=lambda v: v[0])
                spread[model] = (hi[0] - lo[0], math.sqrt(_sq(hi[1]) + _sq(lo[1])))
            d, se = diff(spread["model2"], spread["model1"])
            g.add(f"n={fixed['n']}, ε={fixed['epsilon']:g}", d, se, sign_outcome(d, se, +1),
                  spread_model1=spread["model1"][0], spread_model2=spread["model2"][0])
            for r in radii:
                a = _w90_boot(st, cell(st, **base, beta_model="model1", radius=r, **fixed))
                b = _w90_boot(st, cell(st, **base, beta_model="model2", radius=r, **fixed))
                d, se = diff(a, b)
                h.add(f"n={fixed['n']}, ε={fixed['epsilon']:g}, R={r:g}", d, se, sign_outcome(d, se, +1),
                      w90_model1=a[0], w90_model2=b[0])
        out += [g, h]
    return out


OFF_THE_FLOOR = 0.5  # "utility" is measurable where the best proportion correct at R = 2.5 is at least this


@claim(id="LCSSF-5-R-large", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="When R is too large, the estimation of β0 is unchanged, but a larger amount of noise is needed to "
             "satisfy differential privacy, which explains the small drop in utility.",
       quantity="best proportion correct at R = 2.5 minus at R = 10 (model 1), MC SE",
       test="every (n, ε) where utility is off the floor (best proportion at R = 2.5 at least 0.5; where nothing is "
            "selected correctly a drop cannot show): the drop lies in [−0.01, 0.1] ('a small drop'; a tie at the "
            "ceiling, 1.0 vs 1.0, is not a contradiction; TOST)",
       files=["lei_simulation"],
       margin="'small' ≤ 0.1 (ours); below 0 by at most the reading margin of the proportion axis, 0.01")
def _lei_rlarge(ctx):
    def body(st, base, g):
        for fixed in grid(st, "n", "epsilon"):
            a = _lei_best(st, cell(st, **base, **fixed, beta_model="model1", radius=2.5))
            b = _lei_best(st, cell(st, **base, **fixed, beta_model="model1", radius=10))
            if a[0] < OFF_THE_FLOOR:
                continue
            d, se = diff(a[:2], b[:2])
            g.add(f"n={fixed['n']}, epsilon={fixed['epsilon']:g}", d, se, interval_outcome(d, se, -LEI_MARGIN, 0.1),
                  best_a=a[0], best_b=b[0])
        if not g.settings:
            g.note = f"no (n, ε) where the best proportion at R = 2.5 reaches {OFF_THE_FLOOR:g} under this calibration"
    return _lei_groups(ctx, body)


def _lei_eps_body(model):
    def body(st, base, g):
        for n in values(st, "n"):
            for radius in values(st, "radius"):
                for a, b in pairs(values(st, "epsilon")):
                    ra = _lei_best(st, cell(st, **base, beta_model=model, n=n, radius=radius, epsilon=a))
                    rb = _lei_best(st, cell(st, **base, beta_model=model, n=n, radius=radius, epsilon=b))
                    d, se = diff(rb[:2], ra[:2])
                    g.add(f"{model}, n={n}, R={radius:g}; ε {a:g}→{b:g}", d, se, sign_outcome(d, se, +1))
    return body


@claim(id="LCSSF-5-eps", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="As expected, decreasing ε needed to provide stricter privacy also leads to decreased utility.",
       quantity="best proportion correct over φ, MC SE (model 1; model 2 in LCSSF-5-model2-harder)",
       test="every (n, R) of model 1, consecutive ε: best(larger ε) − best(smaller ε) > 0",
       files=["lei_simulation"])
def _lei_eps(ctx):
    return _lei_groups(ctx, _lei_eps_body("model1"))


@claim(id="LCSSF-5-n1000-eps1", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="Note however that for n = 1000 the method is very accurate for a wide range of φ even for ε as small "
             "as 1.",
       quantity="model 1, n = 1000, ε = 1: the proportion correct at each φ (k of 500), per R ≠ 1",
       test="for some R ≠ 1 (R is tuned: existential, Holm across R): at least a fifth of the φ grid reaches 0.9 "
            "(exact binomial per φ, Bonferroni over the grid)",
       files=["lei_simulation"], quantifier="some",
       margin="'very accurate' = at least 0.9 correct; 'wide range' = a fifth of the φ grid (ours)")
def _lei_n1000(ctx):
    def body(st, base, g):
        for radius in values(st, "radius"):
            if radius == 1:
                continue
            c = cell(st, **base, beta_model="model1", n=1000, epsilon=1, radius=radius)
            w, se = _w90_boot(st, c)
            g.add(f"R={radius:g}", w, se, lei_grid_test([(st, c)], 0.9, WIDE_RANGE), best=_lei_best(st, c)[0])
    return _lei_groups(ctx, body)


@claim(id="LCSSF-5-phi-n", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="The results also confirm our claim that the choice of φ is less crucial for larger sample size, as "
             "the procedure works well on an entire interval.",
       quantity="model 1: w90 (fraction of the φ grid with proportion correct ≥ 0.9, bootstrap SE over replicates); "
                "and the proportion correct at each φ (k of 500)",
       test="every (R ≠ 1, ε ≥ 1) of model 1: (1) w90 at n = 1000 − w90 at n = 100 > 0; (2) at n = 1000, at least a "
            "fifth of the φ grid reaches 0.9 ('works well on an entire interval'; exact binomial per φ, Bonferroni "
            "over the grid)",
       files=["lei_simulation"], margin="'an entire interval' = a fifth of the φ grid (ours, as 'wide range')")
def _lei_phi_n(ctx):
    if "lei_simulation" not in ctx:
        return []
    st = ctx["lei_simulation"]
    out = []
    for delta_kind in values(st, "lcssf_delta"):
        base = dict(lcssf_delta=delta_kind, beta_model="model1")
        g = Group(f"calibration lcssf_delta = {delta_kind}: w90 grows with n")
        h = Group(f"calibration lcssf_delta = {delta_kind}: works well on an interval at n = 1000")
        for radius in values(st, "radius"):
            for eps in values(st, "epsilon"):
                if radius == 1 or eps < 1:
                    continue
                a = _w90_boot(st, cell(st, **base, n=100, radius=radius, epsilon=eps))
                c1000 = cell(st, **base, n=1000, radius=radius, epsilon=eps)
                b = _w90_boot(st, c1000)
                d, se = diff(b, a)
                g.add(f"model1, R={radius:g}, ε={eps:g}", d, se, sign_outcome(d, se, +1), w90_100=a[0], w90_1000=b[0])
                h.add(f"model1, R={radius:g}, ε={eps:g}", b[0], b[1], lei_grid_test([(st, c1000)], 0.9, WIDE_RANGE))
        out += [g, h]
    return out


@claim(id="LCSSF-5-phi-linear", paper="LCSSF", section="§5", figure="LCSSF Figure 1",
       words="Note also that the actual value of φ depends on n, with the optimal φ increasing roughly linearly "
             "with n.",
       quantity="optimal φ at n = 1000 divided by that at n = 100 (model 1); optimal φ = the centre of the φ "
                "values whose proportion correct is ≥ 0.9 × the best (the argmax of a plateau is its left end)",
       test="every (R, ε) where both best proportions are ≥ 0.5: ratio within [5, 20] (×10 in n, 'roughly "
            "linearly')",
       files=["lei_simulation"])
def _lei_linear(ctx):
    def body(st, base, g):
        g.note = ("no (R, ε) where the best proportion correct is ≥ 0.5 at both n under this calibration: the "
                  "optimal φ is not defined where the procedure does not work (a failure that LCSSF-5-eps, "
                  "LCSSF-5-phi-n and LCSSF-5-very-successful report)")
        for radius in values(st, "radius"):
            for eps in values(st, "epsilon"):
                ca = cell(st, **base, beta_model="model1", n=100, radius=radius, epsilon=eps)
                cb = cell(st, **base, beta_model="model1", n=1000, radius=radius, epsilon=eps)
                a, b = _lei_best(st, ca), _lei_best(st, cb)
                pa, pb = _best_phi_centre(st, ca), _best_phi_centre(st, cb)
                if min(a[0], b[0]) < 0.5 or pa <= 0:
                    continue
                r = pb / pa
                g.add(f"R={radius:g}, ε={eps:g}", r, 0.0, interval_outcome(r, 0.0, 5, 20), phi_100=pa, phi_1000=pb)
                g.note = ""
    return _lei_groups(ctx, body)


@claim(id="LCSSF-5-model2-harder", paper="LCSSF", section="§5", figure="LCSSF Figure 2",
       words="The effect of n, R, φ and ε are very similar in this case, but the choice of R and φ are more "
             "important to achieve good utility.",
       quantity="best proportion correct, model 1 minus model 2; and on model 2 the effects stated for model 1 "
                "(R = 1 poor, utility decreasing with ε); MC SE",
       test="(1) every (n, R, ε): model 1 − model 2 > 0; (2) 'very similar': on model 2, every (n, ε): best(R = 2.5) − "
            "best(R = 1) > 0, and every (n, R), consecutive ε: best(larger ε) − best(smaller ε) > 0",
       files=["lei_simulation"])
def _lei_m2(ctx):
    if "lei_simulation" not in ctx:
        return []
    st = ctx["lei_simulation"]
    out = []
    for delta_kind in values(st, "lcssf_delta"):
        base = dict(lcssf_delta=delta_kind)
        g = Group(f"calibration lcssf_delta = {delta_kind}: model 1 − model 2")
        _lei_pairs(st, base, g, ("n", "radius", "epsilon"), dict(beta_model="model1"), dict(beta_model="model2"),
                   lambda d, se: sign_outcome(d, se, +1))
        r1 = Group(f"calibration lcssf_delta = {delta_kind}: model 2, R = 1 poor")
        _lei_pairs(st, dict(base, beta_model="model2"), r1, ("n", "epsilon"), dict(radius=2.5), dict(radius=1),
                   lambda d, se: sign_outcome(d, se, +1))
        e = Group(f"calibration lcssf_delta = {delta_kind}: model 2, utility decreases with ε")
        _lei_eps_body("model2")(st, base, e)
        out += [g, r1, e]
    return out


@claim(id="LCSSF-5-model2-n1000", paper="LCSSF", section="§5", figure="LCSSF Figure 2",
       words="Note however that for n = 1000 a proper choice for the parameters leads to completely accurate model "
             "selection with ε = 5, and even very accurate for ε = 1 with R = 2.5.",
       quantity="model 2, n = 1000: the proportion correct at each (R, φ) (k of 500), with the choice of the "
                "parameters paid for (Bonferroni over the grid)",
       test="ε = 5, the best (R, φ): 'completely accurate' ≥ 0.98; ε = 1, R = 2.5, the best φ: 'very accurate' ≥ 0.9; "
            "exact binomial per grid point",
       files=["lei_simulation"])
def _lei_m2n(ctx):
    def body(st, base, g):
        cells5 = [(st, cell(st, **base, beta_model="model2", n=1000, radius=r, epsilon=5)) for r in values(st, "radius")]
        best = max((_lei_best(st, c) + (r,) for (_, c), r in zip(cells5, values(st, "radius"))), key=lambda v: v[0])
        g.add(f"ε=5 (best R = {best[4]:g})", best[0], best[1], lei_grid_test(cells5, 0.98))
        c1 = cell(st, **base, beta_model="model2", n=1000, radius=2.5, epsilon=1)
        r = _lei_best(st, c1)
        g.add("ε=1, R=2.5", r[0], r[1], lei_grid_test([(st, c1)], 0.9))
    return _lei_groups(ctx, body)
