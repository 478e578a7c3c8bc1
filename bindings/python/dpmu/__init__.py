"""dpmu: differentially private methods for model uncertainty in linear regression.

Bayesian model averaging (Pena & Barrientos 2024, Sec. 5) and nested tests (Sec. 3-4), non-private
or differentially private, on dpmu's C++ core: the same numbers as the ``dpmu`` command for the
same data, options and seed. Without a seed a private call draws secure noise and is a real
release (docs/privacy.md); with a seed it is a reproducible simulation and says ``private = False``.
Errors of dpmu (bad input) are raised as ValueError with dpmu's message.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from . import _dpmu

__all__ = ["bma", "test", "read_results", "read_replicates", "BmaResult", "TestResult"]


def _columns(data: pd.DataFrame, names: Sequence[str], what: str) -> np.ndarray:
    missing = [c for c in names if c not in data.columns]
    if missing:
        raise ValueError(f"{what}: no column {', '.join(repr(c) for c in missing)} in the data "
                         f"(columns: {', '.join(map(str, data.columns))})")
    block = data.loc[:, list(names)]
    for c in names:
        if not pd.api.types.is_numeric_dtype(block[c]) and not pd.api.types.is_bool_dtype(block[c]):
            raise ValueError(f"{what}: column {c!r} is not numeric (dtype {block[c].dtype}); "
                             "encode categories as 0/1 columns first (e.g. pandas.get_dummies)")
    # Fortran order: the core reads the columns in place (no copy in the extension).
    return np.asfortranarray(block.to_numpy(dtype=np.float64))


def _seed(seed: Optional[int]) -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0 or seed >= 2**64:
        raise ValueError("seed must be an integer in [0, 2^64) (or None for a real release)")
    return int(seed)


class BmaResult:
    """Result of :func:`bma`.

    ``pip``: Series of posterior inclusion probabilities; ``coef``: DataFrame with columns ``mean``
    and ``sd`` (exact model-averaged posterior SD; ``sd_bas`` is BAS's approximation) and ``pip``,
    one row per predictor after ``(Intercept)`` (whose mean is NaN for a release: it publishes no
    means); ``confint``: DataFrame of the model-averaged credible intervals; ``models``: DataFrame of
    the top models (a boolean column per predictor, then posterior probability, log marginal, R²,
    shrinkage); ``privacy``: dict of the release's guarantee (epsilon, delta, sensitivity, sampler)
    or None when non-private; ``private``: True only for a release with secure noise;
    ``release``: the released Gram matrix and ridge (None when non-private); ``posterior``: every
    summary as NumPy arrays. ``predict(X)`` gives posterior means of the response at new rows.
    """

    def __init__(self, fit, predictors: list[str]):
        self._fit = fit
        self.predictors = predictors
        self.response = fit.response
        self.n = fit.n
        self.messages = list(fit.messages)
        s = fit.posterior()
        self.posterior = s
        self.pip = pd.Series(s["pip"], index=predictors, name="pip")
        self.prior_inclusion = pd.Series(s["prior_inclusion"], index=predictors, name="prior_inclusion")
        index = ["(Intercept)"] + predictors
        intercept = np.nan if s["intercept"] is None else s["intercept"]
        self.coef = pd.DataFrame({"mean": np.r_[intercept, s["mean"]], "sd": np.r_[s["intercept_sd"], s["sd"]],
                                  "sd_bas": np.r_[s["intercept_sd_bas"], s["sd_bas"]], "pip": np.r_[1.0, s["pip"]]},
                                 index=index)
        if s["credible_level"] > 0:
            a = (1 - s["credible_level"]) / 2
            lo = np.nan if s["intercept_lower"] is None else s["intercept_lower"]
            hi = np.nan if s["intercept_upper"] is None else s["intercept_upper"]
            self.confint = pd.DataFrame({f"{100 * a:g} %": np.r_[lo, s["lower"]],
                                         f"{100 * (1 - a):g} %": np.r_[hi, s["upper"]]}, index=index)
        else:
            self.confint = None
        rows = []
        for m in s["models"]:
            row = {p: p in m["predictors"] for p in predictors}
            row.update({k: v for k, v in m.items() if k != "predictors"})
            rows.append(row)
        self.models = pd.DataFrame(rows, columns=predictors + ["posterior_probability", "log_posterior_probability",
                                                               "log_prior_probability", "log_marginal", "r_squared",
                                                               "shrinkage"])
        report = json.loads(fit.privacy())
        self.privacy = report["privacy"]
        self.private = bool(report["private"])
        self.private_reason = list(report["private_reason"])
        self.release = fit.release()
        self.thresholded = fit.thresholded()
        self.highest_posterior_model = list(s["highest_posterior_model"])
        self.median_probability_model = list(s["median_probability_model"])
        self.best_predictive_model = list(s["best_predictive_model"])

    @property
    def posterior_mean(self) -> pd.Series:
        return self.coef["mean"].iloc[1:].rename("mean")

    def predict(self, X, estimator: str = "bma") -> np.ndarray:
        """Posterior mean of the response at the rows of X (a DataFrame with the predictors' columns,
        or an array with them in order): model-averaged (``"bma"``) or of the highest posterior
        (``"hpm"``), median probability (``"mpm"``) or best predictive (``"bpm"``) model.
        Non-private fits only (a release publishes no means of the data)."""
        if isinstance(X, pd.DataFrame):
            x = _columns(X, self.predictors, "predict")
        else:
            x = np.asfortranarray(np.asarray(X, dtype=np.float64))
            if x.ndim == 1:
                x = x.reshape(1, -1, order="F")
        return self._fit.predict(x, estimator)

    def __repr__(self) -> str:
        kind = "non-private" if self.privacy is None else (
            f"DP release (epsilon = {self.privacy['epsilon']:g}, delta = {self.privacy['delta']:g})")
        return (f"<dpmu.BmaResult {kind}, private = {self.private}, n = {self.n}, p = {len(self.predictors)}>\n"
                f"{self.coef.to_string()}")


def bma(data: pd.DataFrame, response: str, predictors: Optional[Sequence[str]] = None, prior: str = "zellner-siow",
        model_prior: str = "beta-binomial(1,1)", epsilon: Optional[float] = None, delta: float = 0.0,
        mechanism: str = "laplace", bounds: Optional[Sequence[float]] = None, seed: Optional[int] = None, *,
        g: Optional[float] = None, a: float = 3.0, top_models: int = 10, mcmc: bool = False, rescale: bool = False,
        always_include: Sequence[str] = (), credible_level: float = 0.95) -> BmaResult:
    """Bayesian model averaging of ``response`` on ``predictors`` (default: every other column).

    ``epsilon=None``: exact (non-private) model averaging, as ``dpmu bma --non-private``. Otherwise
    the SSP release of ``dpmu bma --epsilon`` with public ``bounds`` on the raw values (l, u for every
    column, or l1, u1, ..., l(p+1), u(p+1) with the response last); ``seed`` gives the CLI's
    ``--seed`` noise (not private), no seed secure noise (a release). The model space is over the
    given columns; the intercept is always included. Rows with missing values raise ValueError.
    """
    if not isinstance(data, pd.DataFrame):
        raise ValueError("data must be a pandas.DataFrame")
    if predictors is None:
        predictors = [c for c in data.columns if c != response]
    predictors = [str(p) for p in predictors]
    x = _columns(data, predictors, "dpmu.bma predictors")
    y = _columns(data, [response], "dpmu.bma response")[:, 0]
    fit = _dpmu.bma(x, y, predictors, response, prior, g, a, model_prior, epsilon,
                    None if delta in (None, 0, 0.0) else float(delta), mechanism,
                    [] if bounds is None else [float(b) for b in np.ravel(bounds)], _seed(seed), rescale, top_models,
                    mcmc, list(always_include), credible_level)
    for m in fit.messages:
        warnings.warn(f"dpmu.bma: {m}", stacklevel=2)
    return BmaResult(fit, predictors)


class TestResult(dict):
    """Result of :func:`test`: the fields of the JSON of ``dpmu test`` (a dict), with a readable repr."""

    __test__ = False  # not a pytest test class

    def __repr__(self) -> str:
        s = self.get("settings", self)
        lines = [f"H0: {s['response']} ~ 1" + "".join(f" + {c}" for c in s["common"]),
                 "H1: H0" + "".join(f" + {c}" for c in s["tested"]),
                 f"prior: {s['prior']}, private: {self['private']}",
                 f"log_statistic = {self['log_statistic']:.6g}"]
        if "posterior_probability_h1" in self:
            lines.append(f"P(H1 | data) = {self['posterior_probability_h1']:.6g}")
        return "\n".join(lines)


def test(data: pd.DataFrame, response: str, common: Sequence[str], tested: Sequence[str], prior: str = "g-prior",
         epsilon: Optional[float] = None, delta: float = 0.0, groups: Optional[int] = None,
         censor: Optional[Sequence[float]] = None, censor_probability: Optional[Sequence[float]] = None,
         alpha: Sequence[float] = (0.05, 0.01), seed: Optional[int] = None, simulations: int = 10000, *,
         g: Optional[float] = None, a: float = 3.0, prior_h0: float = 0.5,
         gaussian_calibration: str = "exact") -> TestResult:
    """Test H0: response ~ 1 + common against H1: response ~ 1 + common + tested, as ``dpmu test``.

    ``epsilon=None``: the non-private test (``--non-private``); otherwise the DP test by subsample
    and aggregate with ``groups`` subsets (paper Sec. 4). Returns the JSON fields of ``dpmu test``.
    """
    __tracebackhide__ = True
    if not isinstance(data, pd.DataFrame):
        raise ValueError("data must be a pandas.DataFrame")
    common = [str(c) for c in common]
    tested = [str(c) for c in tested]
    xc = _columns(data, common, "dpmu.test common")
    xt = _columns(data, tested, "dpmu.test tested")
    y = _columns(data, [response], "dpmu.test response")[:, 0]
    out = _dpmu.test(xc, xt, y, common, tested, response, prior, g, a, prior_h0, epsilon, float(delta), groups,
                     list(censor or []), list(censor_probability or []), list(alpha), _seed(seed), simulations,
                     gaussian_calibration)
    return TestResult(json.loads(out))


test.__test__ = False  # not a pytest test function


def _tidy_frame(columns) -> pd.DataFrame:
    """(name, values) pairs from the core's tidy table → DataFrame; missing values become NA."""
    data = {}
    for name, values in columns:
        if isinstance(values, np.ndarray) and values.dtype == np.int64:
            missing = values == _dpmu.missing_integer
            if missing.any():
                values = pd.array(np.where(missing, 0, values), dtype="Int64")
                values[missing] = pd.NA
        elif isinstance(values, list):
            values = pd.array([None if v == _dpmu.missing_string else v for v in values], dtype=object)
        data[name] = values
    return pd.DataFrame(data, copy=False)


def read_results(path) -> pd.DataFrame:
    """Summaries of a results file of ``dpmu run``: one row per cell x metric x component, with
    cell_key, a column per cell parameter, metric, component, component_label, mean, sd, mcse,
    q025, q250, q500, q750, q975, n_ok, n_nan (docs/results-schema.md, "Tidy tables"; the table
    of ``dpmu export``). Raises ValueError for a missing or damaged file."""
    return _tidy_frame(_dpmu.tidy_summaries(os.fspath(path)))


def read_replicates(path, metric: str = "") -> pd.DataFrame:
    """Replicate values of ``metric`` (all metrics when empty): one row per cell x replicate x
    component, with cell_key, the cell parameters, replicate, metric, component, component_label,
    value (NaN for a failed replicate)."""
    return _tidy_frame(_dpmu.tidy_replicates(os.fspath(path), str(metric)))
