"""DP model selection (Lei et al. 2018), planning a private test, auditing a release through this
package, and the privacy-budget ledger: the Python faces of dpmu's release API (engine/api), the
same numbers as ``dpmu select``, ``dpmu plan-test``, ``dpmu plan-bma``, ``dpmu audit`` and ``dpmu ledger``."""

from __future__ import annotations

import json
import os
from typing import Callable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _dpmu
from . import _budget_text, _call, _ledger_arguments, _response_and_predictors, _seed


def select(data: pd.DataFrame, response: str, predictors: Sequence[str], epsilon: float, radius: float,
           penalty: float, data_bound: Union[float, str], algorithm: int = 1, delta: Optional[float] = None,
           seed: Optional[int] = None, *, levels=None, ledger=None, budget=None, data_label: Optional[str] = None,
           lcssf_delta: str = "r2_1pR2", objective_scale: float = 0.5, noise_factor: float = 2.0,
           variance_floor: float = 0.01, alg2_selection: str = "exponential_mechanism") -> dict:
    """Differentially private model selection of Lei et al. (2018) over all 2^d submodels of
    ``predictors`` (d <= 20, no intercept): Algorithm 1 (report-noisy-min, epsilon-DP) or the
    Algorithm-2-like placeholder ((2 epsilon, delta)-DP); docs/lcssf.md.

    ``data_bound``: a public r > 0 bounding |Y| (and |X| unless ``lcssf_delta="rpR_2"``); values are
    clamped into it. ``"auto"`` (the data's maximum) and any seed make the result not private.
    Categorical predictors need declared ``levels`` in a private call, as in :func:`bma`; missing
    values raise ValueError. ``ledger``/``budget``/``data_label`` as in :func:`bma`.

    ``data``: a pandas DataFrame, one row per observation (n rows; n is public). Without a seed the
    call is a release: the selected model is the released value (``private`` True) and is charged
    to the ledger; ``epsilon``, ``radius``, ``penalty`` and ``data_bound`` must be chosen without
    looking at the data.

    Returns the JSON object of ``dpmu select`` as a dict: ``selected_model`` (``predictors``,
    ``mask``), ``private``, ``private_reason``, ``settings`` (public; ``settings["ledger"]`` is the
    charge), ``privacy`` (epsilon, delta, sensitivity, noise scale); Algorithm 2 also
    ``released_variance``. ``diagnostics`` only with a seed. Raises ValueError with dpmu's message
    for bad input (settings out of range, more than 20 predictors, missing values, a release the
    ledger's budget refuses); nothing is released or charged then.
    """
    what = "dpmu.select"
    release = seed is None
    predictors, response, xdesign, _, x, y = _response_and_predictors(data, response, predictors, levels, release,
                                                                      what)
    kw = _ledger_arguments(ledger, budget, data_label, release, len(data), predictors + [response])
    text = _call(_dpmu.select, (x, y, xdesign.names, response, int(algorithm), float(epsilon),
                                None if delta is None else float(delta), float(radius), float(penalty),
                                str(data_bound), lcssf_delta, float(objective_scale), float(noise_factor),
                                float(variance_floor), alg2_selection, _seed(seed)), kw)
    return json.loads(text)


def plan_test(n: int, epsilon: float, p: int = 1, p0: int = 1, prior: str = "g-prior", delta: float = 0.0,
              groups: Sequence[int] = (2, 5, 10), censor: Optional[Sequence[Sequence[float]]] = None,
              r_squared: Optional[float] = None, simulations: int = 2000, seed: Optional[int] = None,
              g: Optional[float] = None, a: float = 3.0, gaussian_calibration: str = "exact") -> pd.DataFrame:
    """Plan a private test before any budget is spent (Pena & Barrientos 2024, Sec. 4.5): the bias,
    variance and MSE of the DP statistic for each candidate number of subsets ``groups`` and
    censoring limits ``censor`` (pairs (L, U); default: the paper's), under H0 or at ``r_squared``.
    Uses public quantities only (no data, no budget).

    Returns a DataFrame (one row per setting: num_subsets, lower, upper, target, bias, variance,
    mse, mse_mcse, released_mse, probability_at_upper) whose ``attrs`` hold the settings and the
    ``recommended`` one (smallest simulated MSE). ``n`` is the (public) number of rows, ``p`` and
    ``p0`` the numbers of predictors under H1 and H0. Raises ValueError with dpmu's message for
    settings out of range (e.g. epsilon <= 0, more subsets than n allows).
    """
    pairs = [(float(l), float(u)) for l, u in (censor or [])]
    out = json.loads(_dpmu.plan_test(int(n), int(p), int(p0), prior, g, float(a), float(epsilon), float(delta),
                                     [int(m) for m in groups], pairs, r_squared, int(simulations), _seed(seed),
                                     gaussian_calibration))
    rows = out.pop("settings")
    table = pd.DataFrame({
        "num_subsets": [r["num_subsets"] for r in rows],
        "lower": [r["censoring_limits"][0] for r in rows],
        "upper": [r["censoring_limits"][1] for r in rows],
        **{k: [r[k] for r in rows] for k in ("target", "bias", "variance", "mse", "mse_mcse", "released_mse",
                                              "probability_at_upper")}})
    table.attrs.update(out)
    return table


class PlanBmaResult(pd.DataFrame):
    """The result of :func:`plan_bma`: a DataFrame (columns analysis, quantity, term, mean, mc_se)
    whose ``attrs`` hold ``private`` (False), ``simulation``, ``settings`` and ``truth``; printed
    with a header saying it is a simulation from public settings."""

    @property
    def _constructor(self):
        return pd.DataFrame  # operations on the table give a plain DataFrame

    @property
    def private(self) -> bool:
        return False

    def __repr__(self) -> str:
        s, t = self.attrs["settings"], self.attrs["truth"]
        sim = self.attrs["simulation"]
        head = ("Plan of a private model-averaging release: a simulation from public settings only (no data read, "
                "no budget spent; not a release)\n"
                f"n = {s['n']}, p = {s['p']}, {s['mechanism']}, epsilon = {s['epsilon']:g}, delta = {s['delta']:g}, "
                f"prior {s['prior']}, model prior {s['model_prior']} ({sim['replicates']} simulations, seed "
                f"{sim['seed']})\n"
                f"Assumed beta = ({', '.join(f'{b:g}' for b in t['beta'])}), sigma = {t['sigma']:g}\n\n")
        return head + pd.DataFrame(self).to_string(index=False) + (
            "\n\nEach mean is over the simulated releases; mc_se is its Monte Carlo standard error.")


def plan_bma(n: int, epsilon: float, coefficients: Optional[Sequence[float]] = None, sigma: Optional[float] = None,
             bounds: Optional[Sequence[float]] = None, mechanism: str = "laplace", delta: Optional[float] = None,
             prior: str = "g_prior", model_prior: str = "beta-binomial:1,1", simulations: int = 200, seed: int = 1,
             uncertainty: str = "both", noise_aware_draws: int = 100, p: Optional[int] = None,
             true_model_size: Optional[int] = None, signal_z: Optional[float] = None) -> PlanBmaResult:
    """Plan a private model-averaging release before any budget is spent (docs/bma.md, "Planning a
    release"): simulate what :func:`bma` with public bounds would deliver under an assumed design --
    the coverage of the 50/80/95 % credible intervals of each beta_j, the width of the 95 % ones, the
    mean PIPs, the Brier score of the PIPs and P(true model), for the plug-in and the noise-aware
    analysis of the same simulated release, each with its Monte Carlo SE. Uses public settings only:
    reads no data, charges no ledger, is not a release (``attrs["private"]`` is False). The same
    numbers as ``dpmu plan-bma`` and R's ``plan_bma()`` for the same seed.

    ``coefficients``: the assumed beta_1..beta_p (finite; their length sets p; the non-zero ones are
    the true model); None: the built-in design (``p``, ``true_model_size``, ``signal_z``).
    ``sigma``: the assumed error SD (> 0; None: sqrt(8/3)/z). ``bounds``: as :func:`bma` takes them,
    (l, u) for every column or l1, u1, ..., l(p+1), u(p+1) (predictors in order, response last; pairs
    are accepted too); predictor j is simulated Uniform(l_j, u_j); None: (-2, 2) everywhere, the
    paper's reading. ``mechanism``: "laplace" or "wishart" (``delta`` in (0, 1), None: 1/n).
    ``simulations``: simulated releases (10 to 100000); ``seed``: of the simulation.
    ``uncertainty``: "both", "plug-in" or "noise-aware" (the analyses reported).

    Returns a :class:`PlanBmaResult` (a DataFrame: one row per summary and coefficient, columns
    analysis, quantity, term, mean, mc_se; ``attrs``: private, simulation, settings, truth). Raises
    ValueError naming the argument for settings out of range (e.g. coefficients of the wrong length,
    sigma <= 0, empty bounds), before any simulation.
    """
    def numbers(name, value):
        if value is None:
            return None
        try:
            return np.asarray(value, dtype=float).ravel().tolist()
        except (TypeError, ValueError):
            raise ValueError(f"{name}: must be numbers (got {value!r})") from None

    def whole(name, value, lowest):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lowest:
            raise ValueError(f"{name}: must be a whole number >= {lowest} (got {value!r})")
        return int(value)

    def number(name, value):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{name}: must be a number (got {value!r})")
        return float(value)

    text = _dpmu.plan_bma(whole("n", n, 1), whole("p", p, 1), numbers("coefficients", coefficients),
                          number("sigma", sigma), numbers("bounds", bounds), str(mechanism),
                          number("epsilon", epsilon), number("delta", delta), str(prior), str(model_prior),
                          whole("noise_aware_draws", noise_aware_draws, 1), whole("simulations", simulations, 0),
                          whole("seed", seed, 0), str(uncertainty), whole("true_model_size", true_model_size, 0),
                          number("signal_z", signal_z))
    out = json.loads(text)
    rows = []
    for analysis in ("plug_in", "noise_aware", "noise_aware_diagnostics"):
        for quantity, summary in out.get(analysis, {}).items():
            means, ses = summary["mean"], summary["mc_se"]
            if isinstance(means, list):
                labels = summary.get("labels") or [None] * len(means)
                rows += [(analysis, quantity, labels[j], means[j], ses[j]) for j in range(len(means))]
            else:
                rows.append((analysis, quantity, None, means, ses))
    table = PlanBmaResult(pd.DataFrame(rows, columns=["analysis", "quantity", "term", "mean", "mc_se"]).astype(
        {"mean": float, "mc_se": float}))
    table.attrs.update({k: out[k] for k in ("command", "private", "simulation", "settings", "truth")})
    return table


def audit(release: Callable[[pd.DataFrame], Union[float, Sequence[float]]], data: pd.DataFrame,
          neighbour: pd.DataFrame, epsilon: float, delta: float = 0.0, samples: int = 1000,
          confidence: float = 0.95, score: str = "laplace") -> dict:
    """Audit a release empirically through this package: call ``release(data)`` and
    ``release(neighbour)`` ``samples`` times each (two neighbouring data frames: same number of rows,
    one row replaced), and bound epsilon from below with Clopper-Pearson limits at ``confidence``
    (Jagielski, Ullman & Oprea 2020). ``release`` returns a number or a vector of numbers (e.g.
    ``lambda d: dpmu.test(d, "y", [], ["x"], epsilon=1, groups=5).noisy_statistic``); ``score`` is
    ``"laplace"`` for continuous releases or ``"categorical"`` when entry 0 is a category (a
    selected model's mask). A lower bound above ``epsilon`` refutes the claim; one below it is
    consistent with it (an audit cannot prove privacy).

    ``data`` and ``neighbour`` should be synthetic or public: every call of ``release`` analyses
    them, and an unseeded release is charged to the ``DPMU_LEDGER`` ledger when it is set (unset it,
    or use a ledger of its own, for an audit). The result describes the mechanism, not the data,
    and is not itself a DP release.

    Returns a dict: ``epsilon_lower_bound``, ``epsilon_estimate``, ``event``, the probabilities and
    their bounds, ``consistent_with_claim``, ``verdict`` and ``claimed``. Raises ValueError when
    ``release`` is not callable or returns vectors of different lengths, the frames differ in
    length, ``samples`` < 20, or a setting is out of range.
    """
    if not callable(release):
        raise ValueError("dpmu.audit: release must be a function of a data frame")
    if not isinstance(data, pd.DataFrame) or not isinstance(neighbour, pd.DataFrame) or len(data) != len(neighbour):
        raise ValueError("dpmu.audit: data and neighbour must be DataFrames with the same number of rows")
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 20:
        raise ValueError("dpmu.audit: samples must be an integer >= 20")

    def draw(d: pd.DataFrame) -> np.ndarray:
        rows = [np.atleast_1d(np.asarray(release(d), dtype=np.float64)) for _ in range(int(samples))]
        if len({r.shape for r in rows}) != 1 or rows[0].ndim != 1 or rows[0].size == 0:
            raise ValueError("dpmu.audit: release must return numbers or vectors of one length")
        return np.asfortranarray(np.vstack(rows))

    out = json.loads(_dpmu.audit_samples(draw(data), draw(neighbour), float(epsilon), float(delta),
                                         float(confidence), score))
    out["claimed"] = {"epsilon": epsilon, "delta": delta}
    return out


def ledger_init(path: Union[str, os.PathLike], budget, accountant: Optional[str] = None) -> None:
    """Create a privacy-budget ledger with its ``budget`` (EPS, (EPS, DELTA), "EPS,DELTA" or a zCDP
    budget "rho=RHO"), fixed from then on, and its key file PATH.key (mode 0600). ``accountant``
    says how releases add up against the budget, recorded in the ledger: "basic" (sums of epsilon
    and delta; the default, conservative), "tight" (exact Gaussian-DP composition of Gaussian
    releases and optimal composition of pure ones, at the budget's delta) or "zcdp" (the default
    and only choice for a "rho=RHO" budget). Every release that names the ledger (``ledger=PATH``
    or ``DPMU_LEDGER``) is checked against the budget and charged before any noise is drawn; one
    that would exceed it is refused. Keep the key file secret: it keys the data fingerprints
    recorded in the ledger. Raises ValueError for a bad budget or accountant, or when the ledger
    already exists (it is never reset). docs/privacy.md, "Privacy-budget ledger" and "Accountants"."""
    text = _budget_text(budget)
    if text is None:
        raise ValueError("dpmu.ledger_init: give the budget")
    if accountant is not None and accountant not in ("basic", "tight", "zcdp"):
        raise ValueError(f"dpmu.ledger_init: accountant must be 'basic', 'tight' or 'zcdp', not {accountant!r}")
    _dpmu.ledger_init(os.fspath(path), text, accountant or "")


def ledger_set_budget(path: Union[str, os.PathLike], budget, reason: str) -> None:
    """Record a new budget for the ledger at ``path`` (EPS, (EPS, DELTA) or "EPS,DELTA"), with the
    ``reason``: an explicit act, recorded in the ledger (time, new budget, reason; a "rho=RHO"
    budget stays a rho budget). The guarantee of all releases charged to a ledger together is the
    total spent under the ledger's accountant, so a higher budget allows a weaker joint guarantee. Raises ValueError
    without a reason, for a bad budget, or when the ledger does not exist or is damaged."""
    if not reason:
        raise ValueError("dpmu.ledger_set_budget: give the reason (it is recorded)")
    _dpmu.ledger_set_budget(os.fspath(path), _budget_text(budget), reason)


def ledger_summary(path: Optional[Union[str, os.PathLike]] = None) -> dict:
    """A ledger as ``dpmu ledger FILE`` prints it, as a dict: budget, accountant, budget changes,
    spent (basic sums), totals ("basic", "tight" at the budget's delta, "zcdp" where it applies),
    remaining, and the releases grouped by keyed data fingerprint. ``path`` defaults to
    DPMU_LEDGER. Raises ValueError when no path is given or the ledger does not exist or is damaged.
    The summary describes what was released (budget accounting), not the data."""
    path = path if path is not None else os.environ.get("DPMU_LEDGER", "")
    if not path:
        raise ValueError("dpmu.ledger_summary: give the ledger's path (or set DPMU_LEDGER)")
    return json.loads(_dpmu.ledger_summary(os.fspath(path)))
