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
    r = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic", epsilon=5, bounds=[0, 100], seed=11)
    c = cli("bma", "--data", hsb2_csv, "--response", "read", "--predictors", ",".join(PREDICTORS), "--prior", "bic",
            "--epsilon", 5, "--bounds", "0,100", "--seed", 11)
    assert r.report["released_gram"] == c["released_gram"]
    np.testing.assert_allclose(r.pip.to_numpy(), pd.Series(c["posterior_inclusion_probabilities"])[PREDICTORS],
                               atol=1e-12)
    assert r.privacy == c["privacy"]
    assert r.private is False and any("seed" in s for s in r.private_reason)
    assert "diagnostics" in r.report


def test_unseeded_dp_bma_is_a_release(hsb2):
    a = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic", epsilon=5, bounds=[0, 100])
    b = dpmu.bma(hsb2, "read", PREDICTORS, prior="bic", epsilon=5, bounds=[0, 100])
    assert a.private is True and "diagnostics" not in a.report
    assert a.privacy["epsilon"] == 5
    assert a.report["released_gram"] != b.report["released_gram"]


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
        dpmu.bma(d, "read", PREDICTORS)
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
