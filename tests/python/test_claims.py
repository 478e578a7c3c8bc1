"""plotting/claims.py: the declarations use the one verdict rule, and the fixes of the verdict-rule change stay
fixed (run without results files: the claims that need results are 'not run' with a reason).
Run: /usr/bin/python3 -m pytest tests/python -q."""
import json
import math
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plotting"))
import claims as c  # noqa: E402
import verdict_rules as vr  # noqa: E402

BY_ID = {}
for _cl in c.CLAIMS:
    BY_ID.setdefault(_cl.id, _cl)


def test_statistics_against_independent_values():
    x = np.random.default_rng(1).standard_normal(4000)
    # bootstrap SE of the median of n normal values: sqrt(pi/2)/sqrt(n) asymptotically, within 10%
    _, se = c.bootstrap(x, c.q_stat(0.5))
    assert abs(se / (math.sqrt(math.pi / 2) / math.sqrt(4000)) - 1) < 0.1
    _, se = c.mean_se(x)
    assert se == pytest.approx(x.std(ddof=1) / math.sqrt(4000), rel=1e-12)
    # the SE of a difference of independent estimates
    assert c.diff((1.0, 0.3), (0.2, 0.4)) == pytest.approx((0.8, 0.5))


def test_claim_tests_are_the_rule():
    o = c.sign_outcome(1.0, 0.4, +1)
    assert (o["p_support"], o["p_contradict"]) == vr.greater(1.0, 0.4, 0.0) and o["test"] == "> 0"
    o = c.sign_outcome(1.0, 0.4, -1, 2.0)
    assert (o["p_support"], o["p_contradict"]) == vr.less(1.0, 0.4, 2.0) and o["test"] == "< 2"
    o = c.approx_outcome(0.2552, 0.0005, 0.25, 0.0125)
    assert (o["p_support"], o["p_contradict"]) == vr.equivalent(0.2552, 0.0005, 0.25, 0.0125)
    g = c.Group("x")
    g.add("a", 1.0, 0.1, c.sign_outcome(1.0, 0.1, +1))
    g.add("b", -1.0, 0.1, c.sign_outcome(-1.0, 0.1, +1))
    assert c.verdict(g.settings) == ("partly", 0.5)
    assert [s["outcome"] for s in g.settings] == ["supported", "contradicted"]


def test_especially_is_one_comparison_of_groups():
    g = c.Group("x")
    g.especially("X vs rest", [(0.9, 0.01), (0.95, 0.01)], [(0.5, 0.02), (0.96, 0.02)], +1)
    assert len(g.settings) == 1
    s = g.settings[0]
    assert s["estimate"] == pytest.approx(0.925 - 0.73)
    assert s["se"] == pytest.approx(math.sqrt(2 * 0.01 ** 2 / 4 + 2 * 0.02 ** 2 / 4), rel=1e-5)
    # a universal over the pairs would fail (0.95 < 0.96); the comparison of groups holds
    assert c.verdict(g.settings)[0] == "holds"


def test_declarations():
    ids = [cl.id for cl in c.CLAIMS]
    for cl in c.CLAIMS:
        assert cl.words and cl.test and cl.quantity, cl.id
        assert cl.quantifier in vr.QUANTIFIERS, cl.id
        assert cl.files or cl.not_run or cl.self_contained, cl.id
    # the claims a review found missing
    for need in ("PB-5.2.2-nonprivate-pip-one", "PB-B-H11-similar", "PB-5.2.1-fig4-consistent",
                 "PB-4.2-interval-coverage", "PB-5.1-support-coverage", "PB-4.4-sensitivity-tradeoff",
                 "PB-5.3-threshold-sparsity", "LCSSF-5-very-successful", "LCSSF-5-structure"):
        assert need in ids, need
    # the type-I claim quotes §4.3, not §1.1 ("adequately calibrated"), is one-sided (≤ 3α/2) and its
    # degeneracy is a claim of its own
    t1 = BY_ID["PB-4.3-type1"]
    assert t1.section == "§4.3" and "adequate type I error rates" in t1.words
    assert "adequately calibrated" not in t1.words and "at most 3α/2" in t1.test
    assert "OWN-4.3-type1-degenerate" in ids and BY_ID["OWN-4.3-type1-degenerate"].setting == "own"
    # every claim has a setting of the four
    assert all(cl.setting in c.SETTINGS for cl in c.CLAIMS)
    # "≈" claims carry their reading margins
    for i in ("PB-4.4-fig1-M10-H11", "PB-4.4-fig1-M10-H12", "PB-5.2.2-close", "PB-B-fig7-power", "LCSSF-5-R-large"):
        assert BY_ID[i].margin, i
    assert c.PROBABILITY_AXIS_MARGIN == 0.0125
    # "tend to" is a majority
    assert BY_ID["PB-5.2.1-threshold-null"].quantifier == "tend to"


def test_type1_level_is_one_sided_and_structural_zeros_are_exact():
    """the plain corrected test's rate is exactly 0 where c_α = U (rejection impossible);
    the two-sided band [α/2, 3α/2] with a binomial SE contradicted it at α = 0.05 and left it
    unresolved at α = 0.01 for the same structural zero. Now: one-sided ≤ 3α/2; the structural zero
    is exact and supported; an inflated rate (0.09 at α = 0.05, 4000 releases) is contradicted."""
    zero = c.type1_level_test(0, 4000, 0.05, True)
    assert (zero["p_support"], zero["p_contradict"]) == (0.0, 1.0)
    zero01 = c.type1_level_test(0, 4000, 0.01, True)
    good = c.type1_level_test(204, 4000, 0.05, False)
    bad = c.type1_level_test(360, 4000, 0.05, False)
    settings = [dict(zero), dict(zero01), dict(good), dict(bad)]
    res = vr.judge(settings)
    assert [s["outcome"] for s in settings] == ["supported", "supported", "supported", "contradicted"]
    assert res["verdict"] == "partly"
    # the old two-sided encoding contradicted the structural zero (the bug)
    se0 = c.binomial_se(0.05, 4000)
    old = c.approx_outcome(0.0, se0, 0.05, 0.5 * 0.05)
    assert vr.judge([dict(old)])["verdict"] == "does not hold"


def test_u10_best_has_a_margin_and_a_tie_is_no_contradiction():
    # Figure 7: power 0.994 at U = 10 against 0.997 at U = 7 (±0.001) is 'best' within the margin
    d, se = c.diff((0.994, 0.001), (0.997, 0.001))
    assert c.verdict([c.interval_outcome(d, se, -c.POWER_MARGIN, math.inf)])[0] == "holds"
    # LCSSF 'a small drop' at the ceiling: 1.0 vs 1.0 without error
    assert c.verdict([c.interval_outcome(0.0, 0.0, -c.LEI_MARGIN, 0.1)])[0] == "holds"


def test_evaluate_without_results(tmp_path):
    """No results files: every claim is 'not run' with the reason and the config that would produce it;
    no 'not applicable'; the claims.json written by main() keeps report.py's fields."""
    assert c.main([str(tmp_path)]) == 0
    d = json.load(open(tmp_path / "claims.json"))
    assert d["alpha"] == vr.ALPHA and d["rule"] == "plotting/verdict_rules.py"
    entries = d["claims"]
    assert {e["id"] for e in entries} == {cl.id for cl in c.CLAIMS}
    for e in entries:
        if BY_ID[e["id"]].self_contained:  # its own seeded simulation, no results file
            assert e["verdict"] != "not run", e["id"]
            continue
        assert e["verdict"] == "not run" and e["reason"], e["id"]
        assert "bash scripts/reproduce.sh" in e["command"], e["id"]
        for key in ("id", "figure", "claim", "test", "variant", "fraction", "files", "settings", "counts",
                    "replicates", "margin"):
            assert key in e, (e["id"], key)
        if e["id"] == "PB-B-H11-similar":
            assert "configs/fig7_hsb_lr_censoring.yaml" in e["reason"]
        else:
            assert "configs/" in e["reason"], e
    assert "not applicable" not in open(tmp_path / "claims.md").read()


def test_rejudging_stored_evidence_is_a_fixed_point(tmp_path):
    """Re-judging docs/claims.json's stored evidence (no results files) gives every group back with its own
    quantifier and verdict: a group's quantifier set by a check or a retest ('can', 'most') is kept (it
    was lost before: PB-4.4-sensitivity-tradeoff's existential power group, re-judged from its own output,
    read as universal and turned red), and a group the earlier run found no setting for stays, 'not run' with
    its reason (it was dropped before, and the headline's row count with it)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    stored = json.load(open(os.path.join(root, "docs", "claims.json")))
    stored["source"] = "docs/claims.json"
    again = c.evaluate(str(tmp_path), evidence=stored)
    ids = {e["id"] for e in stored["claims"] if e.get("evidence_from")}
    want = {(e["id"], e["variant"]): (e["quantifier"], e["verdict"], e["counts"]) for e in stored["claims"]
            if e["id"] in ids}
    got = {(e["id"], e["variant"]): (e["quantifier"], e["verdict"], e["counts"]) for e in again if e["id"] in ids}
    assert want, "docs/claims.json holds re-judged evidence"
    assert got == want
    assert any(q == "can" for q, _, _ in got.values())


def test_docs_quote_the_rule_as_generated():
    """docs/claims.md carries the rule, the quantifiers, the margins and the measured false-alarm
    rate exactly as the code generates them (regenerate docs/claims.md when this fails)."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    assert c.rule_markdown() in open(os.path.join(root, "docs", "claims.md")).read()


def test_central_range_of_a_histogram():
    # uniform density on [0, 4]: the central 98% is 0.98 × 4
    edges = np.linspace(0.0, 4.0, 41)
    assert c.central_range(np.full(40, 0.25), edges) == pytest.approx(0.98 * 4)
    # a normal density on fine bins: 2 × 2.326 sd (the 1% and 99% quantiles), within the binning error
    edges = np.linspace(-6, 6, 1201)
    mid = 0.5 * (edges[1:] + edges[:-1])
    dens = np.exp(-mid ** 2 / 2) / math.sqrt(2 * math.pi)
    assert c.central_range(dens, edges) == pytest.approx(2 * 2.3263478740408408, abs=0.01)
    # one row per run: a [R, K] array gives R widths
    assert c.central_range(np.vstack([np.full(40, 0.25)] * 3), np.linspace(0.0, 4.0, 41)).shape == (3,)


def test_every_check_takes_the_studies():
    """A helper defined between a @claim decorator and its check would be registered instead of the
    check: every registered check takes exactly one argument (the studies found)."""
    import inspect
    for cl in c.CLAIMS:
        assert len(inspect.signature(cl.check).parameters) == 1, (cl.id, cl.check.__name__)


def test_histogram_sd():
    # two equal bins [0, 1), [1, 2): mass at 0.5 and 1.5, sd 0.5; a uniform on [0, 4] in 400 bins: 4/sqrt(12)
    assert c.histogram_sd(np.array([0.5, 0.5]), np.array([0.0, 1.0, 2.0])) == pytest.approx(0.5)
    edges = np.linspace(0, 4, 401)
    assert c.histogram_sd(np.full(400, 0.25), edges) == pytest.approx(4 / math.sqrt(12), rel=1e-4)
    assert np.isnan(c.histogram_sd(np.zeros(3), np.arange(4.0)))


class _FakeResults:
    """The parts of dpmu_h5.Results the coverage claim reads, for a hand-made HSB study."""

    def __init__(self, cells, covers, labels):
        self.cells = {k: np.asarray(v, dtype=object if isinstance(v[0], str) else float) for k, v in cells.items()}
        self.n_cells = len(next(iter(cells.values())))
        self.summary = {"noise_interval_covers": {}, "censored_average": {}}
        self.component_labels = {"noise_interval_covers": np.array([labels] * self.n_cells, dtype=object)}
        self._covers = covers

    def values(self, name):
        return sorted(set(self.cells[name].tolist()))


class _FakeStudy:
    def __init__(self, res):
        self.res, self.path = res, "fake.h5"

    def replicates(self, metric):
        assert metric == "noise_interval_covers"
        return self.res._covers


def test_interval_coverage_claim_on_known_rates():
    """PB-4.2-interval-coverage on a hand-made study with known coverage: 10 000 releases per cell, α = 0.05
    (bound 0.945) and 0.01 (bound 0.985), binomial SE at 1 − α. Exact coverage 1 − α is supported (0.005 is
    2.3 SE at α = 0.05, 5 SE at α = 0.01); 0.93 at α = 0.05 is contradicted (6.9 SE below the bound); a
    NaN replicate is left out of the count."""
    r = 10000

    def indicator(rate):
        x = np.zeros(r)
        x[: int(round(rate * r))] = 1.0
        return x

    covers = np.empty((2, r, 2))
    covers[0, :, 0], covers[0, :, 1] = indicator(0.95), indicator(0.99)
    covers[1, :, 0], covers[1, :, 1] = indicator(0.93), indicator(0.99)
    covers[1, 0, 1] = np.nan
    res = _FakeResults({"num_subsets": [2.0, 5.0], "epsilon": [1.0, 1.0]}, covers, ["alpha=0.05", "alpha=0.01"])
    groups = BY_ID["PB-4.2-interval-coverage"].check({"fig1_hsb_posterior": _FakeStudy(res)})
    assert len(groups) == 1
    rows = {s["setting"]: s for s in groups[0].settings}
    assert set(rows) == {"num_subsets=2; 1 − α = 0.95", "num_subsets=2; 1 − α = 0.99",
                         "num_subsets=5; 1 − α = 0.95", "num_subsets=5; 1 − α = 0.99"}
    first = rows["num_subsets=2; 1 − α = 0.95"]
    assert first["estimate"] == pytest.approx(0.95) and first["se"] == pytest.approx(math.sqrt(0.95 * 0.05 / r))
    # one-sided (the interval [0.945, 1] could never support a coverage of 1)
    assert first["test"] == "≥ 0.945 (exact binomial, one-sided)"
    assert rows["num_subsets=2; 1 − α = 0.99"]["test"] == "≥ 0.985 (exact binomial, one-sided)"
    assert rows["num_subsets=5; 1 − α = 0.99"]["runs"] == r - 1
    assert rows["num_subsets=5; 1 − α = 0.99"]["estimate"] == pytest.approx((0.99 * r - 1) / (r - 1))
    verdict = vr.judge(groups[0].settings)["verdict"]
    outcome = {k: s["outcome"] for k, s in rows.items()}
    assert outcome == {"num_subsets=2; 1 − α = 0.95": "supported", "num_subsets=2; 1 − α = 0.99": "supported",
                       "num_subsets=5; 1 − α = 0.95": "contradicted", "num_subsets=5; 1 − α = 0.99": "supported"}
    assert verdict == "partly"
    # full coverage (every release covered) is supported; under the interval test it was unresolved
    assert vr.judge([dict(c.coverage_test(250, 250, 0.945))])["verdict"] == "holds"
    assert vr.judge([dict(c.interval_outcome(1.0, c.binomial_se(0.95, 250), 0.945, 1.0))])["verdict"] == "undecided"
    # a results file written before the metric: no settings, and the note names the config to re-run
    res.summary = {}
    old = BY_ID["PB-4.2-interval-coverage"].check({"fig1_hsb_posterior": _FakeStudy(res)})
    assert old[0].settings == [] and "configs/fig1_hsb_posterior.yaml" in old[0].note


def test_find_studies_prefers_the_file_named_after_its_config(tmp_path, monkeypatch):
    """A backup STEM.before-cov.h5 beside STEM.h5 (same config, same replicates) sorts first; the file
    named after the config must win (it was the backup before this rule), more replicates still win."""
    class Fake:
        def __init__(self, path):
            self.path = path
            name = os.path.basename(path)
            self.stem = name.split(".")[0]
            self.res = type("R", (), {"replicates": 20 if "more" in name else 10})()

    monkeypatch.setattr(c, "Study", Fake)
    for name in ("fig1_hsb_posterior.before-cov.h5", "fig1_hsb_posterior.h5", "fig2_hsb_likelihood_ratio.h5",
                 "fig2_hsb_likelihood_ratio.zz.h5", "fig6_hsb_censoring.h5", "fig6_hsb_censoring.more.h5"):
        (tmp_path / name).write_bytes(b"")
    found = c.find_studies(str(tmp_path))
    assert os.path.basename(found["fig1_hsb_posterior"].path) == "fig1_hsb_posterior.h5"
    assert os.path.basename(found["fig2_hsb_likelihood_ratio"].path) == "fig2_hsb_likelihood_ratio.h5"
    assert os.path.basename(found["fig6_hsb_censoring"].path) == "fig6_hsb_censoring.more.h5"


def test_unwritable_output_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """claims.py computed for seconds and then failed on an unwritable --json. The
    outputs are checked first: evaluate is never called, exit 2, the message names the option."""
    called = []
    monkeypatch.setattr(c, "evaluate", lambda *a, **k: called.append(1) or [])
    (tmp_path / "res").mkdir()
    assert c.main([str(tmp_path / "res"), "--json", str(tmp_path / "no-such-dir" / "c.json")]) == 2
    assert "--json" in capsys.readouterr().err and not called
    assert c.main([str(tmp_path / "res"), "--markdown", str(tmp_path)]) == 2  # a folder, not a file
    assert "--markdown" in capsys.readouterr().err and not called
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        assert c.main([str(tmp_path / "res"), "--json", str(ro / "c.json")]) == 2 and not called
    assert c.main([str(tmp_path / "res"), "--evidence", str(tmp_path / "missing.json")]) == 2 and not called


def test_symlink_loops_are_not_followed(tmp_path):
    """a results folder holding a link to itself was walked 40 levels deep. Each real
    folder is entered once; a symlinked folder elsewhere is still followed."""
    res = tmp_path / "res"
    (res / "a").mkdir(parents=True)
    (res / "a" / "x.h5").write_bytes(b"")
    os.symlink(res, res / "a" / "loop")
    other = tmp_path / "other"
    other.mkdir()
    (other / "y.h5").write_bytes(b"")
    os.symlink(other, res / "linked")
    found = c.h5_files(str(res))
    assert sorted(os.path.basename(f) for f in found) == ["x.h5", "y.h5"]
    assert all("/loop/" not in os.path.relpath(f, str(res)) and not os.path.relpath(f, str(res)).startswith("a/loop") for f in found)


def test_settings_of_the_rows():
    """the setting of a group from its label; own claims stay own."""
    cl = BY_ID["PB-4.4-fig2-corrected-above"]
    assert c.setting_of(cl, c.Group("Gaussian calibration: exact"))[0] == "paper"
    assert c.setting_of(cl, c.Group("Gaussian calibration: paper_literal"))[0] == "variant"
    lei = BY_ID["LCSSF-5-eps"]
    assert c.setting_of(lei, c.Group("calibration lcssf_delta = rpR_2"))[0] == "paper"
    assert c.setting_of(lei, c.Group("calibration lcssf_delta = r2_1pR2"))[0] == "reconstruction"
    assert c.setting_of(lei, c.Group("calibration lcssf_delta = 1pR_2"))[0] == "variant"
    cps = BY_ID["PB-5.2.2-close"]
    assert c.setting_of(cps, c.Group("fig5_cps"))[0] == "reconstruction"
    assert c.setting_of(cps, c.Group("fig5_cps_centred_age"))[0] == "paper"
    assert c.setting_of(cps, c.Group("fig5_cps_public_bounds: x"))[0] == "variant"
    assert c.setting_of(BY_ID["OWN-calibration-plug-in"], c.Group("plug-in"))[0] == "own"
    # a group pooling both calibrations is split
    g = c.Group("fig7_hsb_lr_censoring")
    for cal in ("exact", "paper_literal"):
        g.add(f"num_subsets=2, gaussian_calibration={cal}; M 2→5", 1.0, 0.1, c.sign_outcome(1.0, 0.1, +1))
    parts = c.split_calibrations(g)
    assert [p.label for p in parts] == ["fig7_hsb_lr_censoring — calibration exact",
                                        "fig7_hsb_lr_censoring — calibration paper_literal"]


def test_grid_best_pays_for_the_selection():
    """LCSSF 'the best φ reaches 0.9': 51 φ each at 450 of 500 correct (0.9 exactly) is not support
    (the plug-in best, a max of noisy proportions, would be); 495 of 500 at one φ is."""
    class St:
        def __init__(self, means):
            self.res = type("R", (), {"summary": {"prob_true_model": {"mean": [np.asarray(means)],
                                                                      "n_ok": [np.full(len(means), 500.0)]}}})()
    flat = St(np.full(51, 0.9))
    t = c.lei_grid_test([(flat, 0)], 0.9)
    assert t["p_support"] > 0.05
    peak = St(np.r_[np.full(50, 0.5), 0.99])
    assert c.lei_grid_test([(peak, 0)], 0.9)["p_support"] < 0.05
    # "a fifth of the grid": 11 of 51 φ needed; 10 clearly above is not enough, 11 is
    ten = St(np.r_[np.full(41, 0.3), np.full(10, 1.0)])
    eleven = St(np.r_[np.full(40, 0.3), np.full(11, 1.0)])
    assert c.lei_grid_test([(ten, 0)], 0.9, 0.2)["p_support"] > 0.05
    assert c.lei_grid_test([(eleven, 0)], 0.9, 0.2)["p_support"] < 0.05


def test_splitting_example_closed_form():
    """docs/methods.md §4.3's closed form E[2 log Λ] = m[ψ((m − p0)/2) − ψ((m − p − p0)/2)] against
    −m E[log B], B ~ Beta((m − p − p0)/2, p/2), by numerical integration (scipy), and the HSB values
    the docs quote (1.0178, 1.0362, 1.0957, 1.2110 for M = 1, 2, 5, 10)."""
    from scipy import stats
    for m, p, p0 in ((200, 1, 2), (20, 1, 2), (100, 3, 1)):
        want = -m * stats.beta((m - p - p0) / 2, p / 2).expect(np.log)
        assert c.expected_lr_statistic(m, p, p0) == pytest.approx(want, rel=1e-8)
    got = [round(c.expected_lr_statistic(200 // k, 1, 2), 4) for k in (1, 2, 5, 10)]
    assert got == [1.0178, 1.0362, 1.0957, 1.2110]


def test_split_simulation_is_the_likelihood_ratio():
    """The simulation behind PB-4.3-splitting-example: with one subset and a few data sets, its
    statistic equals n log(RSS0/RSS1) from numpy's lstsq on the same draws (replayed seed)."""
    sims = c.simulated_split_lr(40, 1, 2, (1,), 3, seed=5, chunk=3)
    rng = np.random.default_rng(5)
    x = np.concatenate([np.ones((3, 40, 1)), rng.standard_normal((3, 40, 2))], axis=2)
    y = x[:, :, :2] @ rng.standard_normal((3, 2, 1)) + rng.standard_normal((3, 40, 1))
    for r in range(3):
        rss = [np.linalg.lstsq(x[r][:, :k], y[r], rcond=None)[1][0] for k in (2, 3)]
        assert sims[1][r] == pytest.approx(40 * np.log(rss[0] / rss[1]), rel=1e-9)
