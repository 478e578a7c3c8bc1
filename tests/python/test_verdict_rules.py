"""plotting/verdict_rules.py on synthetic inputs with known truth, and its formulas against
independent values (closed forms, a direct transcription of Holm's definition, scipy's binomial
test). Run: /usr/bin/python3 -m pytest tests/python -q (also ctest -R python.)."""
import math
import os
import sys

import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plotting"))
import verdict_rules as vr  # noqa: E402


def upper_tail(z):
    """1 − Φ(z) from the complementary error function (independent of scipy.stats)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


# ----------------------------------------------------------------------------------------------
# One setting
# ----------------------------------------------------------------------------------------------

def test_one_sided_p_values_are_normal_tails():
    for est, se, b in ((1.0, 0.4, 0.0), (-0.3, 0.2, 0.1), (2.5, 1.0, 2.5), (0.01, 0.003, 0.0)):
        ps, pc = vr.greater(est, se, b)
        z = (est - b) / se
        assert ps == pytest.approx(upper_tail(z), rel=1e-12, abs=1e-15)
        assert pc == pytest.approx(1 - upper_tail(z), rel=1e-12, abs=1e-15)
        ps2, pc2 = vr.less(est, se, b)
        assert ps2 == pytest.approx(pc) and pc2 == pytest.approx(ps)
    # supported at α = 0.05 exactly when θ̂ − 1.645 s > b (the one-sided 95% bound)
    assert vr.greater(1.0, 1.0 / 1.6448536269514722 * 0.999, 0.0)[0] < 0.05
    assert vr.greater(1.0, 1.0 / 1.6448536269514722 * 1.001, 0.0)[0] > 0.05


def test_exact_numbers_and_ties():
    assert vr.greater(0.3, 0.0) == (0.0, 1.0)          # exact and on the claimed side
    assert vr.greater(-0.3, 0.0) == (1.0, 0.0)         # exact and on the other side
    assert vr.greater(1.0, 0.0, 1.0) == (1.0, 1.0)     # an exact tie decides nothing
    assert vr.greater(math.nan, 0.1) == (1.0, 1.0)     # no estimate decides nothing
    assert vr.greater(0.3, math.nan) == (0.0, 1.0)     # no MC error: exact


def test_tost_is_the_interval_inclusion_rule():
    """p_support ≤ α  ⇔  θ̂ ± z_{1−α} s ⊂ [lo, hi] (Schuirmann's 1 − 2α interval)."""
    rng = np.random.default_rng(5)
    z = stats.norm.isf(0.05)
    est = rng.uniform(-1, 2, 4000)
    se = rng.uniform(0.01, 0.5, 4000)
    ps, _ = vr.within(est, se, 0.0, 1.0)
    inside = (est - z * se >= 0.0) & (est + z * se <= 1.0)
    assert np.array_equal(ps <= 0.05, inside)


def test_contradiction_p_value_of_an_interval_is_exact():
    """Under θ at an end of [lo, hi], P(p_contradict ≤ α) = α (the test is exact at the ends and
    conservative inside), by simulation: 200 000 draws, SE of the rate 0.0005."""
    rng = np.random.default_rng(11)
    n = 200_000
    for theta, lo, hi in ((0.0, 0.0, 0.3), (0.3, 0.0, 0.3), (0.0, 0.0, 0.0), (0.15, 0.0, 0.3)):
        est = theta + rng.standard_normal(n)
        _, pc = vr.within(est, 1.0, lo, hi)
        rate = float(np.mean(pc <= 0.05))
        if theta in (lo, hi):
            assert abs(rate - 0.05) < 0.0025, (theta, lo, hi, rate)
        else:
            assert rate < 0.05
    # closed form for one value: d = 0.5 outside [0, 0.3] with s = 0.2
    _, pc = vr.within(0.8, 0.2, 0.0, 0.3)
    assert pc == pytest.approx(upper_tail(2.5) + upper_tail(4.0), rel=1e-12)


def test_equivalence_with_a_reading_margin():
    # P*(H11|D) ≈ 0.25 read off a figure with ticks 0.25 apart: margin 0.25/20 = 0.0125
    m = vr.reading_margin(tick_spacing=0.25)
    assert m == 0.0125
    ps, pc = vr.equivalent(0.2552, 0.0005, 0.25, m)
    assert vr.verdict([ps], [pc])["verdict"] == "holds"
    # the old ±0.005 (half a unit of the last printed digit) leaves it unresolved at 0.2552 ± 0.0005,
    # and contradicted with more replicates (SE 0.0001): the reason for the reading margin
    assert vr.reading_margin(last_digit=0.01) == 0.005
    assert vr.verdict(*vr.equivalent(0.2552, 0.0001, 0.25, 0.005))["verdict"] == "does not hold"
    # P*(H12|D) ≈ 0.70 at 0.6754 ± 0.00063 is 0.0246 away: contradicted with the same margin
    assert vr.verdict(*vr.equivalent(0.6754, 0.00063, 0.70, m))["verdict"] == "does not hold"
    assert vr.reading_margin(tick_spacing=0.25, last_digit=0.01) == 0.0125


def test_a_tie_is_not_a_contradiction_of_a_small_drop():
    """LCSSF "a small drop" at the ceiling: both proportions 1.0 (drop 0 without error) is inside
    [−margin, 0.1], not a contradiction; a drop of 0.3 is one."""
    assert vr.verdict(*vr.within(0.0, 0.0, -0.05, 0.1))["verdict"] == "holds"
    assert vr.verdict(*vr.within(0.3, 0.02, -0.05, 0.1))["verdict"] == "does not hold"


def test_compare_groups():
    d, se = vr.compare_groups([0.9, 0.8], [0.01, 0.02], [0.5, 0.6, 0.7], [0.03, 0.03, 0.03])
    assert d == pytest.approx(0.85 - 0.6)
    assert se == pytest.approx(math.sqrt((0.01 ** 2 + 0.02 ** 2) / 4 + 3 * 0.03 ** 2 / 9))
    assert all(math.isnan(v) for v in vr.compare_groups([], [], [1.0], [0.1]))


# ----------------------------------------------------------------------------------------------
# Families: Holm, Clopper–Pearson, verdicts
# ----------------------------------------------------------------------------------------------

def holm_by_definition(p, alpha):
    """Holm (1979) as written: order the p-values, reject while p_(i) ≤ α/(n − i + 1)."""
    n = len(p)
    order = sorted(range(n), key=lambda i: p[i])
    rej = [False] * n
    for rank, i in enumerate(order):
        if p[i] <= alpha / (n - rank):
            rej[i] = True
        else:
            break
    return rej


def test_holm_matches_its_definition():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 40))
        p = rng.uniform(0, 0.1, n) ** rng.uniform(0.5, 3)
        rej, adj = vr.holm(p, 0.05)
        assert list(rej) == holm_by_definition(list(p), 0.05)
    # a textbook case: 0.01, 0.04, 0.03, 0.005 → adjusted 0.03, 0.06, 0.06, 0.02
    rej, adj = vr.holm([0.01, 0.04, 0.03, 0.005])
    assert np.allclose(adj, [0.03, 0.06, 0.06, 0.02]) and list(rej) == [True, False, False, True]


def test_clopper_pearson_against_scipy_binomtest():
    for k, n in ((0, 10), (3, 10), (10, 10), (17, 30), (300, 600)):
        lo, hi = vr.clopper_pearson(k, n, 0.05)
        ci_lo = stats.binomtest(k, n, alternative="greater").proportion_ci(0.95, method="exact")
        ci_hi = stats.binomtest(k, n, alternative="less").proportion_ci(0.95, method="exact")
        assert lo == pytest.approx(ci_lo.low, abs=1e-10)
        assert hi == pytest.approx(ci_hi.high, abs=1e-10)
        if 0 < k:  # defining property: P(Bin(n, lo) ≥ k) = α
            assert stats.binom.sf(k - 1, n, lo) == pytest.approx(0.05, rel=1e-6)


def test_verdict_vocabulary():
    sup, unr, con = (1e-6, 1.0), (0.3, 0.5), (1.0, 1e-9)

    def v(*rows, q="all"):
        return vr.verdict([r[0] for r in rows], [r[1] for r in rows], q)

    assert v(sup, sup)["verdict"] == "holds"
    assert v(sup, sup, unr)["verdict"] == "holds within MC error"
    assert v(sup, unr)["verdict"] == "undecided"        # half supported is not a majority
    assert v(unr, unr)["verdict"] == "undecided"
    assert v(sup, con)["verdict"] == "partly"
    assert v(unr, con)["verdict"] == "does not hold"
    assert v()["verdict"] == "not run"
    assert set(vr.VERDICTS) == {"holds", "holds within MC error", "undecided", "partly", "does not hold",
                                "figure comparison", "not run"}
    # majority quantifiers: Clopper–Pearson bounds of the fraction against 1/2
    assert v(*([sup] * 20 + [con] * 3), q="most")["verdict"] == "holds"
    assert v(*([sup] * 5 + [con] * 3), q="most")["verdict"] == "partly"        # 5/8 is not enough
    assert v(*([sup] * 5 + [unr] * 3), q="tend to")["verdict"] == "holds within MC error"
    assert v(*([sup] * 2 + [con] * 18), q="most")["verdict"] == "does not hold"
    assert v(*([sup] * 2 + [con] * 3), q="most")["verdict"] == "undecided"     # leaning against, undecided
    with pytest.raises(ValueError):
        v(sup, q="especially")


# ----------------------------------------------------------------------------------------------
# The labels say what the evidence says (a referee's cases)
# ----------------------------------------------------------------------------------------------

SUP, UNR, CON = (1e-6, 1.0), (0.3, 0.5), (1.0, 1e-9)


def _v(rows, q="all"):
    return vr.verdict([r[0] for r in rows], [r[1] for r in rows], q)


def test_labels_are_frozen_and_documented():
    assert tuple(vr.LABELS) == vr.VERDICTS
    assert all(len(doc) > 40 for doc in vr.LABELS.values())
    with pytest.raises(TypeError):
        vr.LABELS["holds"] = "anything"  # read-only


def test_zero_support_is_never_holds():
    """The referee's case: 6 of 6 unresolved was 'holds within MC error'; with zero supported
    settings no quantifier may say holds."""
    for n in (1, 6, 18, 24):
        for q in ("all", "most", "tend to", "some"):
            res = _v([UNR] * n, q)
            assert res["verdict"] not in vr.SUPPORTIVE, (n, q, res["verdict"])
            assert res["verdict"] == "undecided"
            assert res["label"] == f"undecided ({n} of {n} unresolved)"


def test_minority_support_is_undecided_not_holds():
    # 3 of 8 supported, none contradicted (PB-5.2.2-spread's fig5_cps row): undecided
    assert _v([SUP] * 3 + [UNR] * 5)["verdict"] == "undecided"
    # 5 of 8: a majority, holds within MC error
    assert _v([SUP] * 5 + [UNR] * 3)["verdict"] == "holds within MC error"


def test_contradictions_outnumbering_support_do_not_hold():
    """The referee's case: 99 of 100 contradicted (1 supported) read 'partly'; now 'does not hold'."""
    res = _v([SUP] + [CON] * 99)
    assert res["verdict"] == "does not hold"
    assert res["label"] == "does not hold (99 of 100 contradicted, 1 supported)"
    # 10 of 18 contradicted, 8 supported: does not hold; 8 contradicted, 10 supported: partly
    assert _v([SUP] * 8 + [CON] * 10)["verdict"] == "does not hold"
    assert _v([SUP] * 10 + [CON] * 8)["verdict"] == "partly"


def test_every_partly_prints_k_of_n():
    rng = np.random.default_rng(40)
    seen = 0
    for _ in range(500):
        n = int(rng.integers(1, 60))
        kinds = rng.choice(3, size=n)
        rows = [(SUP, UNR, CON)[k] for k in kinds]
        for q in ("all", "most"):
            res = _v(rows, q)
            c, s = res["counts"]["contradicted"], res["counts"]["supported"]
            if res["verdict"] == "partly":
                seen += 1
                assert res["label"].startswith(f"partly ({c} of {n} contradicted")
                assert 0 < c <= s
            if res["verdict"] in vr.SUPPORTIVE:
                assert s > 0
            if c > s:
                assert res["verdict"] != "partly"
    assert seen > 50


def test_existential_claims():
    """"can … lead to tests that are not powerful": one setting suffices, the choice paid for by
    Holm; contradicted only if every setting is."""
    res = _v([CON] * 9 + [SUP], "can")
    assert res["verdict"] == "holds" and res["counts"]["supported"] == 1
    assert _v([CON] * 10, "some")["verdict"] == "does not hold"
    assert _v([CON] * 9 + [UNR], "some")["verdict"] == "undecided"
    # support must survive Holm across the settings: p = 0.01 among 10 settings is not enough
    assert _v([(0.01, 1.0)] + [UNR] * 9, "can")["verdict"] == "undecided"
    assert _v([(0.004, 1.0)] + [UNR] * 9, "can")["verdict"] == "holds"


def test_within_mc_error_is_not_shown_as_holds():
    """'holds within MC error' is a class of its own (the report gives it its own colour)."""
    assert "holds within MC error" in vr.SUPPORTIVE and "holds within MC error" != "holds"
    assert vr.LABELS["holds within MC error"] != vr.LABELS["holds"]


def test_binomial_tests_are_exact_tails():
    # 250 of 250 covered against 0.945: P(X ≥ 250 | 0.945) = 0.945^250, supported
    ps, pc = vr.binomial_greater(250, 250, 0.945)
    assert ps == pytest.approx(0.945 ** 250, rel=1e-9) and pc == 1.0
    # 0 of 4000 rejections against "rate < 0.075": P(X ≤ 0 | 0.075) = 0.925^4000
    ps, pc = vr.binomial_less(0, 4000, 0.075)
    assert ps == pytest.approx(0.925 ** 4000, rel=1e-6) and pc == 1.0
    # against scipy's binomtest (an independent implementation of the same tail)
    assert vr.binomial_greater(230, 250, 0.945)[0] == pytest.approx(
        stats.binomtest(230, 250, 0.945, alternative="greater").pvalue, rel=1e-9)


def test_at_least_pays_for_the_arg_max():
    """The best of K grid values: Bonferroni over K. K = 51 values all at 0.89 ± 0.01 against 0.9:
    the plug-in best (the largest noisy estimate) sits above 0.9 with high probability, the adjusted
    test does not support it (simulated: 2000 grids, no support expected beyond α)."""
    rng = np.random.default_rng(51)
    plug_in, adjusted = 0, 0
    for _ in range(2000):
        est = 0.9 + 0.01 * rng.standard_normal(51)  # every value on the boundary: the claim is false-ish
        ps, pc = vr.greater(est, 0.01, 0.9)
        plug_in += vr.greater(est.max(), 0.01, 0.9)[0] <= 0.05
        adjusted += vr.at_least(ps, pc, 1)[0] <= 0.05
    assert plug_in / 2000 > 0.5          # the plug-in arg-max "supports" the boundary case most of the time
    assert adjusted / 2000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)
    # m = K is the universal: the largest adjusted support p-value
    ps = np.array([0.001, 0.002, 0.0005])
    assert vr.at_least(ps, np.ones(3), 3)[0] == pytest.approx(0.006)


def test_claim_level_pools_rows():
    res = vr.claim_level([[1e-9, 0.5], [0.5, 0.5, 0.5]])
    assert res["n"] == 5 and res["contradicted"] == 1
    assert res["min_p_contradict_holm"] == pytest.approx(5e-9)
    assert vr.claim_level([])["min_p_contradict_holm"] == 1.0


def test_judge_writes_outcomes():
    rows = [{"p_support": 1e-6, "p_contradict": 1.0}, {"p_support": 1.0, "p_contradict": 1e-9}]
    res = vr.judge(rows)
    assert [r["outcome"] for r in rows] == ["supported", "contradicted"] and res["verdict"] == "partly"
    assert rows[1]["p_contradict_holm"] == pytest.approx(2e-9)


# ----------------------------------------------------------------------------------------------
# Synthetic claims with known truth
# ----------------------------------------------------------------------------------------------

def test_true_claim_with_600_noisy_settings_is_not_partly():
    """θ_i ≥ 0 everywhere (a third exactly at the boundary), estimates θ_i + N(0, s_i²): the claim
    'θ > 0 in every setting' is true (at the boundary: not false). Holm: no contradiction at this
    seed; the old per-setting 1.96-SE rule contradicts some settings of the same data."""
    rng = np.random.default_rng(20261203)
    n = 600
    se = rng.uniform(0.005, 0.05, n)
    theta = np.where(rng.uniform(size=n) < 1 / 3, 0.0, rng.uniform(0, 0.2, n))
    est = theta + se * rng.standard_normal(n)
    res = vr.verdict(*vr.greater(est, se, 0.0))
    assert res["verdict"] in ("holds", "holds within MC error"), res["counts"]
    assert res["counts"]["contradicted"] == 0
    assert np.sum(est + 1.959963984540054 * se < 0) > 0  # the old rule would have said "partly"


def test_false_claims_are_caught():
    rng = np.random.default_rng(7)
    n = 600
    se = np.full(n, 0.01)
    # false in 30 settings by 5 SE, true and well resolved elsewhere: partly
    theta = np.where(np.arange(n) < 30, -0.05, 0.1)
    res = vr.verdict(*vr.greater(theta + se * rng.standard_normal(n), se, 0.0))
    assert res["verdict"] == "partly" and res["counts"]["contradicted"] >= 20
    # false everywhere: does not hold
    res = vr.verdict(*vr.greater(-0.05 + se * rng.standard_normal(n), se, 0.0))
    assert res["verdict"] == "does not hold"
    # an equivalence claim off by twice its margin everywhere: does not hold
    res = vr.verdict(*vr.equivalent(0.30 + 0.002 * rng.standard_normal(50), 0.002, 0.25, 0.0125))
    assert res["verdict"] == "does not hold"
    # "most" when only a third of the settings are true
    theta = np.where(np.arange(n) < 200, 0.1, -0.1)
    res = vr.verdict(*vr.greater(theta + se * rng.standard_normal(n), se, 0.0), quantifier="most")
    assert res["verdict"] == "does not hold"


def family_wise_false_alarms(claims, seed):
    """Fraction of synthetic claims, true at every setting, that the whole rule labels 'partly' or
    'does not hold'. Worst case for the rule: every θ on the boundary of the claim (θ = b for
    'θ > b'; θ at an end of the margin for '≈'), half of the claims with equicorrelated estimates
    (ρ = 0.5, like paired variants sharing their data sets)."""
    rng = np.random.default_rng(seed)
    alarms = 0
    for k in range(claims):
        n = int(rng.integers(30, 601))
        se = rng.uniform(0.001, 0.05, n)
        z = rng.standard_normal(n)
        if k % 2:
            z = math.sqrt(0.5) * z + math.sqrt(0.5) * rng.standard_normal()
        if k % 4 < 2:
            p = vr.greater(0.0 + se * z, se, 0.0)
        else:
            target, margin = 0.5, 0.0125
            theta = target + np.where(rng.uniform(size=n) < 0.5, -margin, margin)
            p = vr.equivalent(theta + se * z, se, target, margin)
        alarms += vr.verdict(*p)["verdict"] in ("partly", "does not hold")
    return alarms / claims


def test_family_wise_false_alarm_rate_is_at_most_alpha():
    """2000 synthetic true claims of 30–600 settings at level 0.05. Measured (seed 28): 0.0395 ±
    0.0044 (SE = sqrt(r(1 − r)/2000)); Holm's bound is 0.05 (below it: half the claims have
    correlated settings, and an equivalence claim sits at one end of its margin per setting). The
    old rule (each setting contradicted when its 95% interval is on the other side, no
    multiplicity control) contradicts 0.74 of the same one-sided claims."""
    claims = 2000
    rate = family_wise_false_alarms(claims, seed=28)
    se = math.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / claims)
    assert rate <= 0.05 + 3 * se, (rate, se)
    # the number the documentation quotes (verdict_rules.MEASURED_FALSE_ALARM, docs/claims.md) is this one
    assert vr.MEASURED_FALSE_ALARM == (round(rate, 4), round(math.sqrt(rate * (1 - rate) / claims), 4))
    assert rate > 0.02, rate  # the simulation is at the boundary: the rule is not vacuous
