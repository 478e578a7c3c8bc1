#!/usr/bin/python3
"""Summarise simulation-based calibration runs of dpmu_sbc_noise_aware (docs/calibration-sbc.md).

Usage: bench/sbc_noise_aware.py CSV [CSV ...] > table.md

The files are pooled per setting (method, mechanism, epsilon, p, n; chunks of draws). Per setting:
the rank statistics of each beta_j and sigma^2 among L posterior draws (sampler only; L may differ
between chunks, L + 1 a multiple of 10) tested for uniformity with a chi-square test on 10 equal
bins of the L + 1 rank values and a Kolmogorov-Smirnov test on (rank + U)/(L + 1), U uniform (a
continuous uniform under calibration); Holm's correction over every test of every setting; the coverage of the 50/80/95 % intervals averaged over coefficients (binomial MC
SE); the PIP reliability table (10 equal bins; a bin with >= 50 predictions passes when its
observed frequency of gamma_j = 1 is within 2 SE of its mean predicted probability, the SE the
larger of the binomial sqrt(pbar(1 - pbar)/count) and the replicate-clustered one); of the predictors given PIP >= 0.9, the share that is null (passes when
<= 0.10 + 2 SE). Talts et al. (2018), arXiv:1804.06788; Modrak et al. (2023), Bayesian Analysis.
"""
import sys

import numpy as np
import pandas as pd
from scipy import stats


def holm(pvalues):
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adjusted[idx] = running
    return adjusted


def rank_tests(ranks, L, rng):
    ranks = np.asarray(ranks, dtype=float)
    L = np.asarray(L, dtype=float)
    keep = np.isfinite(ranks) & (ranks >= 0)
    ranks, L = ranks[keep].astype(int), L[keep].astype(int)
    bins = 10
    counts = np.bincount((ranks * bins) // (L + 1), minlength=bins)
    chi2 = stats.chisquare(counts).pvalue
    u = (ranks + rng.uniform(size=len(ranks))) / (L + 1)
    ks = stats.kstest(u, "uniform").pvalue
    return chi2, ks, len(ranks)


def main(paths):
    rng = np.random.default_rng(20261207)
    pooled = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    keys = ["method", "mechanism", "epsilon", "p", "n"]
    groups = [g for _, g in pooled.groupby(keys, sort=True)]
    settings = []
    tests = []
    for df in groups:
        df = df.drop_duplicates(subset=["draw"])
        path = ""
        p = int(df["p"].iloc[0])
        row = {
            "file": path,
            "method": df["method"].iloc[0],
            "mechanism": df["mechanism"].iloc[0],
            "epsilon": df["epsilon"].iloc[0],
            "p": p,
            "n": int(df["n"].iloc[0]),
            "draws": len(df),
            "converged": df["converged"].mean(),
            "fallback": df["fallback"].mean(),
            "median_s": df["seconds"].median(),
        }
        for level in (50, 80, 95):
            cov = np.concatenate([df[f"cover{level}_{j}"].to_numpy() for j in range(p)])
            row[f"cover{level}"] = cov.mean()
            row[f"cover{level}_se"] = np.sqrt(cov.mean() * (1 - cov.mean()) / len(cov))
        pip = np.concatenate([df[f"pip{j}"].to_numpy() for j in range(p)])
        gam = np.concatenate([df[f"gamma{j}"].to_numpy() for j in range(p)])
        rep = np.concatenate([np.arange(len(df)) for _ in range(p)])
        row["brier"] = np.mean((pip - gam) ** 2)
        rel = []
        ok = True
        for b in range(10):
            lo, hi = b / 10, (b + 1) / 10
            sel = (pip >= lo) & ((pip < hi) if b < 9 else (pip <= hi))
            c = int(sel.sum())
            if c == 0:
                continue
            pbar = pip[sel].mean()
            f = gam[sel].mean()
            se = np.sqrt(max(pbar * (1 - pbar), 1e-12) / c)
            # The p predictions of one replicate are correlated (the beta-binomial model prior makes
            # the gamma_j dependent): replicate-clustered SE, sqrt(R/(R-1) sum_r (e_r - pbar c_r)^2)/sum c_r
            # (docs/bma.md "Calibration metrics"); the larger of the two is used.
            reps = rep[sel]
            e_r = np.bincount(reps, weights=gam[sel], minlength=len(df))
            p_r = np.bincount(reps, weights=pip[sel], minlength=len(df))
            used = np.bincount(reps, minlength=len(df)) > 0
            R = used.sum()
            if R > 1:
                se = max(se, np.sqrt(R / (R - 1) * np.sum((e_r[used] - p_r[used]) ** 2)) / c)
            passed = bool(abs(f - pbar) <= 2 * se) if c >= 50 else None
            if passed is not None and not passed:
                ok = False
            rel.append((b, c, pbar, f, se, passed))
        # Model-size calibration: under calibration E[share of active predictors | release] equals the
        # mean PIP of the replicate, so the least-squares slope of the one on the other is 1.
        share = np.mean([df[f"gamma{j}"].to_numpy() for j in range(p)], axis=0)
        mean_pip = np.mean([df[f"pip{j}"].to_numpy() for j in range(p)], axis=0)
        if len(df) > 2 and np.var(mean_pip) > 0:
            design = np.c_[np.ones(len(df)), mean_pip - mean_pip.mean()]
            coef, *_ = np.linalg.lstsq(design, share, rcond=None)
            resid = share - design @ coef
            cov = resid @ resid / (len(df) - 2) * np.linalg.inv(design.T @ design)
            row["size_slope"], row["size_slope_se"] = coef[1], np.sqrt(cov[1, 1])
        else:
            row["size_slope"], row["size_slope_se"] = float("nan"), float("nan")
        row["reliability"] = rel
        row["reliability_ok"] = ok
        hi = pip >= 0.9
        if hi.sum() > 0:
            null_share = 1 - gam[hi].mean()
            se = np.sqrt(max(null_share * (1 - null_share), 0.1 * 0.9) / hi.sum())
            row["high_pip_count"] = int(hi.sum())
            row["high_pip_null"] = null_share
            row["high_pip_ok"] = null_share <= 0.10 + 2 * se
        else:
            row["high_pip_count"] = 0
            row["high_pip_null"] = float("nan")
            row["high_pip_ok"] = True
        if row["method"] == "sampler":
            L = df["L"].to_numpy()
            for j in range(p):
                chi2, ks, m = rank_tests(df[f"rank_beta{j}"], L, rng)
                tests.append((len(settings), f"beta{j}", chi2, ks, m))
            chi2, ks, m = rank_tests(df["rank_sigma2"], L, rng)
            tests.append((len(settings), "sigma2", chi2, ks, m))
        settings.append(row)

    adj_chi2 = holm([t[2] for t in tests]) if tests else []
    adj_ks = holm([t[3] for t in tests]) if tests else []

    # Verdicts per analysis (docs/calibration-sbc.md "Design"): every rank test passes after Holm; every
    # reliability bin with >= 50 predictions within 2 SE; the null share among PIPs >= 0.9 at most
    # 10 % + 2 SE; 95 % coverage at least 0.95 - 2 SE (a calibrated equal-tailed interval covers at
    # least its level under SBC).
    print("### Verdicts\n")
    print("| analysis | settings | rank tests pass (Holm) | reliability bins pass | PIP >= 0.9 null share ok |"
          " 95 % coverage >= 0.95 - 2 SE |")
    print("|---|---|---|---|---|---|")
    for method in sorted({s["method"] for s in settings}):
        idx = [i for i, s in enumerate(settings) if s["method"] == method]
        ranks = [adj_chi2[k] > 0.01 and adj_ks[k] > 0.01 for k, t in enumerate(tests) if t[0] in idx]
        rank_text = f"{sum(ranks)} of {len(ranks)}" if ranks else "(no ranks)"
        rel = sum(settings[i]["reliability_ok"] for i in idx)
        high = sum(bool(settings[i]["high_pip_ok"]) for i in idx)
        cov = sum(settings[i]["cover95"] >= 0.95 - 2 * settings[i]["cover95_se"] for i in idx)
        print(f"| {method} | {len(idx)} | {rank_text} | {rel} of {len(idx)} | {high} of {len(idx)} | {cov} of {len(idx)} |")
    print()

    print("### Rank statistics (sampler)\n")
    print("Holm-adjusted over all %d tests of each kind; pass: adjusted p > 0.01.\n" % len(tests))
    print("| mechanism | eps | p | n | draws | quantity | chi2 p | Holm | KS p | Holm | pass |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for i, t in enumerate(tests):
        s = settings[t[0]]
        passed = adj_chi2[i] > 0.01 and adj_ks[i] > 0.01
        print(f"| {s['mechanism']} | {s['epsilon']:g} | {s['p']} | {s['n']} | {t[4]} | {t[1]} | {t[2]:.3f} | "
              f"{adj_chi2[i]:.3f} | {t[3]:.3f} | {adj_ks[i]:.3f} | {'yes' if passed else 'NO'} |")

    print("\n### Coverage, PIP calibration and cost per setting\n")
    print("| method | mechanism | eps | p | n | draws | converged | fallback | cover50 | cover80 | cover95 | Brier |"
          " PIP>=0.9: n, null share | reliability bins (>=50) pass | median s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in settings:
        print(f"| {s['method']} | {s['mechanism']} | {s['epsilon']:g} | {s['p']} | {s['n']} | {s['draws']} | "
              f"{s['converged']:.2f} | {s['fallback']:.2f} | "
              f"{s['cover50']:.3f} ± {s['cover50_se']:.3f} | {s['cover80']:.3f} ± {s['cover80_se']:.3f} | "
              f"{s['cover95']:.3f} ± {s['cover95_se']:.3f} | {s['brier']:.3f} | "
              f"{s['high_pip_count']}, {s['high_pip_null']:.3f} ({'ok' if s['high_pip_ok'] else 'FAIL'}) | "
              f"{'yes' if s['reliability_ok'] else 'NO'} | {s['median_s']:.2f} |")

    print("\n### Model-size calibration\n")
    print("Least-squares slope of the share of active predictors on the replicate's mean PIP (1 under"
          " calibration; above 1: the PIPs move too little with the evidence, under-confident).\n")
    print("| method | mechanism | eps | p | n | draws | slope | SE | (slope - 1)/SE |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in settings:
        print(f"| {s['method']} | {s['mechanism']} | {s['epsilon']:g} | {s['p']} | {s['n']} | {s['draws']} | "
              f"{s['size_slope']:.2f} | {s['size_slope_se']:.2f} | {(s['size_slope'] - 1) / s['size_slope_se']:.1f} |")

    print("\n### PIP reliability tables\n")
    for s in settings:
        print(f"{s['method']}, {s['mechanism']} eps {s['epsilon']:g}, p {s['p']}, n {s['n']}: "
              + "; ".join(f"[{b/10:.1f},{(b+1)/10:.1f}) n={c} pred {pb:.3f} obs {f:.3f}"
                          f" (SE {se:.3f}){'' if ok is None else (' ok' if ok else ' OFF')}"
                          for b, c, pb, f, se, ok in s["reliability"]))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
