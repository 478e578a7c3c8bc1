"""pytest tests of the Python package: the same numbers as the dpmu command (run by ctest
bindings.python_test, which sets DPMU_EXE and DPMU_SOURCE_DIR)."""
import json
import math
import os

import numpy as np
import pandas as pd
import pytest

import dpmu

PREDICTORS = ["female", "write", "math", "science", "socst"]


@pytest.mark.parametrize("prior", ["bic", "zellner-siow", "g-prior", "hyper-g", "robust", "aic"])
def test_non_private_bma_equals_cli(hsb2, hsb2_csv, cli, prior):
    r = dpmu.bma(hsb2, "read", PREDICTORS, prior=prior)
    c = cli("bma", "--non-private", "--data", hsb2_csv, "--response", "read", "--predictors", ",".join(PREDICTORS),
            "--prior", prior)
    assert isinstance(r.pip, pd.Series) and list(r.pip.index) == PREDICTORS
    expected = pd.Series(c["posterior_inclusion_probabilities"])[PREDICTORS]
    np.testing.assert_allclose(r.pip.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(r.posterior_mean.to_numpy(), pd.Series(c["posterior_means"])[PREDICTORS].to_numpy(),
                               rtol=1e-10, atol=1e-12)
    top = c["non_private"]["top_models"]
    np.testing.assert_allclose(r.models["posterior_probability"], [m["posterior_probability"] for m in top],
                               atol=1e-10)
    assert [p for p in PREDICTORS if r.models.iloc[0][p]] == top[0]["predictors"]
    assert r.privacy is None and r.private is False


def test_bma_agrees_with_bas_reference(source_dir):
    with open(os.path.join(source_dir, "tests", "reference", "bma_bas_reference.json")) as f:
        ref = json.load(f)
    priors = {"g-prior": lambda c: dict(prior="g-prior", g=c["alpha"]),
              "hyper-g": lambda c: dict(prior="hyper-g", a=c["alpha"]), "JZS": lambda c: dict(prior="zellner-siow"),
              "ZS-null": lambda c: dict(prior="zellner-siow-laplace"), "BIC": lambda c: dict(prior="bic"),
              "AIC": lambda c: dict(prior="aic")}
    for c in ref["configurations"]:
        d = pd.read_csv(os.path.join(source_dir, "experiments", "data", c["data"]))
        r = dpmu.bma(d, c["response"], c["predictors"], model_prior=c["model_prior"], **priors[c["prior"]](c))
        np.testing.assert_allclose(r.pip.to_numpy(), c["posterior_inclusion_probabilities"], atol=1e-6,
                                   err_msg=c["name"])
        mean = np.asarray(c["posterior_means"])
        assert np.max(np.abs(r.posterior_mean.to_numpy() - mean) / np.maximum(1, np.abs(mean))) < 1e-6, c["name"]


def test_seeded_dp_bma_equals_cli(hsb2, hsb2_csv, cli):
    # bic: the paper's plug-in analysis (the noise-aware default takes zellner-siow or g-prior)
    r = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic", epsilon=5, bounds=[0, 100], seed=11, uncertainty="plug-in")
    c = cli("bma", "--data", hsb2_csv, "--response", "read", "--predictors", ",".join(PREDICTORS), "--prior", "bic",
            "--epsilon", 5, "--bounds", "0,100", "--seed", 11, "--uncertainty", "plug-in")
    g = r.release["released_gram"]
    assert [list(g[i, : i + 1]) for i in range(g.shape[0])] == c["released_gram"]
    np.testing.assert_allclose(r.pip.to_numpy(), pd.Series(c["posterior_inclusion_probabilities"])[PREDICTORS],
                               atol=1e-12)
    assert r.privacy == c["privacy"]
    assert r.private is False and any("seed" in s for s in r.private_reason)
    assert r.release["clamped_entries"] == c["diagnostics"]["clamped_entries"]  # a diagnostic: seeded only


def test_unseeded_dp_bma_is_a_release(hsb2):
    a = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic", epsilon=5, bounds=[0, 100], uncertainty="plug-in")
    b = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic", epsilon=5, bounds=[0, 100], uncertainty="plug-in")
    assert a.private is True and "clamped_entries" not in a.release
    assert a.privacy["epsilon"] == 5
    assert not np.array_equal(a.release["released_gram"], b.release["released_gram"])
    assert np.isnan(a.coef["mean"].iloc[0])  # a release publishes no means
    with pytest.raises(ValueError, match="release publishes no means"):
        a.predict(hsb2)


def test_coef_and_confint_equal_cli(hsb2, hsb2_csv, cli):
    r = dpmu.bma(hsb2, "read", PREDICTORS)
    c = cli("bma", "--non-private", "--data", hsb2_csv, "--response", "read", "--predictors", ",".join(PREDICTORS))
    c = c["non_private"]
    assert list(r.coef.columns[:2]) == ["mean", "sd"] and list(r.coef.index) == ["(Intercept)"] + PREDICTORS
    np.testing.assert_allclose(r.coef["mean"], [c["intercept"]["posterior_mean"]] + [c["posterior_means"][p] for p in PREDICTORS],
                               rtol=1e-10)
    np.testing.assert_allclose(r.coef["sd"], [c["intercept"]["posterior_sd"]] + [c["posterior_sds"][p] for p in PREDICTORS],
                               rtol=1e-10)
    np.testing.assert_allclose(r.coef["sd_bas"],
                               [c["intercept"]["posterior_sd_bas"]] + [c["posterior_sds_bas"][p] for p in PREDICTORS],
                               rtol=1e-10)
    assert r.coef["mean"].iloc[0] == pytest.approx(hsb2["read"].mean(), rel=1e-12)
    ci = r.confint.to_numpy()
    np.testing.assert_allclose(ci[1:], [c["credible_intervals"]["intervals"][p] for p in PREDICTORS], rtol=1e-10)
    np.testing.assert_allclose(ci[0], c["intercept"]["credible_interval"], rtol=1e-10)


def test_predict(hsb2):
    r = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic")
    x = hsb2[PREDICTORS].to_numpy(dtype=float)
    expected = r.coef["mean"].iloc[0] + (x - x.mean(axis=0)) @ r.coef["mean"].iloc[1:].to_numpy()
    np.testing.assert_allclose(r.predict(hsb2), expected, rtol=1e-12)
    np.testing.assert_allclose(r.predict(x), expected, rtol=1e-12)
    # bic: the highest posterior model's prediction is its OLS fit (shrinkage 1)
    hpm = r.highest_posterior_model
    design = np.column_stack([np.ones(len(hsb2)), hsb2[hpm].to_numpy(dtype=float)])
    beta, *_ = np.linalg.lstsq(design, hsb2["read"].to_numpy(dtype=float), rcond=None)
    np.testing.assert_allclose(r.predict(hsb2, "hpm"), design @ beta, rtol=1e-10)
    assert r.predict(hsb2.iloc[:3], "mpm").shape == (3,)
    with pytest.raises(ValueError, match="estimator"):
        r.predict(hsb2, "nope")


def test_default_predictors_are_the_other_columns(hsb2):
    d = hsb2[PREDICTORS + ["read"]]
    assert list(dpmu.bma(d, "read", prior="bic").pip.index) == PREDICTORS


def test_errors_are_value_errors_with_dpmus_message(hsb2):
    with pytest.raises(ValueError, match="nonsense"):
        dpmu.bma(hsb2, "read", PREDICTORS, prior="nonsense")
    with pytest.raises(ValueError, match="bounds"):
        dpmu.bma(hsb2, "read", PREDICTORS, epsilon=1)
    with pytest.raises(ValueError, match="no column 'nope'"):
        dpmu.bma(hsb2, "read", ["nope"])
    d = hsb2.copy()
    d.loc[3, "math"] = np.nan
    with pytest.raises(ValueError, match="missing"):
        dpmu.bma(d, "read", PREDICTORS, na_action="fail")
    with pytest.raises(ValueError, match="na_action"):
        dpmu.bma(d, "read", PREDICTORS, na_action="drop")
    with pytest.raises(ValueError, match="seed"):
        dpmu.bma(hsb2, "read", PREDICTORS, epsilon=1, bounds=[0, 100], seed=-1)


@pytest.mark.parametrize("prior", ["g-prior", "zellner-siow", "hyper-g", "hyper-g-n", "robust", "bic", "aic", "lr"])
def test_non_private_test_equals_cli(hsb2, hsb2_csv, cli, prior):
    r = dpmu.test(hsb2, "math", ["science"], ["read"], prior=prior)
    c = cli("test", "--non-private", "--data", hsb2_csv, "--response", "math", "--common", "science", "--tested",
            "read", "--prior", prior)
    del c["data"]
    assert set(r) == set(c)
    for k, v in c.items():
        if isinstance(v, float):
            assert math.isclose(r[k], v, rel_tol=1e-12, abs_tol=1e-300), k
        else:
            assert r[k] == v, k


@pytest.mark.parametrize("prior", ["zellner-siow", "lr"])
def test_seeded_dp_test_equals_cli(hsb2, hsb2_csv, cli, prior):
    censor = [0, 7] if prior == "lr" else None
    r = dpmu.test(hsb2, "math", ["science"], ["read", "female"], prior=prior, epsilon=1, groups=10, censor=censor,
                  seed=5, simulations=2000)
    args = ["test", "--data", hsb2_csv, "--response", "math", "--common", "science", "--tested", "read,female",
            "--prior", prior, "--epsilon", 1, "--groups", 10, "--seed", 5, "--simulations", 2000]
    if censor:
        args += ["--censor", "0,7"]
    c = cli(*args)
    del c["settings"]["data"]
    assert dict(r) == c
    assert r["private"] is False and "diagnostics" in r


def test_unseeded_dp_test_is_a_release(hsb2):
    r = dpmu.test(hsb2, "math", [], ["female"], prior="zellner-siow", epsilon=1, groups=5)
    assert r["private"] is True and "diagnostics" not in r


@pytest.fixture(scope="module")
def results_file(source_dir, cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("results") / "study.h5"
    exe = os.environ["DPMU_EXE"]
    import subprocess
    subprocess.run([exe, "run", os.path.join(source_dir, "tests", "fixtures", "export_study.yaml"), "--out", str(path),
                    "--quiet"], check=True, capture_output=True)
    return path


def test_read_results_equals_summarize(results_file, cli):
    t = dpmu.read_results(results_file)
    summary = cli("summarize", results_file)
    assert isinstance(t, pd.DataFrame)
    params = [c for c in t.columns[1:] if c in summary[0]["parameters"]]  # in declaration order
    assert sorted(params) == sorted(summary[0]["parameters"])
    assert list(t.columns) == ["cell_key"] + params + ["metric", "component", "component_label", "mean", "sd", "mcse",
                                                       "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan"]
    rows = 0
    for c in summary:
        for name, s in c["metrics"].items():
            metric, k = (name[:name.index("[")], int(name[name.index("[") + 1:-1])) if "[" in name else (name, 0)
            row = t[(t.cell_key == c["cell_key"]) & (t.metric == metric) & (t.component == k)]
            assert len(row) == 1, (c["cell_key"], name)
            row = row.iloc[0]
            for key in ("mean", "sd", "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan"):
                x, y = s[key], row[key]
                assert (x is None and pd.isna(y)) or x == y, (c["cell_key"], name, key, x, y)
            for p, v in c["parameters"].items():
                assert row[p] == v, (p, row[p], v)
            rows += 1
    assert rows == len(t) > 0


def test_read_replicates_equals_the_file(results_file):
    h5py = pytest.importorskip("h5py")
    r = dpmu.read_replicates(results_file, "reject_corrected")
    assert list(r.columns[-5:]) == ["replicate", "metric", "component", "component_label", "value"]
    assert set(r.metric) == {"reject_corrected"}
    with h5py.File(results_file, "r") as f:
        v = f["replicates"]["reject_corrected"][()]
        keys = [k.decode() for k in f["cells/cell_key"][()]]
    for _, row in r.iterrows():
        want = v[keys.index(row["cell_key"]), row["replicate"], row["component"]]
        assert (np.isnan(want) and np.isnan(row["value"])) or want == row["value"]
    assert len(r) == v.shape[0] * v.shape[1] * v.shape[2]
    with pytest.raises(ValueError, match="nope"):
        dpmu.read_replicates(results_file, "nope")
    with pytest.raises(ValueError):
        dpmu.read_results(os.path.join(os.path.dirname(results_file), "missing.h5"))


def _heldout(n=5000, seed=30):
    """Held-out data: 3 predictors in [0, 1], y = 0.5 + 0.4 (x1 - 1/2) + 0.2 (x3 - 1/2) + N(0, 0.1²), clamped."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 3))
    y = np.clip(0.5 + 0.4 * (x[:, 0] - 0.5) + 0.2 * (x[:, 2] - 0.5) + rng.normal(0, 0.1, n), 0, 1)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y})


def test_noise_aware_uncertainty(tmp_path, cli):
    """The noise-aware analysis, the default of a release (docs/bma.md "Uncertainty"): labelled with the sampler's
    diagnostics; at epsilon = 1 its intervals contain the plug-in means and are at least as wide; at epsilon = 1e6
    it equals the non-private analysis within its Monte Carlo error (noise scale 1e-5 against Gram entries of
    ~400); the seeded result equals the CLI's."""
    d = _heldout()
    kw = dict(prior="g-prior", bounds=[0, 1], seed=11)
    plug = dpmu.bma(d, "y", ["x1", "x2", "x3"], epsilon=1, uncertainty="plug-in", **kw)
    aware = dpmu.bma(d, "y", ["x1", "x2", "x3"], epsilon=1, **kw)
    exact = dpmu.bma(d, "y", ["x1", "x2", "x3"], prior="g-prior")
    huge = dpmu.bma(d, "y", ["x1", "x2", "x3"], epsilon=1e6, uncertainty="noise-aware", **kw)
    assert (plug.uncertainty, aware.uncertainty, exact.uncertainty) == ("plug-in", "noise-aware", "exact")
    assert "sampling and privacy noise" in repr(aware) and "not the privacy noise" in repr(plug)
    na = aware.posterior["noise_aware"]
    assert na["converged"] and na["max_rhat"] <= 1.01 and na["min_ess"] >= 400 and na["chains"] == 4
    assert "data-augmentation: 4 chains" in repr(aware)
    assert aware.privacy == plug.privacy
    lo, hi = aware.confint.iloc[1:, 0], aware.confint.iloc[1:, 1]
    plo, phi = plug.confint.iloc[1:, 0], plug.confint.iloc[1:, 1]
    assert ((lo <= plug.coef["mean"].iloc[1:]) & (plug.coef["mean"].iloc[1:] <= hi)).all()
    assert ((hi - lo) >= (phi - plo)).all()
    elo, ehi = exact.confint.iloc[1:, 0], exact.confint.iloc[1:, 1]
    width = ehi - elo
    # up to the sampler's weak proper priors: PIPs within 4 MC SE + 0.01, interval ends of the included
    # predictors within 10 % of the width (the MC error of a 2.5 % quantile is ~5 % of it)
    hn = huge.posterior["noise_aware"]
    assert hn["converged"]
    assert (abs(huge.pip - exact.pip) <= 4 * np.asarray(hn["pip_mc_se"]) + 0.01).all()
    inc = (exact.pip > 0.99).to_numpy()
    assert (abs(huge.confint.iloc[1:, 0] - elo)[inc] <= 0.1 * width[inc]).all()
    assert (abs(huge.confint.iloc[1:, 1] - ehi)[inc] <= 0.1 * width[inc]).all()
    assert (abs(lo - elo) > 1e-4 * width).any()  # and epsilon = 1 is not the non-private answer
    csv = tmp_path / "heldout.csv"
    d.to_csv(csv, index=False)
    c = cli("bma", "--data", csv, "--response", "y", "--predictors", "x1,x2,x3", "--prior", "g-prior", "--bounds",
            "0,1", "--seed", 11, "--epsilon", 1)
    for k, name in enumerate(["x1", "x2", "x3"]):
        assert aware.pip[name] == pytest.approx(c["posterior_inclusion_probabilities"][name], abs=1e-12)
    with pytest.raises(ValueError, match="uncertainty"):
        dpmu.bma(d, "y", ["x1", "x2", "x3"], epsilon=1, uncertainty="bayes", **kw)


def test_noise_aware_pip_of_a_pure_noise_predictor_stays_near_its_prior():
    """300 rows, epsilon = 0.1 and 1: the Laplace scale 10 (p+1)(p+2)/2 / epsilon = 100-1000 swamps Gram entries of
    ~25, so the release says almost nothing and the noise-aware PIP of the pure-noise x2 must stay near its prior
    inclusion probability 1/2 (within 0.25; MC SE < 0.05); the plug-in analysis of the same release puts it at
    >= 0.9 (what the noise-aware analysis fixes, and proof that the check can fail)."""
    d = _heldout(n=300)
    kw = dict(prior="g-prior", bounds=[0, 1], seed=1)
    for eps in (0.1, 1):
        aware = dpmu.bma(d, "y", ["x1", "x2", "x3"], epsilon=eps, **kw)
        plug = dpmu.bma(d, "y", ["x1", "x2", "x3"], epsilon=eps, uncertainty="plug-in", **kw)
        na = aware.posterior["noise_aware"]
        assert na["converged"] and na["pip_mc_se"][1] < 0.05
        assert aware.prior_inclusion["x2"] == 0.5
        assert abs(aware.pip["x2"] - 0.5) <= 0.25
        assert plug.pip["x2"] >= 0.9


def test_repeated_column_names_are_named(hsb2):
    # A DataFrame with two columns called "math": ValueError naming it (was AttributeError).
    d = pd.concat([hsb2[["read", "write", "math"]], hsb2[["math"]]], axis=1)
    with pytest.raises(ValueError, match="2 columns named 'math'"):
        dpmu.bma(d, "read", ["write", "math"])
    with pytest.raises(ValueError, match="2 columns named 'math'"):
        dpmu.bma(d, "read")
    with pytest.raises(ValueError, match="2 columns named 'math'"):
        dpmu.test(d, "read", ["write"], ["math"])


def test_mcmc_bounds_are_checked_and_reported(hsb2):
    r = dpmu.bma(hsb2, "read", PREDICTORS, mcmc=True, seed=1, mcmc_max_iterations=3000, mcmc_max_models=8)
    mc = r.posterior["mcmc"] if isinstance(r.posterior, dict) else r.mcmc
    assert mc["max_iterations"] == 3000 and mc["iterations"] <= 3000
    assert mc["models_visited"] <= 8
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="mcmc_max_iterations must be a whole number"):
            dpmu.bma(hsb2, "read", PREDICTORS, mcmc=True, mcmc_max_iterations=bad)
    with pytest.raises(ValueError, match="mcmc_max_models 1125899906842624"):
        dpmu.bma(hsb2, "read", PREDICTORS, mcmc=True, mcmc_max_models=2**50)


def test_baseline_methods_equal_the_cli(hsb2, hsb2_csv, cli):
    """dpmu.test(method=...) (docs/methods.md Sec. 11) makes the release `dpmu test --method` makes for the same
    data, options and seed; bad options are refused before any release."""
    tot = dpmu.test(hsb2, "math", ["science"], ["read"], epsilon=1, seed=3, method="test-of-tests")
    c = cli("test", "--data", hsb2_csv, "--response", "math", "--common", "science", "--tested", "read", "--method",
            "test-of-tests", "--epsilon", 1, "--seed", 3)
    assert tot["settings"]["method"] == "test-of-tests" and tot["private"] is False
    assert tot["settings"]["num_subsets"] == c["settings"]["num_subsets"]
    assert tot["noisy_count"] == pytest.approx(c["noisy_count"], abs=1e-12)
    assert tot["p_value"] == pytest.approx(c["p_value"], abs=1e-12)
    dpf = dpmu.test(hsb2, "math", ["science"], ["read"], epsilon=5, delta=1e-6, seed=2, method="dp-f", bounds=[0, 100])
    c = cli("test", "--data", hsb2_csv, "--response", "math", "--common", "science", "--tested", "read", "--method",
            "dp-f", "--epsilon", 5, "--delta", "1e-6", "--bounds", "0,100", "--seed", 2)
    assert dpf["f_statistic"] == pytest.approx(c["f_statistic"], rel=1e-12)
    assert dpf["p_value"] == pytest.approx(c["p_value"], abs=1e-12)
    with pytest.raises(ValueError, match="bounds"):
        dpmu.test(hsb2, "math", ["science"], ["read"], epsilon=5, delta=1e-6, seed=1, method="dp-f")
    with pytest.raises(ValueError, match="method"):
        dpmu.test(hsb2, "math", ["science"], ["read"], epsilon=1, seed=1, method="tot")


def test_adassp_equals_the_cli(hsb2, hsb2_csv, cli):
    """dpmu.bma(method="adassp") (docs/methods.md Sec. 11.3) makes the release `dpmu bma --method adassp` makes for
    the same data, options and seed; it is typed (private only without a seed) and refuses what it does not take."""
    fit = dpmu.bma(hsb2, "science", ["read", "write"], epsilon=1, delta=1e-6, bounds=[20, 80], seed=4,
                   method="adassp")
    c = cli("bma", "--data", hsb2_csv, "--response", "science", "--predictors", "read,write", "--method", "adassp",
            "--epsilon", 1, "--delta", "1e-6", "--bounds", "20,80", "--seed", 4)
    assert isinstance(fit, dpmu.AdaSspResult)
    assert list(fit.coef.index) == ["(intercept)", "read", "write"]
    for k, v in c["coefficients"].items():
        assert fit["coefficients"][k] == pytest.approx(v, rel=1e-12)
    assert fit["private"] is False and "diagnostics" in fit
    assert "AdaSSP ridge point estimate" in repr(fit)
    secure = dpmu.bma(hsb2, "science", ["read", "write"], epsilon=1, delta=1e-6, bounds=[20, 80], method="adassp")
    assert secure["private"] is True and "diagnostics" not in secure
    # a large epsilon approaches least squares (independent: numpy's lstsq)
    big = dpmu.bma(hsb2, "science", ["read", "write"], epsilon=1e6, delta=0.5, bounds=[20, 80], seed=1,
                   method="adassp")
    x = np.column_stack([np.ones(len(hsb2)), hsb2["read"], hsb2["write"]])
    ols = np.linalg.lstsq(x, hsb2["science"].to_numpy(float), rcond=None)[0]
    assert np.allclose(big.coef.to_numpy(), ols, rtol=1e-3, atol=0)
    with pytest.raises(ValueError, match="delta"):
        dpmu.bma(hsb2, "science", ["read"], epsilon=1, bounds=[20, 80], seed=1, method="adassp")
    with pytest.raises(ValueError, match="prior do not apply"):
        dpmu.bma(hsb2, "science", ["read"], epsilon=1, delta=1e-6, bounds=[20, 80], seed=1, method="adassp",
                 prior="bic")
    with pytest.raises(ValueError, match="private release"):
        dpmu.bma(hsb2, "science", ["read"], method="adassp")
    with pytest.raises(ValueError, match="method must be"):
        dpmu.bma(hsb2, "science", ["read"], method="ada")


def test_one_na_policy_non_private_rows_omitted_as_in_r(hsb2, hsb2_csv, cli):
    """docs/decisions.md "One NA policy": a non-private call drops the rows with a missing value in the columns
    it uses and warns how many (R's na.omit); the result equals the call on the complete rows. A private call
    refuses them (tests/test_privacy.py)."""
    d = hsb2.copy().astype({"math": float, "read": float})
    d.loc[[3, 50], "math"] = np.nan
    d.loc[7, "read"] = np.nan
    d.loc[9, "socst"] = np.nan  # a column the call does not use: its row stays
    with pytest.warns(UserWarning, match="3 of 200 rows have missing values and were removed"):
        r = dpmu.bma(d, "read", ["write", "math"])
    want = dpmu.bma(hsb2.drop(index=[3, 50, 7]), "read", ["write", "math"])
    assert r.n == 197
    np.testing.assert_allclose(r.pip.to_numpy(), want.pip.to_numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="3 of 200 rows"):
        t = dpmu.test(d, "read", ["write"], ["math"])
    assert t["n"] == 197
