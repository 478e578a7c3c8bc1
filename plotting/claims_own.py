"""Our own claims (docs/methods.md §5.11, configs/calibration.yaml), declared like the papers'."""
import math

import numpy as np

import verdict_rules as vr  # noqa: F401
from claims_core import *  # noqa: F401,F403  (the declaration vocabulary: claim, Group, tests, accessors)
from claims_core import _config_of, _fmt, _num, _p, _retest_coverage, _sq  # noqa: F401


# ----------------------------------------------------------------------------------------------
# Our own claims: calibration of private model averaging (docs/methods.md §5.11; configs/calibration.yaml)
# ----------------------------------------------------------------------------------------------

def _calibration_settings(ctx, method, classify, stem="calibration"):
    """One setting per private cell and coefficient of the calibration study `stem`: the coverage of
    the 95 % interval of `method` with its binomial MC SE, classified by classify(est, se)."""
    st = ctx[stem]
    g = Group(label=method.replace("_", "-"))
    cover = st.replicates(f"{method}_cover95")
    fallback = st.replicates("fallback")
    for c in range(st.res.n_cells):
        mech = str(st.res.cells["mechanism"][c])
        if mech == "none":
            continue
        p = int(st.res.cells["p"][c])
        for j in range(p):
            x = cover[c, :, j]
            x = x[np.isfinite(x)]
            if len(x) == 0:
                continue
            est = float(x.mean())
            se = binomial_se(est, len(x))
            extra = {}
            if method == "noise_aware":  # the rejection sampler's fallback to the plug-in answer
                extra["fallback"] = float(np.nanmean(fallback[c]))
            if method == "augmented":  # the chain's convergence (it never falls back)
                extra["converged"] = float(np.nanmean(st.replicates("augmented_converged")[c]))
            g.add(f"{mech} ε={float(st.res.cells['epsilon'][c]):g} p={p} n={int(st.res.cells['n'][c])} beta{j + 1}",
                  est, se, classify(est, se), **extra)
    return [g]


@claim(id="OWN-calibration-plug-in", paper="dpmu (own claim)", section="docs/methods.md §5.11", setting="own",
       figure="fig_calibration (coverage95)",
       words="The plug-in credible intervals of private model averaging (G* + rI analysed as the data's Gram "
             "matrix) fall short of their nominal 95 % coverage.",
       quantity="coverage of the true beta_j by the plug-in 95 % interval, per private cell and coefficient "
                "(binomial MC SE)",
       test="supported: the 95 % interval of the coverage lies below 0.95; contradicted: above 0.95; "
            "verdict over all private settings ('most')",
       files=["calibration"], quantifier="most")
def _own_plug_in(ctx):
    return _calibration_settings(ctx, "plug_in", lambda est, se: sign_outcome(est - 0.95, se, -1))


@claim(id="OWN-calibration-noise-aware", paper="dpmu (own claim)", section="docs/methods.md §5.11", setting="own",
       figure="fig_calibration (coverage95)",
       words="The noise-aware credible intervals (docs/methods.md §5.11) cover the true coefficients at least at "
             "the nominal 95 % rate up to Monte Carlo error, in every cell.",
       quantity="coverage of the true beta_j by the noise-aware 95 % interval, per private cell and coefficient "
                "(binomial MC SE; cells where the analysis fell back to the plug-in are included)",
       test="one-sided test of coverage > 0.95 per setting: supported when significantly above 0.95, "
            "contradicted when significantly below (Holm across the settings), else unresolved",
       files=["calibration"])
def _own_noise_aware(ctx):
    return _calibration_settings(ctx, "noise_aware", lambda est, se: sign_outcome(est, se, +1, 0.95))


@claim(id="OWN-calibration-augmented", paper="dpmu (own claim)", section="docs/methods.md §5.12", setting="own",
       figure="fig_calibration (coverage95)",
       words="The noise-aware credible intervals by data augmentation (docs/methods.md §5.12, the default of every "
             "release) cover the true coefficients at least at the nominal 95 % rate up to Monte Carlo error, in "
             "every cell, small n included, and never fall back to the plug-in answer.",
       quantity="coverage of the true beta_j by the data-augmentation 95 % interval, per private cell and "
                "coefficient of configs/calibration_augmented.yaml (binomial MC SE)",
       test="one-sided test of coverage > 0.95 per setting: supported when significantly above 0.95, "
            "contradicted when significantly below (Holm across the settings), else unresolved",
       files=["calibration_augmented"])
def _own_augmented(ctx):
    return _calibration_settings(ctx, "augmented", lambda est, se: sign_outcome(est, se, +1, 0.95),
                                 stem="calibration_augmented")


# ----------------------------------------------------------------------------------------------
# Our own claims: the DP nested tests head to head (configs/head_to_head.yaml, docs/methods.md §11)
# ----------------------------------------------------------------------------------------------

H2H_METHODS = {"subsample-aggregate": "PB subsample & aggregate", "test-of-tests": "Test of Tests",
               "dp-f": "DP F-test"}


def _h2h_cells(st):
    """{(method, q, epsilon, n, effect): (rejections k, releases m)} of a nested_test_head_to_head file."""
    reject = st.replicates("reject")
    out = {}
    for c in range(st.res.n_cells):
        get = {k: v[c] for k, v in st.res.cells.items()}
        method = get["method"].decode() if isinstance(get["method"], bytes) else str(get["method"])
        x = np.ravel(reject[c])
        x = x[np.isfinite(x)]
        out[(method, int(get["q"]), float(get["epsilon"]), int(get["n"]), float(get["effect"]))] = \
            (int(round(x.sum())), len(x))
    return out


@claim(id="OWN-h2h-level", paper="dpmu (own claim)", section="docs/methods.md §11", setting="own",
       figure="fig_head_to_head",
       words="At matched privacy (each spends at most (ε, 10⁻⁶)), PB's subsample-and-aggregate test with corrected "
             "critical values, the Test of Tests and the DP F-test hold the nominal level α = 0.05 on the simulated "
             "nested-model design of configs/head_to_head.yaml, in every cell.",
       quantity="type-I error (effect 0): k rejections of m simulated releases per (method, q, ε, n), exact binomial",
       test="per cell: the rate is at most 3α/2 = 0.075 (one-sided exact binomial; Bradley's liberal criterion, as "
            "PB-4.3-type1); verdict over every cell ('all')",
       files=["head_to_head"],
       margin="'holds the level' = rate ≤ 3α/2 (as PB-4.3-type1); a conservative test holds it")
def _own_h2h_level(ctx):
    return _h2h_level_groups(ctx["head_to_head"])


def _h2h_level_groups(st):
    """Per method: type-I error ≤ 3α/2 in every cell with effect 0 (exact binomial)."""
    cells = _h2h_cells(st)
    groups = {m: Group(f"{label}: type-I ≤ 3α/2") for m, label in H2H_METHODS.items()}
    for (method, q, eps, n, effect), (k, m) in sorted(cells.items()):
        if effect != 0.0 or m == 0 or method not in groups:
            continue
        r = k / m
        groups[method].add(f"q={q} ε={eps:g} n={n}", r, binomial_se(r, m), binomial_outcome(k, m, -1, 0.075),
                           rate=r, runs=m)
    return [g for g in groups.values() if g.settings]


@claim(id="OWN-h2h-power", paper="dpmu (own claim)", section="docs/methods.md §11", setting="own",
       figure="fig_head_to_head",
       words="At matched privacy on the simulated nested-model design, the Test of Tests and the DP F-test are more "
             "powerful than PB's subsample-and-aggregate test in most settings with an effect.",
       quantity="difference of the rejection rates (other method − PB's test) on the same simulated data sets, per "
                "(q, ε, n, effect > 0); MC SE of the difference from the two binomial SEs (the shared data sets make "
                "the rates positively correlated, so the SE is conservative)",
       test="per setting: the difference > 0 (one-sided); verdict 'most' over the settings, per method",
       files=["head_to_head"], quantifier="most")
def _own_h2h_power(ctx):
    cells = _h2h_cells(ctx["head_to_head"])
    groups = [_h2h_difference_group(cells, other, "subsample-aggregate", "power_pb") for other in ("test-of-tests", "dp-f")]
    return [g for g in groups if g.settings]


def _h2h_difference_group(cells, better, worse, other_key):
    """Per (q, ε, n, effect > 0): rejection rate of `better` − that of `worse` on the same data sets, MC SE
    from the two binomial SEs, one-sided > 0."""
    g = Group(f"{H2H_METHODS[better]} − {H2H_METHODS[worse]}")
    for (method, q, eps, n, effect), (k, m) in sorted(cells.items()):
        if method != better or effect == 0.0 or m == 0:
            continue
        base = cells.get((worse, q, eps, n, effect))
        if not base or base[1] == 0:
            continue
        r1, r0 = k / m, base[0] / base[1]
        d = r1 - r0
        se = math.sqrt(binomial_se(r1, m) ** 2 + binomial_se(r0, base[1]) ** 2)
        g.add(f"q={q} ε={eps:g} n={n} effect={effect:g}", d, se, sign_outcome(d, se, +1), power=r1,
              **{other_key: r0})
    return g


@claim(id="OWN-h2h-pb-best-m", paper="dpmu (own claim)", section="docs/methods.md §11", setting="own",
       figure="fig_head_to_head",
       words="The Test of Tests' lead over PB's subsample-and-aggregate test is not an artefact of M = 10: it is "
             "more powerful than PB's test at PB's best M of {2, 5, 10, 20} in most settings with an effect.",
       quantity="per (q, ε, n, effect > 0) on the same simulated data sets: the Test of Tests' rejection rate "
                "minus the largest of PB's rates over M ∈ {2, 5, 10, 20} (configs/head_to_head.yaml for M = 10, "
                "configs/head_to_head_pb_m.yaml for the others); MC SE from the two binomial SEs. Taking PB's best "
                "M per setting after seeing the rates favours PB (the maximum of four noisy rates is biased up)",
       test="per setting: the difference > 0 (one-sided); verdict 'most' over the settings",
       files=["head_to_head", "head_to_head_pb_m"], quantifier="most")
def _own_h2h_pb_best_m(ctx):
    main = _h2h_cells(ctx["head_to_head"])
    st = ctx["head_to_head_pb_m"]
    reject = st.replicates("reject")
    pb = {}  # (q, eps, n, effect) -> [(rate, m, M)]
    for c in range(st.res.n_cells):
        get = {k: v[c] for k, v in st.res.cells.items()}
        x = np.ravel(reject[c])
        x = x[np.isfinite(x)]
        if len(x):
            key = (int(get["q"]), float(get["epsilon"]), int(get["n"]), float(get["effect"]))
            pb.setdefault(key, []).append((float(x.mean()), len(x), int(get["num_subsets"])))
    for (method, q, eps, n, effect), (k, m) in main.items():
        if method == "subsample-aggregate" and m:
            pb.setdefault((q, eps, n, effect), []).append((k / m, m, 10))
    g = Group("Test of Tests − PB at its best M")
    for (method, q, eps, n, effect), (k, m) in sorted(main.items()):
        if method != "test-of-tests" or effect == 0.0 or m == 0 or len(pb.get((q, eps, n, effect), [])) < 4:
            continue
        r0, m0, best_m = max(pb[(q, eps, n, effect)])
        r1 = k / m
        d = r1 - r0
        se = math.sqrt(binomial_se(r1, m) ** 2 + binomial_se(r0, m0) ** 2)
        g.add(f"q={q} ε={eps:g} n={n} effect={effect:g}", d, se, sign_outcome(d, se, +1), power=r1,
              power_pb_best=r0, best_m=best_m)
    return [g] if g.settings else []


@claim(id="OWN-h2h-hsb-level", paper="dpmu (own claim)", section="docs/methods.md §11", setting="own",
       figure="head_to_head_hsb",
       words="On the HSB design (HSB2's standardised science, read, write and math scores resampled to n rows, a "
             "simulated response), PB's subsample-and-aggregate test, the Test of Tests and the DP F-test hold the "
             "nominal level α = 0.05 at matched privacy, in every cell — as on the simulated design.",
       quantity="type-I error (effect 0): k rejections of m releases per (method, q, ε, n), exact binomial",
       test="per cell: the rate is at most 3α/2 = 0.075 (one-sided exact binomial, as OWN-h2h-level); verdict "
            "over every cell ('all')",
       files=["head_to_head_hsb"],
       margin="'holds the level' = rate ≤ 3α/2 (as PB-4.3-type1); a conservative test holds it")
def _own_h2h_hsb_level(ctx):
    return _h2h_level_groups(ctx["head_to_head_hsb"])


@claim(id="OWN-h2h-hsb-order", paper="dpmu (own claim)", section="docs/methods.md §11", setting="own",
       figure="head_to_head_hsb",
       words="The ranking found on the simulated design replicates on the HSB design: the Test of Tests is more "
             "powerful than PB's subsample-and-aggregate test, and PB's test more powerful than the DP F-test, in "
             "most settings with an effect (stated from configs/head_to_head.yaml's results before the HSB run).",
       quantity="difference of the rejection rates on the same data sets per (q, ε, n) at effect 0.2: Test of "
                "Tests − PB, and PB − DP F-test; MC SE from the two binomial SEs (conservative: shared data sets)",
       test="per setting: the difference > 0 (one-sided); verdict 'most' over the settings, per comparison",
       files=["head_to_head_hsb"], quantifier="most")
def _own_h2h_hsb_order(ctx):
    cells = _h2h_cells(ctx["head_to_head_hsb"])
    groups = [_h2h_difference_group(cells, better, worse, "power_other")
              for better, worse in (("test-of-tests", "subsample-aggregate"), ("subsample-aggregate", "dp-f"))]
    return [g for g in groups if g.settings]


# ----------------------------------------------------------------------------------------------
# Our own claim: prediction head to head, SSP model averaging vs AdaSSP (configs/head_to_head_pmse.yaml)
# ----------------------------------------------------------------------------------------------

@claim(id="OWN-h2h-pmse", paper="dpmu (own claim)", section="docs/head-to-head.md \"PMSE\"", setting="own",
       figure="head_to_head_pmse_pmse_zellner_siow",
       words="On the paper's §5.2.1 design (Zellner–Siow prior, not thresholded), the AdaSSP baseline (Wang 2018) "
             "predicts better — a lower PMSE — than the paper's SSP model averaging under Laplace noise at the same ε, "
             "in most (p, n, ε) settings. (Exploratory: worded after the run.)",
       quantity="mean PMSE of AdaSSP / mean PMSE of Laplace SSP-BMA on the same simulated data sets, per "
                "(p, |T|, n, ε); delta-method MC SE of the paired ratio",
       test="per setting: the ratio < 1 (one-sided); verdict 'most' over the settings, per p",
       files=["head_to_head_pmse"], quantifier="most",
       margin="matched ε; AdaSSP also spends δ = 1/n, Laplace none (an advantage to AdaSSP)")
def _own_h2h_pmse(ctx):
    st = ctx["head_to_head_pmse"]
    pmse = st.replicates("predictive_mse")
    out = []
    for p in values(st, "p"):
        g = Group(f"p = {p}: AdaSSP / Laplace SSP-BMA")
        for n, eps, ca, cl in _pmse_pairs(st, p, "adassp"):
            r, se = paired_ratio(np.ravel(pmse[ca]), np.ravel(pmse[cl]))
            g.add(f"p={p} n={n} ε={eps:g}", r, se, sign_outcome(r, se, -1, 1.0), ratio=r)
        if g.settings:
            out.append(g)
    return out


def _pmse_pairs(st, p, mechanism):
    """(n, ε, cell of `mechanism`, cell of laplace) of a head_to_head_pmse file at p, for every private ε."""
    for n in values(st, "n"):
        for eps in [e for e in values(st, "epsilon") if np.isfinite(e)]:
            ca = cell(st, p=p, n=n, mechanism=mechanism, epsilon=eps)
            cl = cell(st, p=p, n=n, mechanism="laplace", epsilon=eps)
            if ca is not None and cl is not None:
                yield n, eps, ca, cl


@claim(id="OWN-h2h-ptrue", paper="dpmu (own claim)", section="docs/head-to-head.md \"PMSE\"", setting="own",
       figure="head_to_head_pmse_prob_true_model_zellner_siow",
       words="On the paper's §5.2.1 design (Zellner–Siow prior, not thresholded), model averaging on AdaSSP's "
             "released statistics (with y'y, its budget split in four: 'AdaSSP plug-in') gives the true model a "
             "higher posterior probability than the paper's SSP model averaging under Laplace noise at the same ε, in "
             "most (p, n, ε) settings. (Exploratory: worded after the run.)",
       quantity="mean P(true model | D) of AdaSSP plug-in minus that of Laplace SSP-BMA on the same simulated data "
                "sets, per (p, |T|, n, ε); MC SE of the paired difference",
       test="per setting: the difference > 0 (one-sided); verdict 'most' over the settings, per p",
       files=["head_to_head_pmse"], quantifier="most",
       margin="matched ε; AdaSSP also spends δ = 1/n, Laplace none (an advantage to AdaSSP)")
def _own_h2h_ptrue(ctx):
    st = ctx["head_to_head_pmse"]
    prob = st.replicates("prob_true_model")
    out = []
    for p in values(st, "p"):
        g = Group(f"p = {p}: AdaSSP plug-in − Laplace SSP-BMA")
        for n, eps, ca, cl in _pmse_pairs(st, p, "adassp-bma"):
            diff = np.ravel(prob[ca]) - np.ravel(prob[cl])
            diff = diff[np.isfinite(diff)]
            if len(diff) < 2:
                continue
            d, se = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))
            g.add(f"p={p} n={n} ε={eps:g}", d, se, sign_outcome(d, se, +1), difference=d)
        if g.settings:
            out.append(g)
    return out
