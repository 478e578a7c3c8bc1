"""dpmu: differentially private methods for model uncertainty in linear regression.

Bayesian model averaging (Pena & Barrientos 2024, Sec. 5) and nested tests (Sec. 3-4), non-private
or differentially private, on dpmu's C++ core: the same numbers as the ``dpmu`` command for the
same data, options and seed. Without a seed a private call draws secure noise and is a real
release (docs/privacy.md, "The Python package"); with a seed it is a reproducible simulation and
says ``private = False``. Errors of dpmu (bad input) are raised as ValueError with dpmu's message.

The design of a private call is public by construction: every design row depends only on the
same data row and on public settings, and the design's columns (names, number) only on public
settings. Numeric columns are used as they are, bool columns as 0/1, and a categorical column
(object, string or category dtype, or any column named in ``levels``) becomes one 0/1 column per
*declared* level after the first, named ``column[T.level]`` (the patsy/statsmodels spelling).
Missing values are refused, never dropped (n is public).
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import subprocess
import warnings
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _dpmu

__all__ = ["bma", "test", "read_results", "read_replicates", "BmaResult", "AdaSspResult", "TestResult", "select", "plan_test",
           "plan_bma", "PlanBmaResult", "audit", "ledger_init", "ledger_set_budget", "ledger_summary"]

Levels = Optional[Mapping[str, Sequence[Any]]]
Budget = Optional[Union[str, float, int, Sequence[float]]]


# ---------------------------------------------------------------------------------------------
# The design: row-local and, for a private call, a function of public settings only.
# ---------------------------------------------------------------------------------------------

def _dummy_name(column: str, level) -> str:
    return f"{column}[T.{level}]"


def _is_categorical_dtype(s: pd.Series) -> bool:
    return isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(s.dtype) or \
        pd.api.types.is_string_dtype(s.dtype)


def _check_levels_argument(levels: Levels, data: pd.DataFrame, what: str) -> dict:
    if levels is None:
        return {}
    if not isinstance(levels, Mapping):
        raise ValueError(f"{what}: levels must be a dict {{column: [every level, baseline first]}}, "
                         f"e.g. levels={{'prog': [1, 2, 3]}}; got {type(levels).__name__}")
    out = {}
    for column, declared in levels.items():
        column = str(column)
        if column not in data.columns:
            raise ValueError(f"{what}: levels declares column {column!r}, which is not in the data "
                             f"(columns: {', '.join(map(str, data.columns))})")
        if isinstance(declared, (str, bytes)) or not isinstance(declared, Sequence) and \
                not isinstance(declared, (np.ndarray, pd.Index)):
            raise ValueError(f"{what}: levels[{column!r}] must be a list of every level of {column!r} "
                             f"(baseline first), e.g. levels={{{column!r}: [1, 2, 3]}}")
        declared = list(declared)
        if len(declared) < 2:
            raise ValueError(f"{what}: levels[{column!r}] declares {len(declared)} level(s); a categorical "
                             "predictor needs at least 2 (the first is the baseline)")
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in declared):
            raise ValueError(f"{what}: levels[{column!r}] contains a missing value (None/NaN); declare a "
                             "real level (e.g. 'missing') and replace missing values by it before the call")
        index = pd.Index(declared, dtype=object)
        if not index.is_unique:
            raise ValueError(f"{what}: levels[{column!r}] names a level twice: {declared!r}")
        out[column] = declared
    return out


class _Column:
    """How one data column becomes design columns: kind "numeric" (as is), "bool" (0/1) or
    "categorical" (one 0/1 column per level after the first)."""

    def __init__(self, name: str, kind: str, levels: Optional[list] = None, declared: bool = False):
        self.name, self.kind, self.levels, self.declared = name, kind, levels, declared

    @property
    def design_names(self) -> list[str]:
        if self.kind == "categorical":
            return [_dummy_name(self.name, v) for v in self.levels[1:]]
        return [self.name]

    @property
    def unit_interval(self) -> bool:
        """True when every design value lies in [0, 1] by construction (bool and dummy columns)."""
        return self.kind != "numeric"


def _missing_message(what: str, column: str, count: int, categorical: bool) -> str:
    example = (f"data[{column!r}].fillna('missing') with 'missing' among the declared levels" if categorical
               else f"data[{column!r}].fillna(c) for a constant c fixed before seeing the data (e.g. the "
                    "midpoint of its public bounds)")
    return (f"{what}: column {column!r} has {count} missing or non-finite value(s) (NaN, None, NA or inf). "
            "dpmu never drops rows (n is public): replace them before the call by a public imputation rule "
            f"that looks at the row only, e.g. {example}")


def _plan_column(data: pd.DataFrame, c: str, what: str, levels: dict, private: bool, response: bool) -> _Column:
    s = data[c]
    if isinstance(s, pd.DataFrame):
        raise ValueError(f"{what}: the data has more than one column named {c!r}")
    categorical_dtype = _is_categorical_dtype(s)
    if response:
        if c in levels or categorical_dtype or pd.api.types.is_bool_dtype(s.dtype):
            raise ValueError(f"{what}: the response {c!r} is categorical (dtype {s.dtype}"
                             f"{', declared in levels' if c in levels else ''}); dpmu fits linear regression "
                             "of a numeric response: give a numeric column (a 0/1 response must be numeric, "
                             f"e.g. data[{c!r}].astype(float), and is then a linear probability model)")
    if c in levels:
        return _Column(c, "categorical", levels[c], declared=True)
    if pd.api.types.is_bool_dtype(s.dtype):
        return _Column(c, "bool")
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_complex_dtype(s.dtype):
        return _Column(c, "numeric")
    if categorical_dtype:
        if private:
            hint = ("; a pandas Categorical's categories do not count as a declaration (they are usually "
                    "derived from the data)" if isinstance(s.dtype, pd.CategoricalDtype) else "")
            raise ValueError(
                f"{what}: column {c!r} is categorical (dtype {s.dtype}); a private call needs its levels declared "
                f"publicly, all of them, baseline first: declare its levels: levels={{{c!r}: [...every level...]}} "
                f"(e.g. levels={{'prog': [1, 2, 3]}}){hint}. Levels taken from the data would make the "
                "predictor set depend on which categories occur")
        # Non-private only: the observed levels (category dtype: its order; otherwise sorted).
        observed = pd.unique(s.dropna())
        if isinstance(s.dtype, pd.CategoricalDtype):
            present = set(observed)
            found = [v for v in s.dtype.categories if v in present]
        else:
            found = list(observed)
            try:
                found = sorted(found)
            except TypeError:
                pass  # mixed types: order of first appearance
        if len(found) < 2:
            raise ValueError(f"{what}: column {c!r} is categorical with {len(found)} level(s) in the data; "
                             f"declare all its levels: levels={{{c!r}: [...every level, baseline first...]}}")
        return _Column(c, "categorical", found, declared=False)
    raise ValueError(f"{what}: column {c!r} is not numeric (dtype {s.dtype}); give numbers, or declare it "
                     f"categorical with all its levels: levels={{{c!r}: [...every level, baseline first...]}}")


def _encode(data: pd.DataFrame, spec: _Column, what: str) -> list[np.ndarray]:
    """The design columns of one data column (float64), after the missing-value and domain checks."""
    s = data[spec.name]
    if spec.kind == "numeric":
        v = s.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(v)
        if bad.any():
            raise ValueError(_missing_message(what, spec.name, int(bad.sum()), False))
        return [v]
    missing = s.isna().to_numpy()
    if missing.any():
        raise ValueError(_missing_message(what, spec.name, int(missing.sum()), spec.kind == "categorical"))
    if spec.kind == "bool":
        return [s.to_numpy(dtype=np.float64)]
    values = s.astype(object).to_numpy() if isinstance(s.dtype, pd.CategoricalDtype) else s.to_numpy(dtype=object)
    code = pd.Index(spec.levels, dtype=object).get_indexer(values)
    outside = np.flatnonzero(code < 0)
    if outside.size:
        # No value and no row of the data in the message: an error message is an output too.
        raise ValueError(
            f"{what}: column {spec.name!r} has {outside.size} value(s) outside its "
            f"{'declared' if spec.declared else 'known'} levels {spec.levels!r}; the levels must list every "
            "possible value (a value outside them is outside the data's domain). Find them with "
            f"data.loc[~data[{spec.name!r}].isin({spec.levels!r})]")
    return [(code == k).astype(np.float64) for k in range(1, len(spec.levels))]


class _Design:
    """The design of one call: the data columns' encodings in order, and the matrix."""

    def __init__(self, specs: list[_Column]):
        self.specs = specs

    @property
    def names(self) -> list[str]:
        return [n for s in self.specs for n in s.design_names]

    def matrix(self, data: pd.DataFrame, what: str) -> np.ndarray:
        missing = [s.name for s in self.specs if s.name not in data.columns]
        if missing:
            raise ValueError(f"{what}: no column {', '.join(repr(c) for c in missing)} in the data "
                             f"(columns: {', '.join(map(str, data.columns))})")
        cols = [v for s in self.specs for v in _encode(data, s, what)]
        # Fortran order: the core reads the columns in place (no copy in the extension).
        out = np.empty((len(data), len(cols)), dtype=np.float64, order="F")
        for j, v in enumerate(cols):
            out[:, j] = v
        return out

    def expand(self, names: Sequence[str]) -> list[str]:
        """Data column names -> design column names (a categorical column -> all its dummies)."""
        by_name = {s.name: s for s in self.specs}
        out = []
        for n in names:
            out += by_name[n].design_names if n in by_name else [n]
        return out


def _design(data: pd.DataFrame, names: Sequence[str], what: str, levels: dict, private: bool,
            response: bool = False) -> _Design:
    missing = [c for c in names if c not in data.columns]
    if missing:
        raise ValueError(f"{what}: no column {', '.join(repr(c) for c in missing)} in the data "
                         f"(columns: {', '.join(map(str, data.columns))})")
    for c in names:
        count = int((data.columns == c).sum())
        if count > 1:
            raise ValueError(f"{what}: the data have {count} columns named {c!r}; give each column its own name "
                             f"(e.g. data.columns = [...]) so that {c!r} means one column")
    return _Design([_plan_column(data, c, what, levels, private, response) for c in names])


def _names(names, argument: str, what: str) -> list:
    """A list of column names; a single string is refused (it would be read as one-letter names)."""
    if isinstance(names, (str, bytes)):
        raise ValueError(f"{what}: {argument} must be a list of column names, e.g. [{names!r}], not a string")
    try:
        return [str(c) for c in names]
    except TypeError:
        raise ValueError(f"{what}: {argument} must be a list of column names; got {type(names).__name__}") from None


def _omit_missing(data: pd.DataFrame, columns, private: bool, na_action: str, what: str) -> pd.DataFrame:
    """The NA policy of every front end (docs/decisions.md "One NA policy"): a private call never drops
    rows (n is public; the designs refuse missing values, naming the column); a non-private call
    with ``na_action="omit"`` (the default, as R's na.omit) drops the rows with a missing value
    (NaN, None, NA) in any of ``columns`` and warns how many, with ``"fail"`` refuses them."""
    if na_action not in ("omit", "fail"):
        raise ValueError(f"{what}: na_action must be 'omit' or 'fail', not {na_action!r}")
    if private or not isinstance(data, pd.DataFrame):
        return data
    present = [c for c in columns if c in data.columns]
    if not present:
        return data
    complete = ~data[present].isna().any(axis=1)
    dropped = int((~complete).sum())
    if dropped == 0 or na_action == "fail":
        return data  # "fail": the designs refuse the missing values, naming the column
    if dropped == len(data):
        raise ValueError(f"{what}: every row has a missing value in {', '.join(map(repr, present))}")
    warnings.warn(f"{what}: {dropped} of {len(data)} rows have missing values and were removed (na_action='omit')",
                  UserWarning, stacklevel=3)
    return data.loc[complete]


def _response_and_predictors(data, response, predictors, levels, private: bool, what: str):
    """The checked designs of one call (bma, select): (predictors, response, xdesign, ydesign, x, y)
    with x the n x p design (Fortran order) and y the response; private calls follow the rules of
    :func:`bma` (declared levels, no missing values). Raises ValueError naming the input."""
    _check_frame(data, what)
    declared = _check_levels_argument(levels, data, what)
    predictors = _names(predictors, "predictors", what)
    response = str(response)
    ydesign = _design(data, [response], f"{what} response", declared, private, response=True)
    xdesign = _design(data, predictors, f"{what} predictors", declared, private)
    x = xdesign.matrix(data, f"{what} predictors")
    y = ydesign.matrix(data, f"{what} response")[:, 0]
    return predictors, response, xdesign, ydesign, x, y


def _count(value, argument: str, what: str) -> Optional[int]:
    """None, or a whole number >= 1 (an int, not a bool) below 2^63."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value < 2**63:
        raise ValueError(f"{what}: {argument} must be a whole number >= 1 (or None for the default); got {value!r}")
    return int(value)


def _check_frame(data, what: str) -> None:
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"{what}: data must be a pandas.DataFrame")


def _seed(seed: Optional[int]) -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0 or seed >= 2**64:
        raise ValueError("seed must be an integer in [0, 2^64) (or None for a real release)")
    return int(seed)


# ---------------------------------------------------------------------------------------------
# The privacy-budget ledger
# ---------------------------------------------------------------------------------------------

def _budget_text(budget: Budget) -> Optional[str]:
    """None, "EPS", EPS, (EPS,) or (EPS, DELTA) -> "EPS" / "EPS,DELTA" (checked again by the core)."""
    if budget is None:
        return None
    if isinstance(budget, str):
        text = budget.strip()
        if not text:
            raise ValueError("budget: give EPS or EPS,DELTA (e.g. budget=2 or budget=(2, 1e-6)), not ''")
        return text
    values = [budget] if isinstance(budget, (int, float, np.integer, np.floating)) else budget
    try:
        values = list(values)
    except TypeError:
        raise ValueError(f"budget: give EPS or (EPS, DELTA), e.g. budget=2 or budget=(2, 1e-6); "
                         f"got {type(budget).__name__}") from None
    if not 1 <= len(values) <= 2 or any(isinstance(v, bool) or not isinstance(v, (int, float, np.integer,
                                                                                    np.floating)) for v in values):
        raise ValueError(f"budget: give EPS or (EPS, DELTA) as numbers, e.g. budget=(2, 1e-6); got {budget!r}")
    values = [float(v) for v in values]
    if not all(math.isfinite(v) for v in values) or values[0] <= 0 or (len(values) == 2 and not 0 <= values[1] < 1):
        raise ValueError(f"budget: epsilon must be finite and > 0 and delta in [0, 1); got {budget!r}")
    return ",".join(repr(v) for v in values)


def _ledger_arguments(ledger, budget: Budget, data_label: Optional[str], release: bool, n: int,
                      columns: Sequence[str]) -> dict:
    """The extension's ledger keywords (only those that are set). A ledger=None call uses the
    DPMU_LEDGER environment variable when set and non-empty, for releases only (a seeded or
    non-private call is not a release and is not charged)."""
    if ledger is None and release:
        ledger = os.environ.get("DPMU_LEDGER") or None
    if ledger is not None:
        ledger = os.path.abspath(os.fspath(ledger)) if os.fspath(ledger) else ""
        if not ledger:
            raise ValueError("ledger: give the path of the ledger file (or None)")
    text = _budget_text(budget)
    if text is not None and ledger is None:
        raise ValueError("budget needs a ledger: give ledger='FILE' (or set DPMU_LEDGER) as well")
    out = {}
    if ledger is not None:
        out["ledger"] = ledger
        out["data_label"] = str(data_label) if data_label is not None else \
            f"pandas.DataFrame ({n} rows; columns {', '.join(map(str, columns))})"
    if text is not None:
        out["budget"] = text
    return out


def _call(function, args: tuple, ledger_kwargs: dict):
    if ledger_kwargs and "ledger" not in (function.__doc__ or ""):
        # TODO(lead): remove once every _dpmu build has the ledger parameters (bindings/python/src/module.cpp).
        raise ValueError("ledger/budget: this build of dpmu's extension module does not support a ledger yet; "
                         "rebuild dpmu (the release was not made)")
    return function(*args, **ledger_kwargs)


def _warn_messages(where: str, messages) -> None:
    """The core's messages for the user ("warning: ..." / "note: ...") as Python warnings."""
    for m in messages or ():
        warnings.warn(f"{where}: {m}", UserWarning, stacklevel=3)


def _ledger_entry(value) -> Optional[dict]:
    """The core's ledger charge without its data fingerprint: the fingerprint (an HMAC of the
    analysed bytes under the ledger's key) is a deterministic function of the data, so it stays in
    the ledger file and is not kept in a result that may be shared."""
    if value is None:
        return None
    if isinstance(value, str):
        value = json.loads(value)
    return {k: v for k, v in dict(value).items() if k != "data_fingerprint"}


def _ledger_repr(ledger: Optional[dict]) -> str:
    if not ledger:
        return "not charged to a ledger"
    eps = ledger.get("epsilon")
    where = ledger.get("path", "?")
    return f"charged to the ledger {where}" + (f" (epsilon {eps:g})" if isinstance(eps, (int, float)) else "")


def _bounds(bounds, x: _Design, y: _Design, what: str) -> list[float]:
    """Public bounds per design column. bool and dummy columns lie in [0, 1] by construction: with one
    pair for every column they get (0, 1); a pair per data column must give (0, 1) for them."""
    if bounds is None:
        return []
    try:
        flat = [float(b) for b in np.ravel(np.asarray(bounds, dtype=object))]
    except (TypeError, ValueError):
        raise ValueError(f"{what}: bounds must be numbers: a pair l, u (every numeric column) or one pair per "
                         f"column, e.g. bounds=[0, 100]; got {bounds!r}") from None
    specs = x.specs + y.specs
    if not any(s.unit_interval for s in specs):
        return flat  # as given; the core checks the count
    design = [s for s in specs for _ in s.design_names]
    if len(flat) == 2:
        return [v for s in design for v in ((0.0, 1.0) if s.unit_interval else flat)]
    if len(flat) == 2 * len(specs) and len(specs) != len(design):
        out = []
        for k, s in enumerate(specs):
            pair = flat[2 * k:2 * k + 2]
            if s.unit_interval:
                if pair != [0.0, 1.0]:
                    raise ValueError(f"{what}: bounds for {s.name!r}: a {s.kind} column is encoded as 0/1 "
                                     f"column(s): give (0, 1) for it (got {pair})")
                out += [0.0, 1.0] * len(s.design_names)
            else:
                out += pair
        return out
    if len(flat) == 2 * len(design):
        return flat
    raise ValueError(f"{what}: bounds: give one pair l, u for every numeric column (bool and dummy columns get "
                     f"(0, 1)), a pair per data column ({len(specs)} pairs: predictors in order, response last), "
                     f"or a pair per design column ({len(design)} pairs: {', '.join(x.names + y.names)}); "
                     f"{len(flat)} numbers given")


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
    summary as NumPy arrays; ``ledger``: None when the release was not charged to a ledger, else the
    charge (path, epsilon, delta, totals, budget; not the data's fingerprint, which stays in the
    ledger file); ``levels``: the levels used for each categorical column
    (the declared ones for a release); ``predictors``: the design's columns (a categorical column
    ``c`` becomes ``c[T.level]`` for each level after the first). ``predict(X)`` gives posterior
    means of the response at new rows (non-private fits only).

    A release (``private``) holds only public settings (n = the number of rows, the names, the
    declared levels, the bounds, the guarantee) and the released values and their post-processing;
    nothing computed from the data without noise.
    """

    def __init__(self, fit, design: _Design, response: str):
        self._fit = fit
        self._design = design
        predictors = design.names
        self.predictors = predictors
        self.levels = {s.name: list(s.levels) for s in design.specs if s.kind == "categorical"}
        self.response = fit.response
        self.n = fit.n
        self.messages = list(fit.messages)
        s = fit.posterior()
        self.posterior = s
        #: which uncertainty the SDs and intervals carry: "exact" (non-private), "plug-in" (sampling
        #: only, not the privacy noise) or "noise-aware" (sampling and privacy noise)
        self.uncertainty = s["uncertainty"]
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
        ledger = getattr(fit, "ledger", None)
        if callable(ledger):
            ledger = ledger()
        if ledger is None:
            ledger = report.get("ledger")
        self.ledger = _ledger_entry(ledger)
        self.release = fit.release()
        self.thresholded = fit.thresholded()
        self.highest_posterior_model = list(s["highest_posterior_model"])
        self.median_probability_model = list(s["median_probability_model"])
        self.best_predictive_model = list(s["best_predictive_model"])

    @property
    def posterior_mean(self) -> pd.Series:
        return self.coef["mean"].iloc[1:].rename("mean")

    def predict(self, X, estimator: str = "bma") -> np.ndarray:
        """Posterior mean of the response at the rows of X (a DataFrame with the data columns of the
        fit, encoded as in the fit, or an array with the design columns in order): model-averaged
        (``"bma"``) or of the highest posterior (``"hpm"``), median probability (``"mpm"``) or best
        predictive (``"bpm"``) model. Non-private fits only (a release publishes no means of the data)."""
        if isinstance(X, pd.DataFrame):
            x = self._design.matrix(X, "predict")
        else:
            x = np.asfortranarray(np.asarray(X, dtype=np.float64))
            if x.ndim == 1:
                x = x.reshape(1, -1, order="F")
        return self._fit.predict(x, estimator)

    def __repr__(self) -> str:
        kind = "non-private" if self.privacy is None else (
            f"DP release (epsilon = {self.privacy['epsilon']:g}, delta = {self.privacy['delta']:g})")
        charged = f", {_ledger_repr(self.ledger)}" if self.privacy is not None else ""
        carries = {"exact": "sampling (non-private data)", "plug-in": "sampling only, not the privacy noise",
                   "noise-aware": "sampling and privacy noise"}.get(self.uncertainty, self.uncertainty)
        chain = ""
        na = self.posterior.get("noise_aware")
        if na:
            chain = (f"\n{na['sampler']}: {na['chains']} chains x {na['draws_per_chain']} draws, max R-hat "
                     f"{na['max_rhat']:.3f}, min ESS {na['min_ess']:.0f}" +
                     ("" if na["converged"] else f"; NOT CONVERGED ({na['not_converged_because']}): no intervals"))
        return (f"<dpmu.BmaResult {kind}, private = {self.private}{charged}, n = {self.n}, "
                f"p = {len(self.predictors)}>\nuncertainty: {self.uncertainty} (SDs and intervals carry {carries})"
                f"{chain}\n{self.coef.to_string()}")


def bma(data: pd.DataFrame, response: str, predictors: Optional[Sequence[str]] = None, prior: str = "zellner-siow",
        model_prior: str = "beta-binomial(1,1)", epsilon: Optional[float] = None, delta: float = 0.0,
        mechanism: str = "laplace", bounds: Optional[Sequence[float]] = None, seed: Optional[int] = None, *,
        levels: Levels = None, ledger: Optional[Union[str, os.PathLike]] = None, budget: Budget = None,
        data_label: Optional[str] = None, g: Optional[float] = None, a: float = 3.0, top_models: int = 10,
        mcmc: bool = False, rescale: bool = False, always_include: Sequence[str] = (),
        credible_level: float = 0.95, mcmc_max_iterations: Optional[int] = None,
        mcmc_max_models: Optional[int] = None, uncertainty: Optional[str] = None,
        noise_aware_draws: int = 1000, na_action: str = "omit", method: str = "ssp") -> Union[BmaResult, "AdaSspResult"]:
    """Bayesian model averaging of ``response`` on ``predictors`` (default: every other column).

    ``method="adassp"`` returns instead the AdaSSP baseline (Wang 2018, Algorithm 2; docs/methods.md
    §11.3), as ``dpmu bma --method adassp``: a private ridge-regression point estimate of the full
    model, for comparison — no inclusion probabilities, model probabilities or intervals. It needs
    ``epsilon``, ``delta`` in (0, 1) and ``bounds`` (the design standardised by them: each value
    clamped, centred at the bounds' midpoint and divided by their half-width, plus an intercept
    column), takes no model-averaging option (a non-default one raises ValueError), and returns an
    :class:`AdaSspResult` (``coef``: the coefficients in the data's units, ``(intercept)`` first).

    ``data``: a pandas DataFrame, one row per observation (n rows; n is public); ``response`` and
    ``predictors``: column names. Returns a :class:`BmaResult` (``pip``: Series over the design's
    columns; ``coef``: DataFrame with ``(Intercept)`` first; ``models``: DataFrame of the top models).
    Raises ValueError with dpmu's message for bad input (a missing or non-numeric column, missing
    values, bounds of the wrong length, an unknown prior, a release the ledger's budget refuses);
    nothing is released or charged then.

    ``epsilon=None``: exact (non-private) model averaging, as ``dpmu bma --non-private``. Otherwise
    the SSP release of ``dpmu bma --epsilon`` ((epsilon, delta)-DP when one row is replaced; the
    guarantee is ``result.privacy``) with public ``bounds`` on the raw values, into which values are
    clamped: one pair (l, u) for every numeric column, a pair per data column (predictors in order,
    response last) or a pair per design column; bool and dummy columns lie in [0, 1] and get (0, 1).
    The bounds must be chosen without looking at the data. ``seed`` gives the CLI's ``--seed`` noise
    (reproducible, not private: ``result.private`` is False); no seed: secure noise (a release). The
    model space is over the design's columns; the intercept is always included.

    ``levels``: ``{column: [every level, baseline first]}``, the public declaration of the levels of
    each categorical predictor (object, string, category or any column named here); the design gets
    a 0/1 column ``column[T.level]`` per level after the first, including levels that do not occur
    (all-zero columns), so the design's columns depend only on the declaration. A private call
    refuses a categorical predictor without declared levels (a pandas Categorical's categories do
    not count: they usually come from the data) and a value outside its declared levels; a
    non-private call without ``levels`` uses the levels that occur (sorted; a Categorical's order).
    bool columns are 0/1. A categorical response is refused. Missing values: a private call raises
    ValueError naming the column (rows are never dropped: n is public; replace them by a public rule
    first); a non-private call drops the rows with a missing value in the columns used and warns
    how many (``na_action="omit"``, as R's ``na.omit``), or raises with ``na_action="fail"``.
    Infinite values raise ValueError.
    Do not call ``pandas.get_dummies`` yourself before a private call: its columns are the levels
    that occur in the data, so the predictor set (which is printed) would depend on the data and
    break the guarantee; declare ``levels`` instead.

    ``ledger``: a privacy-budget ledger file (default: the ``DPMU_LEDGER`` environment variable,
    when set and non-empty, for releases); the release is checked against the ledger's budget before
    any work, charged as soon as its noise is drawn (before anything computed from the noise exists;
    docs/privacy.md "Charge first, then speak"), and refused (ValueError) when it would exceed it (a
    release that fails before its noise is drawn spends nothing; one interrupted after it stays
    charged, and stderr says "charged, not delivered"). ``budget``:
    ``EPS``, ``"EPS,DELTA"`` or ``(EPS, DELTA)``, a limit for this ledger (docs/privacy.md).
    ``data_label``: the data's name in the ledger (default: "pandas.DataFrame (n rows; columns ...)").
    A seeded or non-private call with an explicit ledger is an error (it is not a release).
    ``result.ledger`` is the charge (None when not charged).

    ``uncertainty`` (a release only): ``"noise-aware"`` (the default for a release) is the posterior
    given the release, the confidential Gram matrix a latent variable of a data-augmentation sampler
    (docs/methods.md §5.12; sampling and privacy noise; post-processing, no extra budget): 4 chains,
    ``noise_aware_draws`` warm-up sweeps and saved draws per chain, extended until R-hat <= 1.01 and
    ESS >= 400 (at most 16x); ``result.posterior["noise_aware"]`` has the diagnostics and Monte Carlo
    SEs, and a chain that has not converged says so (a warning, ``converged`` False) and reports no
    intervals. It needs ``prior`` "zellner-siow" or "g-prior", no ``always_include``, no ``mcmc``
    and n > p + 2. ``"plug-in"`` is the paper's analysis: the released matrix analysed as if it were
    the data's (its SDs and intervals carry the sampling uncertainty only, not the privacy noise).
    ``result.uncertainty`` says which one the result carries.

    ``mcmc_max_iterations``, ``mcmc_max_models``: bounds of the MCMC search (``--mcmc-max-iterations``,
    ``--mcmc-max-models`` of ``dpmu bma``; None: 10^5 p iterations, at most 4*10^6, and 2^20 stored
    models of at most 256 bytes each; docs/bma.md "Cost of the model search"). The search checks for
    signals about every 0.1 s: Ctrl-C raises KeyboardInterrupt within a second; the release was
    charged when its noise was drawn, so an interrupted release stays charged (not delivered).

    The core's messages ("warning: ...", "note: ...") are raised as Python warnings (UserWarning),
    e.g. that the Wishart sampler is floating point and not hardened against floating-point attacks
    (Mironov 2012): prefer ``mechanism="laplace"`` for a real release.
    """
    what = "dpmu.bma"
    release = epsilon is not None
    if method not in ("ssp", "adassp"):
        raise ValueError(f"{what}: method must be 'ssp' (SSP model averaging, the default) or 'adassp' (the AdaSSP "
                         f"baseline: a private ridge point estimate, no model uncertainty), not {method!r}")
    if method == "adassp":
        defaults = dict(prior="zellner-siow", model_prior="beta-binomial(1,1)", mechanism="laplace", g=None, a=3.0,
                        top_models=10, mcmc=False, rescale=False, always_include=(), credible_level=0.95,
                        mcmc_max_iterations=None, mcmc_max_models=None, uncertainty=None, noise_aware_draws=1000)
        given = dict(prior=prior, model_prior=model_prior, mechanism=mechanism, g=g, a=a, top_models=top_models,
                     mcmc=mcmc, rescale=rescale, always_include=tuple(always_include), credible_level=credible_level,
                     mcmc_max_iterations=mcmc_max_iterations, mcmc_max_models=mcmc_max_models,
                     uncertainty=uncertainty, noise_aware_draws=noise_aware_draws)
        extra = [k for k in defaults if given[k] != defaults[k]]
        if extra:
            raise ValueError(f"{what}: {', '.join(extra)} do not apply to method='adassp' (a ridge point estimate of "
                             "the full model: no priors, models, intervals or SSP options)")
        if not release:
            raise ValueError(f"{what}: method='adassp' is a private release: give epsilon, delta and bounds")
    if predictors is None and isinstance(data, pd.DataFrame):
        predictors = [c for c in data.columns if c != response]
    if isinstance(predictors, (list, tuple)):
        data = _omit_missing(data, [str(c) for c in predictors] + [str(response)], release, na_action, what)
    predictors, response, xdesign, ydesign, x, y = _response_and_predictors(data, response, predictors, levels,
                                                                            release, what)
    names = xdesign.names
    search_bounds = [_count(v, name, what) for v, name in ((mcmc_max_iterations, "mcmc_max_iterations"),
                                                           (mcmc_max_models, "mcmc_max_models"))]
    flat_bounds = _bounds(bounds, xdesign, ydesign, what)
    kw = _ledger_arguments(ledger, budget, data_label, release and seed is None, len(data), predictors + [response])
    if method == "adassp":
        out = _call(_dpmu.adassp, (x, y, names, response, float(epsilon),
                                   None if delta in (None, 0, 0.0) else float(delta), flat_bounds, _seed(seed)), kw)
        return AdaSspResult(json.loads(out), {d.name: list(d.levels) for d in xdesign.specs if d.kind == "categorical"})
    fit = _call(_dpmu.bma, (x, y, names, response, prior, g, a, model_prior, epsilon,
                            None if delta in (None, 0, 0.0) else float(delta), mechanism, flat_bounds, _seed(seed),
                            rescale, top_models, mcmc, xdesign.expand([str(c) for c in always_include]),
                            credible_level, search_bounds[0] or 0,
                            search_bounds[1] if search_bounds[1] is not None else 2**20),
                dict(kw, uncertainty=uncertainty or "", noise_aware_draws=int(noise_aware_draws)))
    _warn_messages(what, fit.messages)
    return BmaResult(fit, xdesign, response)


class AdaSspResult(dict):
    """Result of :func:`bma` with ``method="adassp"``: the fields of the JSON of ``dpmu bma --method
    adassp`` (a dict): ``settings`` (public), ``privacy``, the released ``lambda_min_noisy``,
    ``released_gram``, ``released_xty``, post-processing ``ridge``, ``coefficients`` (data units) and
    ``coefficients_standardized``; ``diagnostics`` with a seed only. ``coef``: the coefficients as a
    pandas Series, ``(intercept)`` first; ``ledger``: the charge (None when not charged).
    """

    def __init__(self, fields: dict, levels: Optional[dict] = None):
        fields = dict(fields)
        settings = fields.get("settings")
        ledger = settings.get("ledger") if isinstance(settings, dict) else None
        if ledger is not None:
            fields["settings"] = dict(settings, ledger=_ledger_entry(ledger))
        self.ledger = _ledger_entry(ledger)
        self.levels = dict(levels or {})
        super().__init__(fields)

    @property
    def coef(self) -> pd.Series:
        return pd.Series({k: (float("nan") if v is None else v) for k, v in self["coefficients"].items()},
                         name="coefficient")

    def __repr__(self) -> str:
        s = self["settings"]
        private = "private" if self["private"] else "NOT private: " + "; ".join(self["private_reason"])
        return "\n".join([f"AdaSSP ridge point estimate (Wang 2018), n = {s['n']}: no model averaging, no intervals",
                          f"{private} (epsilon = {self['privacy']['epsilon']:g}, delta = "
                          f"{self['privacy']['delta']:g}; ridge {self['ridge']:.4g})",
                          self.coef.to_string()])


class TestResult(dict):
    """Result of :func:`test`: the fields of the JSON of ``dpmu test`` (a dict), with a readable repr.

    Non-private: ``log_statistic``, ``statistic``, ``posterior_probability_h1``, ``r_squared``,
    ``shrinkage``, ``n``, ``p``, ``p0``, ``response``, ``common``, ``tested``, ``prior``, ... A DP test:
    ``noisy_statistic`` (the released value), ``log_statistic``, ``bayes_factor``,
    ``posterior_probability_h1`` and ``intervals`` (post-processing of it), ``privacy`` (epsilon,
    delta, sensitivity, Laplace scale), ``private``, ``private_reason``, ``settings`` (public) and,
    with a seed only, ``diagnostics``.

    ``ledger`` (attribute; also ``result["settings"]["ledger"]``): None when not charged to a
    ledger, else the charge (path, epsilon, delta, totals, budget; not the data's fingerprint); ``levels``: the levels used for each categorical column; ``messages``: the
    core's messages (also raised as warnings). A private result holds the settings (n = the number
    of rows, the design's column names, the public censoring limits, ...) and released values only.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, fields: dict, levels: Optional[dict] = None):
        fields = dict(fields)
        ledger = fields.pop("ledger", None)
        settings = fields.get("settings")
        if isinstance(settings, dict) and settings.get("ledger") is not None:
            ledger = settings["ledger"]
            fields["settings"] = dict(settings, ledger=_ledger_entry(ledger))
        self.ledger = _ledger_entry(ledger)
        self.messages = list(fields.pop("messages", None) or [])
        self.levels = dict(levels or {})
        super().__init__(fields)

    def __repr__(self) -> str:
        s = self.get("settings", self)
        lines = [f"H0: {s['response']} ~ 1" + "".join(f" + {c}" for c in s["common"]),
                 "H1: H0" + "".join(f" + {c}" for c in s["tested"]),
                 f"prior: {s['prior']}, private: {self['private']}",
                 f"log_statistic = {self['log_statistic']:.6g}"]
        if "posterior_probability_h1" in self:
            lines.append(f"P(H1 | data) = {self['posterior_probability_h1']:.6g}")
        if "privacy" in self:
            lines.append(f"ledger: {_ledger_repr(self.ledger)}")
        return "\n".join(lines)


def test(data: pd.DataFrame, response: str, common: Sequence[str], tested: Sequence[str], prior: str = "g-prior",
         epsilon: Optional[float] = None, delta: float = 0.0, groups: Optional[int] = None,
         censor: Optional[Sequence[float]] = None, censor_probability: Optional[Sequence[float]] = None,
         alpha: Sequence[float] = (0.05, 0.01), seed: Optional[int] = None, simulations: int = 10000, *,
         levels: Levels = None, ledger: Optional[Union[str, os.PathLike]] = None, budget: Budget = None,
         data_label: Optional[str] = None, g: Optional[float] = None, a: float = 3.0, prior_h0: float = 0.5,
         gaussian_calibration: str = "exact", method: str = "subsample-aggregate",
         bounds: Optional[Sequence[float]] = None, alpha0: Optional[float] = None,
         power_target: float = 0.9, na_action: str = "omit") -> TestResult:
    """Test H0: response ~ 1 + common against H1: response ~ 1 + common + tested, as ``dpmu test``.

    ``epsilon=None``: the non-private test (``--non-private``); otherwise the DP test by subsample
    and aggregate with ``groups`` subsets (paper Sec. 4); ``seed``: reproducible simulation noise
    (not private); no seed: secure noise (a release). Returns the JSON fields of ``dpmu test``.

    ``data``: a pandas DataFrame, one row per observation (n rows; n is public); ``common`` and
    ``tested``: lists of column names (``common`` may be empty). ``censor``: the public censoring
    limits (L, U) of the subset statistics; ``alpha``: levels of the reported intervals. Returns a
    :class:`TestResult` (a dict). Raises ValueError with dpmu's message for bad input (as in
    :func:`bma`; also too many ``groups`` for n); nothing is released or charged then.

    Privacy: the DP test is (epsilon, delta)-DP when one row is replaced (``result["privacy"]``); only
    ``noisy_statistic`` is computed from the data, the rest is post-processing and public settings.

    ``levels``, missing values, a categorical response: as in :func:`bma` (a categorical column in
    ``common`` or ``tested`` becomes its ``column[T.level]`` dummies, all of them tested together
    when it is in ``tested``). ``ledger``, ``budget``, ``data_label``: as in :func:`bma`;
    ``result.ledger`` is the charge (None when not charged).

    ``method``: the private test, as ``dpmu test --method``: ``"subsample-aggregate"`` (the paper's,
    Sec. 4; the default), ``"test-of-tests"`` (Kazan et al. 2023: the partial F-test on ``groups`` = m
    disjoint subsamples at level ``alpha0``, the count of rejections released with Tulap noise; pure
    epsilon-DP; m and alpha0 by the authors' rule with target power ``power_target`` when not given)
    or ``"dp-f"`` (Alabi & Vadhan 2022: clipped moments with Gaussian noise under zCDP, the F
    statistic with a parametric-bootstrap null; needs ``bounds`` (L, U) or a pair per column and
    ``delta`` > 0). docs/methods.md Sec. 11.
    """
    __tracebackhide__ = True
    what = "dpmu.test"
    _check_frame(data, what)
    release = epsilon is not None
    declared = _check_levels_argument(levels, data, what)
    common = _names(common, "common", what)
    tested = _names(tested, "tested", what)
    response = str(response)
    data = _omit_missing(data, common + tested + [response], release, na_action, what)
    ydesign = _design(data, [response], f"{what} response", declared, release, response=True)
    cdesign = _design(data, common, f"{what} common", declared, release)
    tdesign = _design(data, tested, f"{what} tested", declared, release)
    xc = cdesign.matrix(data, f"{what} common")
    xt = tdesign.matrix(data, f"{what} tested")
    y = ydesign.matrix(data, f"{what} response")[:, 0]
    kw = _ledger_arguments(ledger, budget, data_label, release and seed is None, len(data),
                           common + tested + [response])
    out = _call(_dpmu.test, (xc, xt, y, cdesign.names, tdesign.names, response, prior, g, a, prior_h0, epsilon,
                             float(delta), groups, list(censor or []), list(censor_probability or []), list(alpha),
                             _seed(seed), simulations, gaussian_calibration),
                dict(kw, method=str(method), bounds=[float(b) for b in (bounds if bounds is not None else [])],
                     alpha0=None if alpha0 is None else float(alpha0), power_target=float(power_target)))
    result = TestResult(json.loads(out) if isinstance(out, str) else out,
                        {s.name: list(s.levels) for s in cdesign.specs + tdesign.specs if s.kind == "categorical"})
    _warn_messages(what, result.messages)
    return result


test.__test__ = False  # not a pytest test function


def _dpmu_command() -> str:
    """The ``dpmu`` command: the environment variable DPMU (or DPMU_EXE), else ``dpmu`` on the PATH."""
    exe = os.environ.get("DPMU") or os.environ.get("DPMU_EXE") or shutil.which("dpmu")
    if not exe or not os.path.exists(exe):
        raise ValueError("results files are read by the dpmu command (`dpmu export`), which was not found: build "
                         "it (bash scripts/build.sh in dpmu's repository) and set the environment variable DPMU")
    return exe


def _export(args: list) -> pd.DataFrame:
    """``dpmu export ARGS`` as a DataFrame: the one implementation of the tidy tables (dpmu/runtime/tidy.hpp);
    a results file is made by the dpmu command, which reads it back here, so the package needs no HDF5."""
    done = subprocess.run([_dpmu_command(), "export", *args], capture_output=True)
    if done.returncode != 0:
        raise ValueError(done.stderr.decode("utf-8", "replace").strip())
    frame = pd.read_csv(io.BytesIO(done.stdout), keep_default_na=False, na_values=["NA"], float_precision="round_trip",
                        dtype={"cell_key": str, "component_label": str, "metric": str})
    frame["component_label"] = frame["component_label"].fillna("")
    return frame


def read_results(path) -> pd.DataFrame:
    """Summaries of a results file of ``dpmu run``: one row per cell x metric x component, with
    cell_key, a column per cell parameter, metric, component, component_label, mean, sd, mcse,
    q025, q250, q500, q750, q975, n_ok, n_nan (docs/results-schema.md, "Tidy tables"; the table
    of ``dpmu export``, which this runs: set DPMU to the command if it is not on the PATH).
    Results of simulation studies (``dpmu run``), not releases: nothing here is private.
    Raises ValueError for a missing or damaged file, or when the dpmu command is not found."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"read_results: no file '{path}'")
    return _export([path])


def read_replicates(path, metric: str = "") -> pd.DataFrame:
    """Replicate values of ``metric`` (all metrics when empty) of a results file of ``dpmu run``:
    a DataFrame with one row per cell x replicate x component, with cell_key, the cell parameters,
    replicate, metric, component, component_label, value (NaN for a failed replicate); runs
    ``dpmu export --replicates`` as :func:`read_results` does. Raises ValueError for a missing or
    damaged file, an unknown metric, or when the dpmu command is not found."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"read_replicates: no file '{path}'")
    return _export([path, "--replicates"] + (["--metric", str(metric)] if metric else []))


# select, plan_test, audit and the ledger functions (they use the design and ledger helpers above).
from ._tools import (PlanBmaResult, audit, ledger_init, ledger_set_budget, ledger_summary, plan_bma,  # noqa: E402
                     plan_test, select)
