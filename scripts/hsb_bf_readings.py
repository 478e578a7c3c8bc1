"""Which reading of the g-prior Bayes factor gives PB's "P*(H12|D) ≈ 0.70" (PB §4.4, Figure 1)?

An independent numpy re-implementation of the Figure 1 simulation (random split of the 200 HSB
students into M equal subsets, log B10 per subset censored at ±log 99, averaged, Laplace noise
of scale 2 log 99 / (M ε), censored again, P* = logistic(T*)), run for several readings of the
Bayes factor formula, so that the reading can be judged by its median with a bootstrap MC SE:

* ``pb``: PB's formula (docs/methods.md §2) with the common predictors X0 = (1, science):
  log B10 = (b − p0 − p)/2 log(1 + g) − (b − p0)/2 log(1 + g(1 − R²)), R² the partial R² of read
  given science, p0 = 2 — what dpmu computes;
* ``intercept_exponents``: the same partial R² but the exponents of Liang et al.'s null-based
  formula, (b − 1 − p)/2 and (b − 1)/2, as if X0 were the intercept only;
* ``bas_ratio``: the ratio of two null-based (intercept-only) Bayes factors, as BAS reports them,
  (science + read) over (science), both with g-priors;
* ``g_n``: PB's formula with g = n (200) instead of g = b.

Usage: /usr/bin/python3 scripts/hsb_bf_readings.py [--replicates R] [--seed S]
Prints one line per reading: median and mean of P*(H1|D) at M = 10, ε = 8 for both tests, and
the non-private value of each reading.
"""
import argparse
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
C = np.log(99.0)


def load():
    import csv
    with open(os.path.join(HERE, "..", "experiments", "data", "hsb2.csv")) as f:
        rows = list(csv.DictReader(f))
    col = {k: np.array([float(r[k]) for r in rows]) for k in ("math", "science", "read", "female")}
    return col


def r2_vs_intercept(y, xs):
    """R² of y on (1, xs) for arrays of shape [..., b]; xs is a list of [..., b] arrays."""
    yc = y - y.mean(-1, keepdims=True)
    X = np.stack([x - x.mean(-1, keepdims=True) for x in xs], -1)  # [..., b, k]
    xtx = np.einsum("...bi,...bj->...ij", X, X)
    xty = np.einsum("...bi,...b->...i", X, yc)
    beta = np.linalg.solve(xtx, xty[..., None])[..., 0]
    ss = np.einsum("...b,...b->...", yc, yc)
    return np.einsum("...i,...i->...", beta, xty) / ss


def log_bf(reading, b, y, common, tested, g):
    """Per-subset log B10 for H1: y ~ 1 + common + tested vs H0: y ~ 1 + common."""
    p = len(tested)
    r_full = r2_vs_intercept(y, common + tested)
    if not common:
        part, p0, r_null = r_full, 1, 0.0
    else:
        r_null = r2_vs_intercept(y, common)
        part, p0 = (r_full - r_null) / (1 - r_null), 1 + len(common)
    if reading in ("pb", "g_n"):
        return (b - p0 - p) / 2 * np.log1p(g) - (b - p0) / 2 * np.log1p(g * (1 - part))
    if reading == "intercept_exponents":
        return (b - 1 - p) / 2 * np.log1p(g) - (b - 1) / 2 * np.log1p(g * (1 - part))
    if reading == "bas_ratio":
        k1, k0 = len(common) + p, len(common)

        def null_based(r2, k):
            return (b - 1 - k) / 2 * np.log1p(g) - (b - 1) / 2 * np.log1p(g * (1 - r2))
        return null_based(r_full, k1) - (null_based(r_null, k0) if common else 0.0)
    raise ValueError(reading)


def simulate(col, reading, test, m, eps, reps, rng):
    n = len(col["math"])
    b = n // m
    g = float(n) if reading == "g_n" else float(b)
    perm = np.argsort(rng.random((reps, n)), axis=1)[:, : m * b].reshape(reps, m, b)
    y = col["math"][perm]
    common = [col["science"][perm]] if test == "H2" else []
    tested = [col["read"][perm]] if test == "H2" else [col["female"][perm]]
    t = np.clip(log_bf(reading, b, y, common, tested, g), -C, C).mean(-1)
    t = np.clip(t + rng.laplace(0.0, 2 * C / (m * eps), size=reps), -C, C)
    p = 1.0 / (1.0 + np.exp(-t))
    gnp = float(n) if reading != "g_n" else float(n)
    whole = {k: v[None, :] for k, v in col.items()}
    lnp = log_bf(reading, n, whole["math"], [whole["science"]] if test == "H2" else [],
                 [whole["read"]] if test == "H2" else [whole["female"]], gnp)[0]
    return p, 1.0 / (1.0 + np.exp(-lnp))


def median_se(p, rng, draws=400):
    idx = rng.integers(0, len(p), size=(draws, len(p)))
    return float(np.median(p)), float(np.std(np.median(p[idx], axis=1), ddof=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=20240101)
    args = ap.parse_args()
    col = load()
    print(f"# M = 10, eps = 8, {args.replicates} replicates; median ± bootstrap MC SE; paper: 0.25 (H11), 0.70 (H12)")
    for reading in ("pb", "intercept_exponents", "bas_ratio", "g_n"):
        for test in ("H1", "H2"):
            rng = np.random.default_rng(args.seed)
            p, npv = simulate(col, reading, test, 10, 8.0, args.replicates, rng)
            med, se = median_se(p, rng)
            print(f"{reading:20s} {test}: median {med:.4f} ± {se:.4f}  mean {p.mean():.4f}  non-private {npv:.6g}")


if __name__ == "__main__":
    main()
