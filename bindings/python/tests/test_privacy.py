"""Privacy of the Python package's releases (docs/privacy.md, "The Python package"): the design of
a private call is row-local and public (missing values refused, categorical levels declared), a
private result holds nothing computed from the data without noise, releases are charged to a
ledger, and an empirical audit of a real (unseeded) release through the package."""
import json
import math
import os
import time

import numpy as np
import pandas as pd
import pytest

import dpmu

PREDICTORS = ["female", "write", "math"]
PROG = {1: "general", 2: "academic", 3: "vocation"}
PROG_LEVELS = ["general", "academic", "vocation"]


class _NoCore:
    """Stands in for the extension: any call into the core fails the test (the refusal must come
    before any work)."""

    def __getattr__(self, name):
        raise AssertionError(f"the core was called ({name}) although the input should have been refused")


@pytest.fixture
def no_core(monkeypatch):
    monkeypatch.setattr(dpmu, "_dpmu", _NoCore())


@pytest.fixture
def hsb2_prog(hsb2):
    d = hsb2.copy()
    d["prog"] = d["prog"].map(PROG)
    return d


def _design_spy(monkeypatch):
    """Wrap the extension's bma and test so that a test can see the design matrices and names."""
    core = dpmu._dpmu
    seen = []

    class Spy:
        def __getattr__(self, name):
            return getattr(core, name)

        @staticmethod
        def bma(x, y, names, *rest, **kw):
            seen.append({"x": np.array(x), "names": list(names)})
            return core.bma(x, y, names, *rest, **kw)

        @staticmethod
        def test(xc, xt, y, common, tested, *rest, **kw):
            seen.append({"x": np.column_stack([xc, xt]), "names": list(common) + list(tested)})
            return core.test(xc, xt, y, common, tested, *rest, **kw)

    Spy.bma.__doc__ = core.bma.__doc__
    Spy.test.__doc__ = core.test.__doc__
    monkeypatch.setattr(dpmu, "_dpmu", Spy())
    return seen


# --- missing values ------------------------------------------------------------------------------

@pytest.mark.parametrize("column,value", [("math", np.nan), ("math", np.inf), ("read", None), ("write", -np.inf)])
def test_private_calls_refuse_missing_values_before_any_work(hsb2, no_core, column, value):
    d = hsb2.copy()
    d[column] = d[column].astype(float)
    d.loc[7, column] = value
    with pytest.raises(ValueError, match=rf"column '{column}' has 1 missing or non-finite.*public imputation rule"):
        dpmu.bma(d, "read", PREDICTORS, epsilon=1, bounds=[0, 100])
    with pytest.raises(ValueError, match=rf"column '{column}' has 1 missing or non-finite.*never drops rows"):
        dpmu.test(d, "read", ["female"], ["write", "math"], epsilon=1, groups=5)


def test_missing_categorical_value_is_refused(hsb2_prog, no_core):
    d = hsb2_prog.copy()
    d.loc[3, "prog"] = None
    with pytest.raises(ValueError, match="column 'prog' has 1 missing.*'missing' among the declared levels"):
        dpmu.test(d, "read", [], ["prog"], epsilon=1, groups=5, levels={"prog": PROG_LEVELS})


# --- categorical predictors ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["object", "category", "string"])
def test_private_call_refuses_a_categorical_without_declared_levels(hsb2_prog, no_core, dtype):
    d = hsb2_prog.copy()
    d["prog"] = d["prog"].astype(dtype)
    for call in (lambda: dpmu.bma(d, "read", ["math", "prog"], epsilon=1, bounds=[0, 100]),
                 lambda: dpmu.bma(d, "read", ["math", "prog"], epsilon=1, bounds=[0, 100], seed=3),
                 lambda: dpmu.test(d, "read", ["math"], ["prog"], epsilon=1, groups=5)):
        with pytest.raises(ValueError, match=r"declare its levels: levels=\{'prog'") as e:
            call()
        assert "get_dummies" not in str(e.value)
    if dtype == "category":  # a Categorical's own categories are not a declaration
        with pytest.raises(ValueError, match="Categorical's categories do not count"):
            dpmu.bma(d, "read", ["math", "prog"], epsilon=1, bounds=[0, 100])


def test_non_numeric_error_advises_levels_not_get_dummies(hsb2, no_core):
    d = hsb2.copy()
    d["when"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(d["id"], unit="D")
    for kw in ({}, {"epsilon": 1, "bounds": [0, 100]}):
        with pytest.raises(ValueError, match=r"'when' is not numeric.*levels=\{'when'") as e:
            dpmu.bma(d, "read", ["math", "when"], **kw)
        assert "get_dummies" not in str(e.value)


def test_declared_levels_give_the_same_columns_on_neighbouring_frames(hsb2_prog, monkeypatch):
    # D has the rare level "vocation" in one row only; its neighbour D' (that row changed) has none.
    d = hsb2_prog.copy()
    d.loc[d["prog"] == "vocation", "prog"] = "general"
    d.loc[10, "prog"] = "vocation"
    d2 = d.copy()
    d2.loc[10, "prog"] = "general"
    levels = {"prog": PROG_LEVELS + ["other"]}  # "other" occurs in neither: an all-zero column
    expected = ["math", "prog[T.academic]", "prog[T.vocation]", "prog[T.other]"]
    seen = _design_spy(monkeypatch)
    r1 = dpmu.bma(d, "read", ["math", "prog"], epsilon=2, bounds=[0, 100], levels=levels)
    r2 = dpmu.bma(d2, "read", ["math", "prog"], epsilon=2, bounds=[0, 100], levels=levels)
    assert r1.predictors == r2.predictors == expected
    assert list(r1.pip.index) == list(r2.pip.index) == expected
    assert r1.release["released_gram"].shape == r2.release["released_gram"].shape == (5, 5)
    assert r1.levels == r2.levels == levels
    assert seen[0]["names"] == seen[1]["names"] == expected
    x1, x2 = seen[0]["x"], seen[1]["x"]
    assert x1[:, 3].sum() == 0 and x2[:, 2].sum() == 0  # unused levels: all-zero columns
    assert x1[10, 2] == 1 and x2[10, 2] == 0
    assert np.array_equal(np.delete(x1, 10, axis=0), np.delete(x2, 10, axis=0))  # row-local
    t1 = dpmu.test(d, "read", ["math"], ["prog"], epsilon=1, groups=5, levels=levels)
    t2 = dpmu.test(d2, "read", ["math"], ["prog"], epsilon=1, groups=5, levels=levels)
    assert t1["settings"]["tested"] == t2["settings"]["tested"] == expected[1:]
    assert t1["settings"]["p"] == t2["settings"]["p"] == 3
    # Without a declaration (non-private calls only) the columns follow the data: why a release needs one.
    assert dpmu.bma(d, "read", ["math", "prog"]).predictors != dpmu.bma(d2, "read", ["math", "prog"]).predictors


def test_declared_levels_set_the_baseline_and_dummies(hsb2, hsb2_prog):
    # prog is numeric 1/2/3 in hsb2: declared levels make it categorical; the first level is the baseline.
    a = dpmu.bma(hsb2, "read", ["math", "prog"], prior="bic", levels={"prog": [1, 2, 3]})
    b = dpmu.bma(hsb2_prog, "read", ["math", "prog"], prior="bic", levels={"prog": PROG_LEVELS})
    assert a.predictors == ["math", "prog[T.2]", "prog[T.3]"]
    assert b.predictors == ["math", "prog[T.academic]", "prog[T.vocation]"]
    np.testing.assert_allclose(a.pip.to_numpy(), b.pip.to_numpy(), rtol=0, atol=1e-12)
    d = hsb2.assign(p2=(hsb2["prog"] == 2).astype(float), p3=(hsb2["prog"] == 3).astype(float))
    c = dpmu.bma(d, "read", ["math", "p2", "p3"], prior="bic")
    np.testing.assert_allclose(a.posterior_mean.to_numpy(), c.posterior_mean.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(a.predict(hsb2.head(5)), c.predict(d.head(5)), rtol=1e-10)
    # Non-private without levels: the observed levels, sorted (1 is the baseline).
    assert dpmu.bma(hsb2_prog.assign(prog=hsb2["prog"].astype(str)), "read", ["math", "prog"]).predictors == \
        ["math", "prog[T.2]", "prog[T.3]"]


def test_a_value_outside_the_declared_levels_is_refused(hsb2_prog, no_core):
    for kw in ({"epsilon": 1, "bounds": [0, 100]}, {}):
        with pytest.raises(ValueError, match=r"column 'prog' has 50 value\(s\) outside its declared levels"):
            dpmu.bma(hsb2_prog, "read", ["math", "prog"], levels={"prog": ["general", "academic"]}, **kw)
    with pytest.raises(ValueError, match="outside its declared levels") as e:
        dpmu.test(hsb2_prog, "read", [], ["prog"], epsilon=1, groups=5, levels={"prog": ["general", "academic"]})
    # An error message is an output too: it names no value and no row of the data (the undeclared
    # level 'vocation' and a row position were shown before).
    assert "vocation" not in str(e.value) and "row position" not in str(e.value)


def test_levels_argument_is_checked(hsb2_prog, no_core):
    call = lambda lv: dpmu.bma(hsb2_prog, "read", ["math", "prog"], epsilon=1, bounds=[0, 100], levels=lv)
    with pytest.raises(ValueError, match="not in the data"):
        call({"nope": [1, 2]})
    with pytest.raises(ValueError, match="at least 2"):
        call({"prog": ["general"]})
    with pytest.raises(ValueError, match="twice"):
        call({"prog": ["general", "academic", "general"]})
    with pytest.raises(ValueError, match="must be a list"):
        call({"prog": "general"})
    with pytest.raises(ValueError, match="missing value"):
        call({"prog": ["general", None]})


def test_a_categorical_response_is_refused_in_every_mode(hsb2, hsb2_prog, no_core):
    flag = hsb2.assign(flag=hsb2["female"] == 1)
    for kw in ({}, {"epsilon": 1, "bounds": [0, 100]}, {"epsilon": 1, "bounds": [0, 100], "seed": 1}):
        with pytest.raises(ValueError, match="the response 'prog' is categorical"):
            dpmu.bma(hsb2_prog, "prog", ["math"], **kw)
        with pytest.raises(ValueError, match="the response 'prog' is categorical"):
            dpmu.bma(hsb2, "prog", ["math"], levels={"prog": [1, 2, 3]}, **kw)
        with pytest.raises(ValueError, match="the response 'flag' is categorical"):
            dpmu.bma(flag, "flag", ["math"], **kw)
    for kw in ({}, {"epsilon": 1, "groups": 5}, {"epsilon": 1, "groups": 5, "seed": 1}):
        with pytest.raises(ValueError, match="the response 'prog' is categorical"):
            dpmu.test(hsb2_prog, "prog", [], ["math"], **kw)


def test_bool_and_dummy_columns_get_unit_bounds(hsb2, hsb2_prog):
    d = hsb2_prog.assign(girl=hsb2["female"] == 1)
    r = dpmu.bma(d, "read", ["math", "girl", "prog"], epsilon=1, bounds=[0, 100], levels={"prog": PROG_LEVELS},
                 seed=4)
    assert r.predictors == ["math", "girl", "prog[T.academic]", "prog[T.vocation]"]
    # widths 100, 1, 1, 1, 100: L1 sensitivity ((n-1)/n) ((sum w)^2 + sum w^2) / 2 (docs/privacy.md), not
    # the 150000 (n-1)/n of five columns of width 100
    w = np.array([100, 1, 1, 1, 100])
    assert r.privacy["l1_sensitivity"] == pytest.approx(199 / 200 * (w.sum() ** 2 + (w ** 2).sum()) / 2, rel=1e-6)
    per_column = dpmu.bma(d, "read", ["math", "girl", "prog"], epsilon=1, bounds=[0, 100, 0, 1, 0, 1, 0, 100],
                          levels={"prog": PROG_LEVELS}, seed=4)
    np.testing.assert_array_equal(per_column.release["released_gram"], r.release["released_gram"])
    assert per_column.privacy == r.privacy
    with pytest.raises(ValueError, match=r"bounds for 'prog'.*give \(0, 1\)"):
        dpmu.bma(d, "read", ["math", "girl", "prog"], epsilon=1, bounds=[0, 100, 0, 1, 0, 2, 0, 100],
                 levels={"prog": PROG_LEVELS})


# --- what a private result holds ---------------------------------------------------------------

def _collect(obj, numbers, strings, depth=0):
    """Every number and string reachable from obj (dicts, sequences, arrays, pandas objects)."""
    if depth > 20:
        return
    if isinstance(obj, (bool, np.bool_)) or obj is None:
        return
    if isinstance(obj, (int, float, np.integer, np.floating)):
        numbers.append(float(obj))
    elif isinstance(obj, str):
        strings.append(obj)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf":
            numbers.extend(obj.astype(float).ravel().tolist())
        else:
            for v in obj.ravel():
                _collect(v, numbers, strings, depth + 1)
    elif isinstance(obj, (pd.DataFrame, pd.Series)):
        _collect(obj.to_numpy(), numbers, strings, depth + 1)
        _collect(list(obj.index), numbers, strings, depth + 1)
        if isinstance(obj, pd.DataFrame):
            _collect(list(obj.columns), numbers, strings, depth + 1)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _collect(k, numbers, strings, depth + 1)
            _collect(v, numbers, strings, depth + 1)
    elif isinstance(obj, (list, tuple, set)):
        for v in obj:
            _collect(v, numbers, strings, depth + 1)


def _reachable(result):
    numbers, strings = [], []
    if isinstance(result, dpmu.BmaResult):
        state = {k: v for k, v in vars(result).items() if k not in ("_fit", "_design")}
        fit = result._fit
        state["_fit"] = {k: getattr(fit, k) for k in dir(fit) if not k.startswith("_")
                         and not callable(getattr(fit, k))}
        state["_design"] = [(s.name, s.kind, s.levels) for s in result._design.specs]
    else:
        state = {"fields": dict(result), **vars(result)}
    _collect(state, numbers, strings)
    return np.asarray(numbers), strings


def _secret_frame(hsb2):
    """hsb2 with a distinctive fraction added to every value and secret index labels."""
    rng = np.random.default_rng(20261202)
    d = hsb2[["read", "write", "math", "science", "female"]].astype(float)
    d = d + rng.uniform(0.001, 0.999, size=d.shape)
    d["prog"] = hsb2["prog"].map(PROG)
    d.index = [f"secret-row-{i}" for i in range(len(d))]
    return d


def _secrets(d, extra=()):
    num = d.select_dtypes("number")
    values = [num.to_numpy().ravel(), num.mean(), num.sum(), num.std(), num.var(), num.std(ddof=0),
              num.var(ddof=0), num.median(), num.min(), num.max()]
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in values] + [np.asarray(extra, dtype=float)])


def _leaks(numbers, secrets):
    numbers = numbers[np.isfinite(numbers)]
    return [s for s in secrets if np.any(np.abs(numbers - s) <= 1e-12 * max(1.0, abs(s)))]


def test_a_private_bma_result_holds_nothing_computed_from_the_data(hsb2):
    d = _secret_frame(hsb2)
    cols = ["write", "math", "prog"]
    levels = {"prog": PROG_LEVELS}
    exact = dpmu.bma(d, "read", cols, levels=levels)
    secrets = _secrets(d, list(exact.posterior_mean) + list(exact.pip) + [exact.coef["mean"].iloc[0]])
    # The walk finds data-derived values where they are (the non-private result): it can fail.
    numbers, _ = _reachable(exact)
    assert _leaks(numbers, [d["read"].mean()])
    r = dpmu.bma(d, "read", cols, epsilon=1, bounds=[0, 100], levels=levels)
    assert r.private is True and r.n == len(d) == 200
    numbers, strings = _reachable(r)
    assert _leaks(numbers, secrets) == []
    assert not any("secret-row" in s for s in strings)
    assert r.release is not None and "clamped_entries" not in r.release


def test_a_private_test_result_holds_nothing_computed_from_the_data(hsb2):
    d = _secret_frame(hsb2)
    levels = {"prog": PROG_LEVELS}
    exact = dpmu.test(d, "read", ["write"], ["math", "prog"], prior="zellner-siow", levels=levels)
    secrets = _secrets(d, [exact["r_squared"], exact["log_statistic"], exact["log_one_minus_r_squared"],
                           exact["two_log_likelihood_ratio"]])
    numbers, _ = _reachable(exact)
    assert _leaks(numbers, [exact["r_squared"]])  # the walk can fail
    r = dpmu.test(d, "read", ["write"], ["math", "prog"], prior="zellner-siow", epsilon=1, groups=5, levels=levels)
    assert r["private"] is True and r["settings"]["n"] == len(d) and "diagnostics" not in r
    numbers, strings = _reachable(r)
    assert _leaks(numbers, secrets) == []
    assert not any("secret-row" in s for s in strings)
    assert r.levels == levels


# --- the ledger ----------------------------------------------------------------------------------

def _ledger_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f.read().splitlines()]


def _releases(path):
    return [e for e in _ledger_lines(path) if "command" in e]


def test_a_release_is_charged_to_the_ledger_and_the_budget_is_enforced(hsb2, tmp_path):
    path = str(tmp_path / "hsb2.ledger")
    r = dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=0.5, groups=5, ledger=path,
                  budget=1.2, data_label="hsb2")
    assert r["private"] is True and r.ledger is not None
    assert r.ledger["epsilon"] == 0.5 and r.ledger["total_epsilon"] == 0.5 and r.ledger["budget_epsilon"] == 1.2
    # the keyed fingerprint of the data stays in the ledger file, out of the (shareable) result
    assert "data_fingerprint" not in r.ledger and "data_fingerprint" not in r["settings"]["ledger"]
    assert len(line_fp := _releases(path)[0]["data_fingerprint"]) == 64 and line_fp not in repr(vars(r)) + repr(r)
    assert "charged" in repr(r) and "not charged" not in repr(r)
    (line,) = _releases(path)
    assert line["epsilon"] == 0.5 and line["delta"] == 0 and "Python" in line["command"]
    assert line["data_file"] == "hsb2"
    b = dpmu.bma(hsb2, "read", PREDICTORS, epsilon=0.5, bounds=[0, 100], ledger=path)
    assert b.ledger is not None and "charged" in repr(b)
    assert len(_releases(path)) == 2
    before = open(path).read()
    with pytest.raises((ValueError, RuntimeError), match="budget"):
        dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=0.5, groups=5, ledger=path)
    assert open(path).read() == before  # a refused release is not charged
    # not a release: not chargeable
    with pytest.raises(ValueError, match="ledger"):
        dpmu.test(hsb2, "math", [], ["female"], epsilon=0.1, groups=5, seed=1, ledger=path)
    with pytest.raises(ValueError, match="ledger"):
        dpmu.bma(hsb2, "read", PREDICTORS, ledger=path)
    with pytest.raises(ValueError, match="budget needs a ledger"):
        dpmu.bma(hsb2, "read", PREDICTORS, epsilon=0.5, bounds=[0, 100], budget=1)
    assert open(path).read() == before


def test_ledger_accountants_tight_and_rho(hsb2, tmp_path):
    # tight: Gaussian releases are recorded with their mechanism and accounted by Gaussian DP
    path = str(tmp_path / "tight.ledger")
    dpmu.ledger_init(path, (2, 1e-5), accountant="tight")
    for _ in range(5):  # basic composition would refuse the 5th (5 x 0.5 > 2)
        r = dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=0.5, delta=1e-6, groups=5,
                      ledger=path)
    assert r.ledger["accountant"] == "tight" and r.ledger["total_epsilon"] == 2.5
    assert 0.9 < r.ledger["accounted_total"]["epsilon"] < 2
    s = dpmu.ledger_summary(path)
    assert s["accountant"] == "tight" and s["totals"]["basic"]["epsilon"] == 2.5
    assert s["totals"]["tight"]["gaussian"]["releases"] == 5
    assert all(e["mechanism"]["kind"] == "gaussian" for e in _releases(path))
    # a zCDP budget goes with the zcdp accountant; a bad accountant is refused before anything
    rho = str(tmp_path / "rho.ledger")
    dpmu.ledger_init(rho, "rho=0.5")
    assert dpmu.ledger_summary(rho)["accountant"] == "zcdp" and dpmu.ledger_summary(rho)["budget"] == {"rho": 0.5}
    with pytest.raises(ValueError, match="accountant"):
        dpmu.ledger_init(str(tmp_path / "x"), 1, accountant="pld")
    with pytest.raises(ValueError, match="zcdp"):
        dpmu.ledger_init(str(tmp_path / "y"), 1, accountant="zcdp")
    assert not os.path.exists(str(tmp_path / "x")) and not os.path.exists(str(tmp_path / "y"))


def test_the_dpmu_ledger_environment_variable_is_the_default(hsb2, tmp_path, monkeypatch):
    path = str(tmp_path / "env.ledger")
    monkeypatch.setenv("DPMU_LEDGER", path)
    r = dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=0.25, groups=5, budget=(1, 0))
    assert r.ledger is not None and len(_releases(path)) == 1
    before = open(path).read()
    # a seeded or non-private call is not a release: DPMU_LEDGER does not apply to it
    s = dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=0.25, groups=5, seed=3)
    assert s.ledger is None and dpmu.bma(hsb2, "read", PREDICTORS).ledger is None
    assert open(path).read() == before
    monkeypatch.setenv("DPMU_LEDGER", "")
    assert dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=0.25, groups=5).ledger is None
    assert open(path).read() == before


def test_budget_argument_forms(hsb2, no_core):
    for bad in ("", -1, 0, float("inf"), (1, 2), (1, 2, 3), True, "x" * 0):
        with pytest.raises(ValueError, match="budget"):
            dpmu.test(hsb2, "math", [], ["female"], epsilon=1, groups=5, ledger="/nonexistent/l", budget=bad)
    assert dpmu._budget_text(2) == "2.0" and dpmu._budget_text((2, 1e-6)) == "2.0,1e-06"
    assert dpmu._budget_text(" 2,1e-6 ") == "2,1e-6" and dpmu._budget_text(None) is None


# --- warnings from the core -----------------------------------------------------------------------

def test_a_wishart_release_warns_that_its_sampler_is_floating_point(hsb2):
    with pytest.warns(UserWarning, match="(?i)floating"):
        r = dpmu.bma(hsb2, "read", ["write", "math"], epsilon=0.5, delta=1e-6, mechanism="wishart", bounds=[0, 100])
    assert r.private is True
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dpmu.bma(hsb2, "read", ["write", "math"], epsilon=0.5, bounds=[0, 100])
    assert not [x for x in w if "floating" in str(x.message).lower()]


# --- empirical audit of a real release ---------------------------------------------------------------

def test_empirical_audit_of_an_unseeded_private_test():
    """Two neighbouring frames (same n = 20; row 0 changed), N releases each with secure noise (no
    seed), the event {noisy_statistic >= t}, and a Clopper-Pearson lower bound on epsilon.

    With the lr statistic censored to [0, 4] and M = 2 subsets, every subset of D fails (the tested
    column is constant) and contributes the public value 0; in D' the subset holding row 0 (x = 1,
    y = 1000) fits it exactly and its statistic is censored at U = 4. The mean moves by the full
    sensitivity (U - L)/M = 2, so at t = 2 the true ratio P_D'(E) / P_D(E) is e^epsilon: the audit
    has power (a mechanism with half the noise would be refuted), and the bound must stay below
    epsilon.

    False-failure probability: each one-sided Clopper-Pearson limit holds with probability
    >= 1 - 5e-7, so both hold, and the bound log(p_lower / q_upper) <= log(p / q) <= epsilon, with
    probability >= 1 - 1e-6 (union bound) when the release is epsilon-DP.
    """
    beta = pytest.importorskip("scipy.stats").beta
    epsilon, n, n_releases, t = 1.0, 20, 20000, 2.0
    rng = np.random.default_rng(7)
    d = pd.DataFrame({"y": rng.normal(size=n), "x": np.zeros(n)})
    d2 = d.copy()
    d2.loc[0, ["x", "y"]] = [1.0, 1000.0]
    kw = dict(prior="lr", epsilon=epsilon, groups=2, censor=[0, 4], simulations=100, alpha=[0.05])
    start = time.perf_counter()
    hits = []
    for frame in (d2, d):
        count = 0
        for _ in range(n_releases):
            r = dpmu.test(frame, "y", [], ["x"], **kw)
            count += r["noisy_statistic"] >= t
        hits.append(count)
    elapsed = time.perf_counter() - start
    assert r["private"] is True and r["privacy"]["epsilon"] == epsilon and r["privacy"]["l1_sensitivity"] == t
    assert not r["privacy"]["sampler"].startswith("simulation")  # the secure samplers
    a = 5e-7
    p_lower = beta.ppf(a, hits[0], n_releases - hits[0] + 1) if hits[0] > 0 else 0.0
    q_upper = beta.ppf(1 - a, hits[1] + 1, n_releases - hits[1]) if hits[1] < n_releases else 1.0
    bound = math.log(p_lower / q_upper) if p_lower > 0 else 0.0
    print(f"audit: N = {n_releases} per frame, P_D'(E) = {hits[0] / n_releases:.4f}, "
          f"P_D(E) = {hits[1] / n_releases:.4f}, epsilon lower bound = {bound:.3f} (claimed {epsilon}), "
          f"{elapsed:.1f} s")
    assert bound <= epsilon
    # power: the estimate is near epsilon (the neighbours attain the sensitivity)
    assert math.log(hits[0] / max(hits[1], 1)) > 0.8 * epsilon


def test_a_string_where_a_list_of_columns_is_expected_is_refused(hsb2):
    """'read' as predictors used to become the columns 'r', 'e', 'a', 'd'."""
    with pytest.raises(ValueError, match="list of column names"):
        dpmu.bma(hsb2, "math", "read")
    with pytest.raises(ValueError, match="list of column names"):
        dpmu.test(hsb2, "math", [], "read")
    with pytest.raises(ValueError, match="list of column names"):
        dpmu.select(hsb2, "math", "read", epsilon=1, radius=1, penalty=1, data_bound=100)


def test_non_numeric_bounds_are_named(hsb2, no_core):
    # Before: numpy's "could not convert string to float: 'a'" without the argument's name.
    with pytest.raises(ValueError, match="bounds must be numbers"):
        dpmu.bma(hsb2, "read", ["math"], epsilon=1, bounds=("a", "b"))
