"""The statistical rule that turns per-setting estimates ± Monte Carlo SE into a claim's verdict.

This module knows nothing about the papers or the results files: plotting/claims.py declares the
claims (the paper's words, the quantity, the settings) and hands every setting to the functions
below as (estimate, MC SE, test). Everything here is a pure function of its arguments.

Per setting, a claim is one of three kinds of statement about the true value θ of a quantity that
the simulation estimates by θ̂ with Monte Carlo standard error s (θ̂ approximately N(θ, s²), the
normal approximation of a Monte Carlo mean or of a bootstrap-SE'd statistic):

* an inequality, θ > b or θ < b ("larger", "decreases", "below"): one-sided z-tests
  (``greater``, ``less``);
* an interval, lo ≤ θ ≤ hi ("≈", "close", "similar", "best", "a small drop"): the interval is
  the paper's number ± a stated margin, or a stated range; ``within`` / ``equivalent``;
* an exact number (s = 0, e.g. a non-private statistic): the same tests, decided without error.

Each test returns two p-values:

* ``p_support``: for H0 "the claim is false at this setting". The claim is *supported* at the
  setting when p_support ≤ α. For an interval this is the two one-sided tests (TOST) procedure of
  Schuirmann (1987, J. Pharmacokinet. Biopharm. 15:657–680): p = max of the p-values of
  θ ≤ lo and θ ≥ hi, i.e. the 1 − 2α interval θ̂ ± z_{1−α} s lies inside [lo, hi].
* ``p_contradict``: for H0 "the claim is true at this setting" (θ ≥ b, θ ≤ b or lo ≤ θ ≤ hi). For an
  interval, with d the distance of θ̂ outside [lo, hi] (0 inside), the exact p-value of the normal
  model is sup over θ ∈ [lo, hi] of P(θ̂ falls at least d outside) = Φ(−d/s) + Φ(−(d + hi − lo)/s),
  attained at an end point.

Across the settings of one claim (one group of settings: the grid the sentence speaks of):

* *Contradictions* are family-wise controlled with Holm's step-down procedure (Holm 1979, Scand. J.
  Statist. 6:65–70) at level α = 0.05: the probability that a claim that is true at every setting
  shows any contradicted setting is at most α, under any dependence between the settings' estimates
  (paired variants share their data sets). Holm, not Benjamini–Hochberg (1995, J. R. Statist. Soc.
  B 57:289–300): a universal claim is contradicted as soon as one setting is, so the error that
  matters is "at least one false contradiction" (the family-wise error), which BH does not bound
  when some settings are true (it bounds the expected *proportion* of false contradictions among
  the contradictions, and with one contradiction that proportion is 0 or 1). Holm is uniformly
  more powerful than Bonferroni with the same guarantee. docs/decisions.md has the entry.
* *Support* of a universal ("all") needs every setting supported, each at level α without
  adjustment: the intersection–union principle (Berger 1982, Technometrics 24:295–300): the
  rejection of "false somewhere" by rejecting "false at i" for every i has level α.
* Majority quantifiers ("most", "in most cases", "tend to", "generally"): the claim is "more than
  half of the settings". With s settings supported and c contradicted (Holm) out of n, the fraction
  of settings where the claim is true gets a one-sided Clopper–Pearson (1934, Biometrika
  26:404–413) lower bound from s/n and an upper bound from (n − c)/n, each at level α, i.e. the
  binomial test of "fraction ≤ 1/2" on the supported count, treating the grid as a sample of the
  settings the sentence speaks of. Holds when the lower bound exceeds 1/2; does not hold when the
  upper bound is below 1/2.
* "Especially when X" is a comparison between groups, not a universal: ``compare_groups`` turns the
  settings in X and those outside it into one setting (difference of the groups' mean estimates,
  with the SE of a difference of independent means), tested one-sided.

Verdicts (``VERDICTS``; each label's meaning is frozen in ``LABELS`` and printed with its counts by
``label``): with s supported, c contradicted and u unresolved settings out of n,

* ``holds``: every setting supported (majority: the Clopper–Pearson lower bound > 1/2; existential:
  at least one setting supported after Holm's correction of the support p-values);
* ``holds within MC error``: none contradicted and a majority supported (s > n/2), the rest
  unresolved; never with zero support, and shown apart from ``holds`` (not in its colour);
* ``undecided``: no setting contradicted (or, for a majority claim, neither bound decides) but support
  is absent or a minority (s ≤ n/2): the Monte Carlo precision does not decide the claim;
* ``partly``: some settings contradicted after Holm's correction, and no more contradicted than
  supported (c ≤ s); always printed as "partly (c of n contradicted)";
* ``does not hold``: contradicted settings outnumber supported ones (c > s, c ≥ 1; majority: the upper
  bound of the fraction is below 1/2; existential: every setting contradicted);
* ``figure comparison``: the entry compares our figure with the paper's (an axis, "similar") and
  gives no verdict (its numbers are shown);
* ``not run``: no result to compute it from (the caller says why and which command produces it).

Existential quantifiers ("can", "some", "a proper choice of … leads to"; ``EXISTENTIAL``): the claim
is "true at some setting". Support needs one setting whose support p-value survives Holm's
correction across the settings (the selection of the best setting is paid for); a contradiction of
the claim needs every setting contradicted (intersection–union, each at level α).

A maximum over a grid (the best proportion over 51 penalties) or a count of grid points above a
bound (the width of the region where a proportion is ≥ 0.9) is selected from noisy estimates;
``at_least`` tests "at least m of the K grid values exceed b" with Bonferroni-adjusted per-point
p-values, so the arg-max is paid for (m = 1: the best value).

The simulated family-wise false-alarm rate of the whole rule (a claim true at every setting
labelled ``partly`` or ``does not hold``) is measured in tests/python/test_verdict_rules.py and
stated in docs/claims.md.
"""
import math
from types import MappingProxyType

import numpy as np
from scipy import stats

ALPHA = 0.05
# The family-wise false-alarm rate of the whole rule, measured by simulation (checked against the
# simulation by tests/python/test_verdict_rules.py, so the documentation quoting it cannot drift)
MEASURED_FALSE_ALARM = (0.0395, 0.0044)
MEASURED_FALSE_ALARM_TEXT = ("0.0395 ± 0.0044 (MC SE) at level 0.05: 2000 synthetic claims of 30–600 settings, true at "
                             "every setting, every true value on the boundary of the claim (worst case), half of "
                             "the claims with correlated settings (ρ = 0.5), half one-sided and half ≈ with a "
                             "margin; seed 28. The previous rule (each setting at ± 1.96 SE, no multiplicity "
                             "control) raised a false alarm on 0.74 of the same one-sided claims")
# The labels and what each may say, frozen (a read-only mapping; tests/python/test_verdict_rules.py
# checks the rule against these sentences on synthetic claims).
LABELS = MappingProxyType({
    "holds": "every setting of the claim is supported at level α (intersection–union); for 'most', the "
             "Clopper–Pearson lower bound of the fraction of true settings exceeds 1/2; for 'can'/'some', at "
             "least one setting is supported after Holm's correction",
    "holds within MC error": "no setting contradicted and more than half of the settings supported; the rest "
                             "are unresolved at this Monte Carlo precision (never granted with zero support)",
    "undecided": "support is absent or a minority (at most half of the settings supported) and contradictions "
                 "do not outnumber it; for 'most', neither Clopper–Pearson bound decides; the Monte Carlo "
                 "precision does not decide the claim",
    "partly": "some settings contradicted after Holm's correction, no more contradicted than supported; "
              "printed with its counts, 'partly (c of n contradicted)'",
    "does not hold": "contradicted settings outnumber supported ones; for 'most', the upper bound of the fraction "
                     "of true settings is below 1/2; for 'can'/'some', every setting is contradicted",
    "figure comparison": "a comparison of our figure with the paper's (axes, 'similar'), shown with its numbers "
                         "and without a verdict",
    "not run": "no result to compute it from; the reason and the command that produces it are given",
})
VERDICTS = tuple(LABELS)
# The verdicts that say the claim is borne out; "holds within MC error" is one of them but is shown
# apart from "holds" (its own colour) because part of its evidence is unresolved.
SUPPORTIVE = ("holds", "holds within MC error")
MAJORITY = ("most", "tend to")
EXISTENTIAL = ("some", "can")
QUANTIFIERS = ("all",) + MAJORITY + EXISTENTIAL


# ----------------------------------------------------------------------------------------------
# One setting: p-values of the claim and of its negation
# ----------------------------------------------------------------------------------------------

def _z(est, se, bound):
    """(θ̂ − b)/s as an array; ±inf when s is 0 or not finite (an exact number), nan for a tie
    θ̂ = b without error or a non-finite estimate."""
    est, se, bound = np.broadcast_arrays(np.asarray(est, float), np.asarray(se, float), np.asarray(bound, float))
    d = est - bound
    s = np.where(np.isfinite(se) & (se > 0), se, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(s > 0, d / np.where(s > 0, s, 1.0), np.sign(d) * np.inf)
    z = np.where((s == 0) & (d == 0), np.nan, z)
    return np.where(np.isfinite(est), z, np.nan)


def _out(p_support, p_contradict):
    ps, pc = np.asarray(p_support, float), np.asarray(p_contradict, float)
    if ps.ndim == 0:
        return float(ps), float(pc)
    return ps, pc


def greater(est, se, bound=0.0):
    """The claim θ > bound: (p_support, p_contradict) of one-sided z-tests of θ ≤ b and θ ≥ b.
    An exact tie (θ̂ = b, s = 0) or a non-finite θ̂ decides nothing: both p-values are 1."""
    z = _z(est, se, bound)
    ps = np.where(np.isnan(z), 1.0, stats.norm.sf(np.nan_to_num(z, nan=0.0, posinf=np.inf, neginf=-np.inf)))
    pc = np.where(np.isnan(z), 1.0, stats.norm.cdf(np.nan_to_num(z, nan=0.0, posinf=np.inf, neginf=-np.inf)))
    return _out(ps, pc)


def less(est, se, bound=0.0):
    """The claim θ < bound (``greater`` with the sides exchanged)."""
    ps, pc = greater(-np.asarray(est, float), se, -np.asarray(bound, float))
    return ps, pc


def within(est, se, lo, hi):
    """The claim lo ≤ θ ≤ hi (either end may be infinite). p_support: TOST (Schuirmann 1987), the
    larger of the one-sided p-values of θ < lo and θ > hi. p_contradict: exact for the normal
    model, Φ(−d/s) + Φ(−(d + hi − lo)/s) with d the distance of θ̂ outside [lo, hi] (0 inside)."""
    est, se, lo, hi = np.broadcast_arrays(*(np.asarray(v, float) for v in (est, se, lo, hi)))
    if np.any(lo > hi):
        raise ValueError("within: lo > hi")
    s = np.where(np.isfinite(se) & (se > 0), se, 0.0)
    ok = np.isfinite(est)
    e = np.where(ok, est, 0.0)
    # support: θ̂ significantly above lo and significantly below hi
    with np.errstate(divide="ignore", invalid="ignore"):
        z_lo = np.where(s > 0, (e - lo) / np.where(s > 0, s, 1.0), np.where(e >= lo, np.inf, -np.inf))
        z_hi = np.where(s > 0, (hi - e) / np.where(s > 0, s, 1.0), np.where(e <= hi, np.inf, -np.inf))
    z_lo = np.where(np.isneginf(lo), np.inf, z_lo)
    z_hi = np.where(np.isposinf(hi), np.inf, z_hi)
    ps = np.maximum(stats.norm.sf(z_lo), stats.norm.sf(z_hi))
    # contradiction: θ̂ significantly outside [lo, hi]
    d = np.maximum(np.maximum(lo - e, e - hi), 0.0)
    width = hi - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(s > 0, d / np.where(s > 0, s, 1.0), np.where(d > 0, np.inf, 0.0))
        t2 = np.where(s > 0, (d + width) / np.where(s > 0, s, 1.0), np.where(d + width > 0, np.inf, 0.0))
    pc = np.where(d > 0, stats.norm.sf(t1), 1.0) + np.where(np.isfinite(width), stats.norm.sf(t2), 0.0)
    pc = np.minimum(np.where(d > 0, pc, 1.0), 1.0)
    ps = np.where(ok, ps, 1.0)
    pc = np.where(ok, pc, 1.0)
    return _out(ps, pc)


def equivalent(est, se, target, margin):
    """The claim |θ − target| ≤ margin ("≈", "close", "similar"): ``within(target ± margin)``."""
    if np.any(np.asarray(margin, float) < 0):
        raise ValueError("equivalent: negative margin")
    return within(est, se, np.asarray(target, float) - margin, np.asarray(target, float) + margin)


def reading_margin(tick_spacing=None, last_digit=None):
    """The margin of a number taken from the paper: half the resolution it can be read to.
    A number read off a figure is resolved to a tenth of the figure's tick spacing, so the margin
    is tick_spacing/20 (ticks 0.25 apart: 0.0125); a number printed in the text with its last digit
    in place ``last_digit`` (0.01 for "0.25") has margin last_digit/2. With both, the larger."""
    m = []
    if tick_spacing is not None:
        m.append(tick_spacing / 20.0)
    if last_digit is not None:
        m.append(last_digit / 2.0)
    if not m:
        raise ValueError("reading_margin: give tick_spacing or last_digit")
    return max(m)


def compare_groups(est_special, se_special, est_reference, se_reference):
    """"Especially in X": (mean of the estimates in X) − (mean of the estimates outside X) with the
    SE of a difference of means of independent estimates, sqrt(Σ s_i²/n_X² + Σ s_j²/n_R²)."""
    a, sa = np.asarray(est_special, float), np.asarray(se_special, float)
    b, sb = np.asarray(est_reference, float), np.asarray(se_reference, float)
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan
    sa, sb = np.nan_to_num(sa), np.nan_to_num(sb)
    d = float(a.mean() - b.mean())
    se = math.sqrt(float((sa ** 2).sum()) / a.size ** 2 + float((sb ** 2).sum()) / b.size ** 2)
    return d, se


def binomial_greater(k, n, bound):
    """The claim θ > bound for a binomial proportion θ estimated by k successes in n trials (a
    coverage, a rejection rate, a proportion correct), by exact binomial tails instead of a normal
    approximation (exact at the ceiling 1 and the floor 0, where a normal SE is 0 or misleading):
    p_support = P(X ≥ k | θ = b), p_contradict = P(X ≤ k | θ = b), X ~ Bin(n, b)."""
    k, n, bound = int(round(k)), int(n), float(bound)
    if n <= 0:
        return 1.0, 1.0
    return float(stats.binom.sf(k - 1, n, bound)), float(stats.binom.cdf(k, n, bound))


def binomial_less(k, n, bound):
    """The claim θ < bound for a binomial proportion: ``binomial_greater`` with the sides exchanged,
    p_support = P(X ≤ k | θ = b), p_contradict = P(X ≥ k | θ = b)."""
    k, n, bound = int(round(k)), int(n), float(bound)
    if n <= 0:
        return 1.0, 1.0
    return float(stats.binom.cdf(k, n, bound)), float(stats.binom.sf(k - 1, n, bound))


def at_least(p_support, p_contradict, m):
    """"At least m of the K grid values satisfy the claim" from the K per-value p-values (of one
    claim, e.g. θ_k ≥ 0.9 at each penalty k), with the selection of the values paid for: support
    needs m values each supported at the Bonferroni-adjusted level (p_support = the m-th smallest of
    min(1, K p_k)); contradiction needs K − m + 1 values each contradicted at the adjusted level
    (p_contradict = the (K − m + 1)-th smallest of min(1, K q_k)). m = 1 is "the best value over the
    grid satisfies the claim" (the arg-max paid for); m = K is the universal."""
    ps = np.sort(np.minimum(1.0, np.asarray(p_support, float).ravel() * np.size(p_support)))
    pc = np.sort(np.minimum(1.0, np.asarray(p_contradict, float).ravel() * np.size(p_contradict)))
    k = ps.size
    if not 1 <= m <= k:
        raise ValueError(f"at_least: m = {m} outside 1..{k}")
    return float(ps[m - 1]), float(pc[k - m])


# ----------------------------------------------------------------------------------------------
# A family of settings
# ----------------------------------------------------------------------------------------------

def holm(p, alpha=ALPHA):
    """Holm's (1979) step-down procedure: (rejected [bool], adjusted p-values). The i-th smallest
    p-value p_(i) (i = 1..n) is rejected if p_(j) ≤ α/(n − j + 1) for every j ≤ i; the adjusted
    p-value is max_{j ≤ i} min(1, (n − j + 1) p_(j))."""
    p = np.asarray(p, float)
    n = p.size
    if n == 0:
        return np.zeros(0, bool), np.zeros(0)
    order = np.argsort(p, kind="stable")
    adj_sorted = np.maximum.accumulate(np.minimum(1.0, (n - np.arange(n)) * p[order]))
    adj = np.empty(n)
    adj[order] = adj_sorted
    return adj <= alpha, adj


def clopper_pearson(k, n, alpha=ALPHA):
    """One-sided Clopper–Pearson (1934) bounds (lower, upper) of a binomial proportion from k of n,
    each at confidence 1 − α: lower = Beta_α(k, n − k + 1), upper = Beta_{1−α}(k + 1, n − k)."""
    if n <= 0:
        return 0.0, 1.0
    lo = 0.0 if k <= 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k >= n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def outcomes(p_support, p_contradict, alpha=ALPHA):
    """Per-setting outcomes of one family: 'contradicted' (Holm-adjusted p_contradict ≤ α),
    'supported' (p_support ≤ α, intersection–union: no adjustment), else 'unresolved'; and the
    Holm-adjusted p-values of contradiction."""
    ps = np.atleast_1d(np.asarray(p_support, float))
    rej, adj = holm(np.atleast_1d(np.asarray(p_contradict, float)), alpha)
    out = np.where(rej, "contradicted", np.where(ps <= alpha, "supported", "unresolved"))
    return [str(o) for o in out], adj


def outcomes_existential(p_support, p_contradict, alpha=ALPHA):
    """Per-setting outcomes of an existential claim ("can", "some"): 'supported' when the
    Holm-adjusted support p-value is ≤ α (the setting that shows the claim is chosen from the data,
    so its selection is paid for), 'contradicted' when the unadjusted contradiction p-value is ≤ α
    (intersection–union: "false everywhere" needs every setting), else 'unresolved'. Returns the
    outcomes and the Holm-adjusted support p-values."""
    ps = np.atleast_1d(np.asarray(p_support, float))
    pc = np.atleast_1d(np.asarray(p_contradict, float))
    rej, adj = holm(ps, alpha)
    out = np.where(rej, "supported", np.where(pc <= alpha, "contradicted", "unresolved"))
    return [str(o) for o in out], adj


def classify(s, c, n, quantifier="all", bounds=None):
    """The verdict class from the counts: s supported, c contradicted of n settings (the rest
    unresolved), under a quantifier; ``bounds`` = the Clopper–Pearson (lower, upper) bounds of the
    fraction of true settings for a majority quantifier. The labels' meanings: ``LABELS``."""
    if n == 0:
        return "not run"
    if quantifier in EXISTENTIAL:
        if s > 0:
            return "holds"
        return "does not hold" if c == n else "undecided"
    if quantifier in MAJORITY:
        lo, hi = bounds
        if lo > 0.5:
            return "holds"
        if hi < 0.5:
            return "does not hold"
        if c > s:
            return "undecided"  # leaning against, but the bounds do not decide a majority
    elif s == n:
        return "holds"
    if c == 0:
        return "holds within MC error" if 2 * s > n else "undecided"
    return "does not hold" if c > s else "partly"


def label(verdict_class, counts, n):
    """The printed label: the verdict with the counts that justify it, e.g. "partly (3 of 24
    contradicted)", "undecided (6 of 6 unresolved)", "holds within MC error (29 of 30 supported,
    none contradicted)"."""
    s, c, u = counts.get("supported", 0), counts.get("contradicted", 0), counts.get("unresolved", 0)
    if verdict_class == "holds":
        return f"holds ({s} of {n} supported" + (f", {c} contradicted)" if c else ")")
    if verdict_class == "holds within MC error":
        return f"holds within MC error ({s} of {n} supported, none contradicted)"
    if verdict_class == "undecided":
        return f"undecided ({u} of {n} unresolved" + (f", {s} supported" if s else "") + \
            (f", {c} contradicted)" if c else ")")
    if verdict_class in ("partly", "does not hold"):
        return f"{verdict_class} ({c} of {n} contradicted" + (f", {s} supported)" if s else ")")
    return verdict_class


def verdict(p_support, p_contradict, quantifier="all", alpha=ALPHA):
    """The verdict of one family of settings. Returns a dict: verdict (a class of ``VERDICTS``),
    label (the class with its counts), outcomes (per setting), p_contradict_holm (per setting; for an
    existential claim the Holm-adjusted support p-values are in p_support_holm instead), counts,
    fraction (supported / n) and, for majority quantifiers, the Clopper–Pearson bounds of the
    fraction of settings where the claim is true. An empty family is 'not run' (the caller says
    why)."""
    if quantifier not in QUANTIFIERS:
        raise ValueError(f"verdict: unknown quantifier {quantifier!r} (one of {QUANTIFIERS})")
    ps = np.atleast_1d(np.asarray(p_support, float))
    pc = np.atleast_1d(np.asarray(p_contradict, float))
    n = ps.size
    if n == 0:
        return {"verdict": "not run", "label": "not run", "outcomes": [], "p_contradict_holm": [], "fraction": None,
                "counts": {"supported": 0, "contradicted": 0, "unresolved": 0}}
    if quantifier in EXISTENTIAL:
        outs, adj_s = outcomes_existential(ps, pc, alpha)
        adj = np.minimum(pc, 1.0)
    else:
        outs, adj = outcomes(ps, pc, alpha)
    s, c = outs.count("supported"), outs.count("contradicted")
    counts = {"supported": s, "contradicted": c, "unresolved": n - s - c}
    res = {"outcomes": outs, "p_contradict_holm": [float(a) for a in adj], "fraction": s / n, "counts": counts}
    bounds = None
    if quantifier in MAJORITY:
        bounds = [clopper_pearson(s, n, alpha)[0], clopper_pearson(n - c, n, alpha)[1]]
        res["fraction_bounds"] = bounds
    if quantifier in EXISTENTIAL:
        res["p_support_holm"] = [float(a) for a in adj_s]
    res["verdict"] = classify(s, c, n, quantifier, bounds)
    res["label"] = label(res["verdict"], counts, n)
    return res


def claim_level(families, alpha=ALPHA):
    """The table-level view of one claim across its rows (variants, studies): the contradiction
    p-values of every setting of every row pooled into one family and Holm-corrected across all of
    them. Returns n (settings), contradicted (count after the pooled correction) and the smallest
    pooled adjusted p-value (1 when there is no setting)."""
    pc = np.concatenate([np.atleast_1d(np.asarray(f, float)) for f in families]) if families else np.zeros(0)
    if pc.size == 0:
        return {"n": 0, "contradicted": 0, "min_p_contradict_holm": 1.0}
    rej, adj = holm(pc, alpha)
    return {"n": int(pc.size), "contradicted": int(rej.sum()), "min_p_contradict_holm": float(adj.min())}


def judge(settings, quantifier="all", alpha=ALPHA):
    """``verdict`` on a list of settings given as dicts with 'p_support' and 'p_contradict'; writes
    each setting's 'outcome' and 'p_contradict_holm' into it and returns the verdict dict."""
    res = verdict([s["p_support"] for s in settings], [s["p_contradict"] for s in settings], quantifier, alpha)
    for s, o, a in zip(settings, res["outcomes"], res["p_contradict_holm"]):
        s["outcome"] = o
        s["p_contradict_holm"] = a
    return res
