"""dpmu.plan_bma(): the same numbers as `dpmu plan-bma` for the same seed, every summary with its
Monte Carlo SE, private False, and argument errors named before any simulation."""

import math

import pytest

import dpmu

DESIGN = dict(coefficients=[0.8, 0, 0, 0.5, 0], sigma=1.0, bounds=[-3, 3] * 5 + [-10, 10])
CLI_DESIGN = ["--coefficients", "0.8,0,0,0.5,0", "--sigma", "1", "--bounds",
              ",".join(str(b) for b in [-3, 3] * 5 + [-10, 10])]


def test_plan_bma_equals_the_cli_for_the_same_seed(cli):
    r = dpmu.plan_bma(500, 2.0, simulations=12, seed=5, **DESIGN)
    d = cli("plan-bma", "--n", 500, "--epsilon", 2, "--simulations", 12, "--seed", 5, *CLI_DESIGN)
    assert r.attrs["private"] is False and r.private is False and d["private"] is False
    assert r.attrs["settings"] == d["settings"] and r.attrs["truth"] == d["truth"]
    assert r.attrs["simulation"] == d["simulation"]
    n = 0
    for analysis in ("plug_in", "noise_aware", "noise_aware_diagnostics"):
        for quantity, s in d[analysis].items():
            rows = r[(r.analysis == analysis) & (r.quantity == quantity)]
            means = s["mean"] if isinstance(s["mean"], list) else [s["mean"]]
            ses = s["mc_se"] if isinstance(s["mc_se"], list) else [s["mc_se"]]
            assert len(rows) == len(means)
            for got, want in zip(list(rows["mean"]) + list(rows["mc_se"]), means + ses):
                assert (want is None and math.isnan(got)) or got == want  # the same bits
            n += len(rows)
    # two analyses (plug-in, noise-aware) of 5 x 5 + 2 + 60 values; the chain's converged, max_rhat, min_ess
    assert n == len(r) and n == 2 * (5 * 5 + 2 + 6 * 10) + 3
    assert list(r[(r.analysis == "plug_in") & (r.quantity == "pip")]["term"]) == [f"beta{j}" for j in range(1, 6)]


def test_plan_bma_built_in_design_and_uncertainty(cli):
    r = dpmu.plan_bma(2000, 1.0, p=3, true_model_size=1, simulations=10, seed=7, uncertainty="plug-in")
    d = cli("plan-bma", "--n", 2000, "--p", 3, "--true-model-size", 1, "--epsilon", 1, "--replicates", 10,
            "--seed", 7, "--uncertainty", "plug-in")
    assert set(r.analysis) == {"plug_in"} and "noise_aware" not in d and "noise_aware_diagnostics" not in d
    assert list(r[(r.analysis == "plug_in") & (r.quantity == "pip")]["mean"]) == d["plug_in"]["pip"]["mean"]
    assert r.attrs["truth"]["true_model"] == [1]


def test_plan_bma_prints_that_it_is_a_simulation():
    text = repr(dpmu.plan_bma(500, 2.0, simulations=10, seed=1, **DESIGN))
    assert "simulation from public settings" in text and "not a release" in text and "mc_se" in text


@pytest.mark.parametrize("kwargs, named", [
    (dict(coefficients=[0.8, 0, 0], p=5), "coefficients: 3 given but p is 5"),
    (dict(coefficients=[0.8, float("nan")]), "coefficients: entry 2"),
    (dict(coefficients=[0.8, float("inf")]), "coefficients: entry 2"),
    (dict(coefficients=[]), "coefficients: empty"),
    (dict(coefficients=["a"]), "coefficients: must be numbers"),
    (dict(coefficients=[0.8], sigma=0), "sigma: value 0 is out of range"),
    (dict(coefficients=[0.8], sigma=-1), "sigma:"),
    (dict(coefficients=[0.8], bounds=[]), "bounds: empty"),
    (dict(coefficients=[0.8], bounds=[1, 2, 3]), "bounds: 3 numbers given"),
    (dict(coefficients=[0.8], bounds=[2, 1]), "bounds for every column: need finite l < u"),
    (dict(coefficients=[0.8], true_model_size=1), "true_model_size: set by coefficients"),
    (dict(coefficients=[0.8], signal_z=7), "signal_z:"),
    (dict(coefficients=[0.8], delta=0.1), "delta: only the wishart mechanism"),
    (dict(coefficients=[0.8], simulations=5), "simulations: must be >= 10"),
    (dict(coefficients=[0.8], mechanism="gaussian"), "mechanism:"),
    (dict(coefficients=[0.8], uncertainty="exact"), "uncertainty:"),
    (dict(coefficients=[0.8], seed=-1), "seed:"),
    (dict(), "p: give the number of predictors"),
])
def test_plan_bma_argument_errors_name_the_argument(kwargs, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        dpmu.plan_bma(500, 1.0, **kwargs)


def test_plan_bma_epsilon_errors():
    with pytest.raises(ValueError, match="epsilon"):
        dpmu.plan_bma(500, 0.0, coefficients=[1.0])
    with pytest.raises(ValueError, match="epsilon: wishart needs epsilon < 1"):
        dpmu.plan_bma(500, 2.0, coefficients=[1.0], mechanism="wishart")
