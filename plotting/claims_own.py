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
