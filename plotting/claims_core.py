"""The vocabulary of the claims declarations (plotting/claims.py and its section modules
claims_pb_hsb.py, claims_pb_ssp.py, claims_pb_cps.py, claims_lcssf.py, claims_own.py): statistics
with Monte Carlo error, the per-setting tests (which call the one rule, plotting/verdict_rules.py),
Group and Claim, the registry CLAIMS filled by ``claim``, the settings (paper / variant /
reconstruction / own), and the accessors that know how a study's grid is laid out in a results
file. No declaration lives here."""
import math
import re

import numpy as np
from dataclasses import dataclass, field

import verdict_rules as vr

Z95 = 1.959963984540054
BOOTSTRAP_DRAWS = 200
BOOTSTRAP_SEED = 20240601

# ----------------------------------------------------------------------------------------------
# Statistics with Monte Carlo error
# ----------------------------------------------------------------------------------------------

def mean_se(x):
    """Mean and MC SE of the finite values of x."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return math.nan, math.nan
    if len(x) == 1:
        return float(x[0]), math.nan
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x)))


def bootstrap(x, stat, draws=BOOTSTRAP_DRAWS, seed=BOOTSTRAP_SEED):
    """stat(x) and its bootstrap SE (fixed seed; resampling the finite values of x).
    ``stat`` maps a [B, R] array to B values (axis=-1)."""
    est, boot = bootstrap_sample(x, stat, draws, seed)
    return est, (float(np.std(boot, ddof=1)) if boot is not None else math.nan)


def bootstrap_sample(x, stat, draws=BOOTSTRAP_DRAWS, seed=BOOTSTRAP_SEED):
    """stat(x) and the stat of ``draws`` bootstrap resamples (None if fewer than 2 values)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) < 2:
        return math.nan, None
    est = float(stat(x[None, :])[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(draws, len(x)))
    return est, np.asarray(stat(x[idx]), dtype=float)


def q_stat(q):
    return lambda a: np.quantile(a, q, axis=-1)


def iqr_stat(a):
    q = np.quantile(a, [0.25, 0.75], axis=-1)
    return q[1] - q[0]


def sd_stat(a):
    return np.std(a, axis=-1, ddof=1)


STATS = {"median": q_stat(0.5), "iqr": iqr_stat, "sd": sd_stat}


def boot_of(st, metric, c, stat, fn=None):
    """(estimate, bootstrap SE) of fn(named statistic) (fn = identity by default)."""
    est, sample = st.boot(metric, c, stat)
    if sample is None:
        return math.nan, math.nan
    fn = fn or (lambda v: v)
    return float(fn(np.asarray(est))), float(np.std(fn(sample), ddof=1))


def diff(a, b):
    """(estimate, se) of a - b for independent estimates a = (est, se), b = (est, se)."""
    return a[0] - b[0], math.sqrt(_sq(a[1]) + _sq(b[1]))


def _sq(v):
    return 0.0 if not np.isfinite(v) else v * v


def paired_mean(x, y):
    """Mean of x - y over replicates where both are finite (paired: same data sets), with MC SE."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    return mean_se(x[ok] - y[ok])


def paired_ratio(x, y):
    """mean(x) / mean(y) over replicates where both are finite, with its delta-method MC SE."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 2 or y.mean() == 0:
        return math.nan, math.nan
    r = x.mean() / y.mean()
    return float(r), float(np.std(x - r * y, ddof=1) / math.sqrt(len(x)) / abs(y.mean()))


def binomial_se(rate, n):
    return math.sqrt(max(rate * (1.0 - rate), 0.0) / max(n, 1))


# ----------------------------------------------------------------------------------------------
# Outcomes and verdicts
# ----------------------------------------------------------------------------------------------

def _fmt(v):
    return "∞" if v == math.inf else ("−∞" if v == -math.inf else f"{v:g}")


def sign_outcome(est, se, direction, bound=0.0):
    """The test of a difference: direction +1 claims θ > bound, −1 claims θ < bound (one-sided
    z-tests, verdict_rules.greater/less). Returns the test for Group.add: its description and the
    p-values of the claim and of its negation. An exact tie without Monte Carlo error (both sides
    at a bound, e.g. power 1 vs 1) decides nothing."""
    if direction > 0:
        ps, pc = vr.greater(est, se, bound)
        return {"test": f"> {_fmt(bound)}", "p_support": ps, "p_contradict": pc}
    ps, pc = vr.less(est, se, bound)
    return {"test": f"< {_fmt(bound)}", "p_support": ps, "p_contradict": pc}


def interval_outcome(est, se, lo, hi):
    """The test of lo ≤ θ ≤ hi (a stated range, or the paper's number ± its margin):
    TOST for support, the exact normal test for contradiction (verdict_rules.within)."""
    ps, pc = vr.within(est, se, lo, hi)
    return {"test": f"in [{_fmt(lo)}, {_fmt(hi)}]", "p_support": ps, "p_contradict": pc}


def approx_outcome(est, se, target, margin):
    """The test of θ ≈ target: |θ − target| ≤ margin (verdict_rules.equivalent)."""
    ps, pc = vr.equivalent(est, se, target, margin)
    return {"test": f"≈ {target:g} ± {margin:g}", "p_support": ps, "p_contradict": pc}


def binomial_outcome(k, n, direction, bound):
    """The test of a binomial proportion θ (k of n: a coverage, a rejection rate) against a bound by
    exact binomial tails (verdict_rules.binomial_greater / binomial_less): direction +1 claims
    θ > bound (e.g. coverage ≥ 1 − α − margin), −1 claims θ < bound (a type-I rate ≤ 3α/2)."""
    if direction > 0:
        ps, pc = vr.binomial_greater(k, n, bound)
        return {"test": f"≥ {_fmt(bound)} (exact binomial, one-sided)", "p_support": ps, "p_contradict": pc}
    ps, pc = vr.binomial_less(k, n, bound)
    return {"test": f"≤ {_fmt(bound)} (exact binomial, one-sided)", "p_support": ps, "p_contradict": pc}


def verdict(settings, quantifier="all"):
    """(verdict, fraction supported) of a list of settings (dicts with the p-values of their
    test); writes each setting's outcome (verdict_rules.judge)."""
    res = vr.judge(settings, quantifier)
    return res["verdict"], res["fraction"]


@dataclass
class Group:
    """The settings of one claim under one variant of our implementation (e.g. a calibration)."""
    label: str
    settings: list = field(default_factory=list)
    note: str = ""
    quantifier: str = ""  # overrides the claim's quantifier for this group
    setting: str = ""     # overrides the setting found from the label (SETTING_RULES) or the claim's
    reading: str = ""

    def add(self, setting, est, se, test, **extra):
        """A setting: its estimate ± MC SE and the test of the claim there (sign_outcome,
        interval_outcome or approx_outcome); the outcome is set by the verdict of the group."""
        row = {"setting": setting, "estimate": _num(est), "se": _num(se), "test": test["test"],
               "p_support": _p(test["p_support"]), "p_contradict": _p(test["p_contradict"])}
        row.update({k: _num(v) for k, v in extra.items()})
        self.settings.append(row)

    def especially(self, setting, special, reference, direction=+1, **extra):
        """"Especially in X": one setting comparing the mean estimate over the settings in X
        (``special``: (est, se) pairs) with the mean over the others (verdict_rules.compare_groups)."""
        d, se = vr.compare_groups([a for a, _ in special], [b for _, b in special],
                                  [a for a, _ in reference], [b for _, b in reference])
        self.add(setting, d, se, sign_outcome(d, se, direction), n_special=len(special),
                 n_reference=len(reference), **extra)


def _p(v):
    v = float(v)
    return float(f"{v:.3g}") if v > 0 else 0.0


def _num(v):
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return None if not math.isfinite(v) else float(f"{v:.6g}")
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


@dataclass
class Claim:
    id: str
    paper: str
    section: str
    figure: str
    words: str
    quantity: str
    test: str
    files: list
    check: object
    quantifier: str = "all"
    margin: str = ""   # the margins of "≈", "close", "similar", "best" and how they were derived
    not_run: str = ""  # why no result in the repository's configs computes it, and what would
    setting: str = "paper"  # paper | variant | reconstruction | own (a group label may refine it: SETTING_RULES)
    reading: str = ""  # the reading used where the paper is ambiguous, and why
    kind: str = "claim"  # "claim" (judged) or "comparison" (a figure comparison: numbers, no verdict)
    self_contained: bool = False  # computed by its own seeded simulation, without results files


CLAIMS = []
# claim id -> function(Group) -> Group re-testing stored settings where a claim's test changed after the
# claims.json it reads was written (plotting/claims.py --evidence); filled beside the claims it serves
RETESTS = {}



SETTINGS = ("paper", "variant", "reconstruction", "own")
# The setting of a group of settings, from its label (first match wins; otherwise the claim's own):
# 'paper' = the paper's setting (where the paper is ambiguous, the documented reading, named here);
# 'reconstruction' = another reading of what the paper leaves unsaid; 'variant' = a deliberate
# change of ours beside the paper's setting (a sensitivity analysis); 'own' = our own claims.
# docs/decisions.md ("The paper's setting apart from our variants") has the reasons.
SETTING_RULES = (
    (r"randomized", "variant",
     "our test randomized at the atom T* = U (exact level); not the paper's procedure"),
    (r"paper_literal", "variant",
     "PB's printed Gaussian variance, M times the (ε, δ)-calibrated one (docs/methods.md A2); Figure 2's "
     "wording weakly suggests PB ran it"),
    (r"gaussian_calibration=exact|calibration:? exact", "paper",
     "the Gaussian mechanism calibrated to the (ε, δ) PB state (the printed variance is the variant "
     "paper_literal)"),
    (r"lcssf_delta = rpR_2", "paper",
     "sensitivity (r + R)² with |X_ij| ≤ 1 and |Y| ≤ r: the reading of LCSSF's lost lemma most consistent "
     "with their design (docs/lcssf.md); LCSSF's formulas did not survive, so every LCSSF row is a reconstruction"),
    (r"lcssf_delta = r2_1pR2", "reconstruction",
     "sensitivity r²(1+R)² (reading (a), docs/methods.md §6.3): a valid DP bound, far more noise than LCSSF's "
     "results allow"),
    (r"lcssf_delta = 1pR_2", "variant",
     "sensitivity (1+R)² with κ = 1: the noise level compatible with LCSSF's statements, not DP for r > 1"),
    (r"^fig5_cps_public_bounds", "variant",
     "public bounds (age 15–85, …) instead of the data's range: privacy-correct, not PB's procedure"),
    (r"^fig5_cps_centred_age", "paper",
     "age² from centred age: PB do not say whether age² is of raw or centred age; the reading whose β1 scale "
     "matches Figure 5 (docs/decisions.md, 'Figure 5 (CPS)')"),
    (r"^fig5_cps(?![_\w])", "reconstruction",
     "age² from raw age: the other reading of PB's 'age squared' (β1 intervals 5–35× wider than Figure 5)"),
)


def setting_of(cl, group):
    """(setting, reading) of a group of settings of claim cl: the group's own, else the first rule of
    SETTING_RULES matching its label, else the claim's. Own claims stay own."""

    if cl.setting == "own":
        return "own", cl.reading
    if group.setting:
        return group.setting, group.reading or cl.reading
    for pattern, setting, reading in SETTING_RULES:
        if re.search(pattern, group.label):
            return setting, reading
    return cl.setting, cl.reading


def split_calibrations(group):
    """A group pooling settings of both Gaussian calibrations (HSB studies of Figures 2 and 7 grouped
    by study) split into one group per calibration, so that the paper's setting and the variant are
    judged apart; other groups are returned unchanged."""

    cals = {}
    for row in group.settings:
        m = re.search(r"gaussian_calibration=(\w+)", str(row["setting"]))
        cals.setdefault(m.group(1) if m else "", []).append(row)
    if len(cals) < 2:
        return [group]
    return [Group(f"{group.label} — calibration {cal}" if cal else group.label, rows, group.note, group.quantifier,
                  group.setting, group.reading) for cal, rows in cals.items()]


def claim(**kw):
    def register(fn):
        CLAIMS.append(Claim(check=fn, **kw))
        return fn
    return register


# ----------------------------------------------------------------------------------------------
# Accessors (the only place that knows how a study's grid is laid out in the results file)
# ----------------------------------------------------------------------------------------------

def cell(st, **cond):
    """The single cell index matching the conditions (None if there is none)."""
    idx = st.res.select(**cond)
    if len(idx) == 0:
        return None
    if len(idx) > 1:
        raise ValueError(f"{st.path}: {len(idx)} cells match {cond}, expected one")
    return int(idx[0])


def values(st, name):
    return st.res.values(name) if name in st.res.cells else []


def reps(st, metric, c, k=None):
    r = st.replicates(metric)[c]
    return r if k is None else r[:, k]


class SspVariants:
    """Accessor for ``ssp_simulation`` results: the per-replicate values of a metric for one
    method variant (prior, ε, mechanism, thresholded) in one design cell (p, |T|, n). The claims
    read the simulation study only through this class. Prior, mechanism (none / laplace /
    wishart), thresholded (0/1) and epsilon (inf for mechanism none) are grid axes; every metric
    is scalar per cell, and the method cells of one (p, |T|, n) share their data sets replicate
    by replicate (the data are generated once per data key and replicate), so replicate r of two
    method cells is a pair. Files written before the method axes (2026-12-01) are refused."""

    def __init__(self, st):
        self.st = st
        r = st.res
        if "mechanism" not in r.cells or "prior" not in r.cells:
            raise ValueError(f"{st.path}: an ssp_simulation file without the method axes (mechanism, prior): "
                             "written before 2026-12-01; re-run its config")
        self._prior_values = [str(v) for v in r.values("prior")]
        self.epsilons = sorted(float(e) for e in r.values("epsilon") if np.isfinite(float(e)))
        self.priors = [v.replace("-", "_") for v in self._prior_values]

    def design_cells(self):
        """(p, |T|, n) of every design cell, sorted."""
        r = self.st.res
        return sorted({(int(p), int(t), int(n)) for p, t, n in
                       zip(r.cells["p"], r.cells["true_model_size"], r.cells["n"])})

    def has_prior(self, prior):
        return prior in self.priors

    def values(self, metric, p, t, n, prior, mechanism="none", epsilon=None, thresholded=False):
        """Per-replicate values [R] (None if the variant is not in the file)."""
        if prior not in self.priors:
            return None
        raw_prior = self._prior_values[self.priors.index(prior)]
        c = cell(self.st, p=p, true_model_size=t, n=n, prior=raw_prior, mechanism=mechanism,
                 thresholded=1 if thresholded else 0, epsilon=math.inf if mechanism == "none" else epsilon)
        return None if c is None else self.st.replicates(metric)[c]


# ----------------------------------------------------------------------------------------------
# Helpers shared by the HSB claims
# ----------------------------------------------------------------------------------------------

HSB_TESTS = {"H1": ("H11", "P*(H11|D)"), "H2": ("H12", "P*(H12|D)")}


def pairs(seq):
    seq = list(seq)
    return list(zip(seq[:-1], seq[1:]))


def stat_of(st, metric, c, stat):
    if stat == "mean":
        return mean_se(reps(st, metric, c))
    return boot_of(st, metric, c, stat)


def monotone(group, st, metric, stat, axis, fixed_sets, direction, label):
    """For each fixed setting and consecutive values a < b of ``axis``: the sign of
    stat(b) - stat(a) is claimed to be ``direction``."""
    for fixed in fixed_sets:
        vals = [v for v in values(st, axis) if cell(st, **fixed, **{axis: v}) is not None]
        for a, b in pairs(vals):
            ca, cb = cell(st, **fixed, **{axis: a}), cell(st, **fixed, **{axis: b})
            sa, sb = stat_of(st, metric, ca, stat), stat_of(st, metric, cb, stat)
            d, se = diff(sb, sa)
            desc = ", ".join(f"{k}={v}" for k, v in fixed.items())
            group.add(f"{desc}; {axis} {a}→{b}", d, se, sign_outcome(d, se, direction),
                      **{f"{label}_at_{a}": sa[0], f"{label}_at_{b}": sb[0]})


def monotone_check(stem, metric, stat, axis, fixed_names, direction, label):
    """A claim check: ``monotone`` over every combination of ``fixed_names`` in one study."""
    def check(ctx):
        st = ctx[stem]
        g = Group("")
        monotone(g, st, metric, stat, axis, grid(st, *fixed_names), direction, label)
        return [g]
    return check


def grid(st, *names):
    """Every combination of the distinct values of the given parameters present in the file."""
    out = [{}]
    for name in names:
        out = [dict(o, **{name: v}) for o in out for v in values(st, name)]
    return [o for o in out if len(st.res.select(**o)) > 0]


def hsb_files(ctx, *stems):
    return [ctx[s] for s in stems if s in ctx]



SUPPORT_COVERAGE_BOUND = 0.945  # 0.95 less half a unit of its last printed digit


def coverage_test(k, n, bound):
    """"A 1 − α confidence interval": coverage ≥ bound, one-sided (an interval may over-cover, so the
    natural upper edge 1 is no edge of the claim), by exact binomial tails. The earlier test, an
    interval [bound, 1], could never support a coverage of 1.000 (TOST needs the estimate
    significantly below 1): the bug a referee found."""
    return binomial_outcome(k, n, +1, bound)


def _retest_coverage(bound_of):
    """Re-test stored coverage settings (estimate = k/n, 'runs' = n) with ``coverage_test``."""
    def retest(g, stored_all=None):
        for row in g.settings:
            n = int(row["runs"])
            t = coverage_test(round(row["estimate"] * n), n, bound_of(row))
            row.update(test=t["test"], p_support=_p(t["p_support"]), p_contradict=_p(t["p_contradict"]))
        return g
    return retest



def _config_of(stem):
    return f"configs/{stem}.yaml"
