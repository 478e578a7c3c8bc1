"""Figures 3, 4, 8, 9 of Peña & Barrientos (2024) from ``ssp_simulation`` results files.

Figure 3 (Zellner-Siow) / 8 (BIC): Monte Carlo mean of the predictive MSE against n (thousands),
both axes on log scales. Figure 4 (ZS) / 9 (BIC): mean posterior probability of the true model.
Facets: rows = p in {2, 6, 9}, columns = the three |T| values of that p. Colour = method and
mechanism (G (not DP), Lap Non-thresh, Wish Non-thresh, Lap Thresh, Wish Thresh); line type =
epsilon. Cells are selected by their axis values (mechanism, thresholded, epsilon, prior). The x
position is the simulated number of rows (``/calibration/simulated_n``), so quick runs with
``n_scale < 1`` are drawn where they were simulated. Error bars (P(true model) only): +-2 MC SEs.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, check_results_file, figure_note, save_figure  # noqa: E402

METHODS = [  # (mechanism, thresholded, label, colour)
    ("none", 0, "G (not DP)", "black"),
    ("laplace", 0, "Lap Non-thresh", "tab:blue"),
    ("wishart", 0, "Wish Non-thresh", "tab:red"),
    ("laplace", 1, "Lap Thresh", "tab:green"),
    ("wishart", 1, "Wish Thresh", "tab:orange"),
]
LINESTYLES = ["-", "--", ":", "-."]
FIGURE_NUMBERS = {"zellner_siow": (3, 4), "bic": (8, 9)}


def _priors(res):
    """The coefficient priors of the file (the ``prior`` axis)."""
    return res.values("prior")


def _epsilons(res):
    """The finite privacy budgets of the file (mechanism none has epsilon = inf)."""
    return [e for e in res.values("epsilon") if np.isfinite(e)]


def _cells(res, prior, mechanism, thr, eps, **data):
    """Indices of the cells of one method (and the given data factors), n increasing."""
    idx = res.select(prior=prior, mechanism=mechanism, thresholded=thr,
                     epsilon=np.inf if eps is None else eps, **data)
    n_sim = res.calibration["simulated_n"][idx, 0]
    order = np.argsort(n_sim)
    return idx[order], n_sim[order]


def plot_metric(res, metric, prior, ylabel, log_y, title, out_base):
    """Draw one 3x3 figure (p x |T|) of ``metric`` for one prior; returns the written paths."""
    ps = res.values("p")
    mean = res.summary[metric]["mean"]
    mcse = res.summary[metric]["mcse"]
    epsilons = _epsilons(res)
    ncol = max(len(set(res.cells["true_model_size"][res.select(p=p)].tolist())) for p in ps)
    fig, axes = plt.subplots(len(ps), ncol, figsize=(3.3 * ncol, 2.7 * len(ps)), sharex=True, squeeze=False)
    handles = {}
    for r, p in enumerate(ps):
        ts = sorted(set(res.cells["true_model_size"][res.select(p=p)].tolist()))
        for c, t in enumerate(ts):
            ax = axes[r][c]
            for mechanism, thr, label, colour in METHODS:
                for e_i, eps in enumerate(epsilons if mechanism != "none" else [None]):
                    idx, n_sim = _cells(res, prior, mechanism, thr, eps, p=p, true_model_size=t)
                    if len(idx) == 0:
                        continue
                    n_k = n_sim / 1000.0
                    y = mean[idx]
                    se = mcse[idx]
                    ok = np.isfinite(y) & ((y > 0) if log_y else True)
                    ls = "-" if eps is None else LINESTYLES[e_i % len(LINESTYLES)]
                    (h,) = ax.plot(n_k[ok], y[ok], ls, color=colour, lw=1.2, marker="o", ms=2.5)
                    if not log_y:  # on log axes a +-2 SE bar often crosses zero; SEs are in /summary
                        ax.errorbar(n_k[ok], y[ok], yerr=2 * np.nan_to_num(se[ok]), fmt="none", ecolor=colour,
                                    elinewidth=0.6, alpha=0.6)
                    handles.setdefault(label, plt.Line2D([], [], color=colour, lw=1.5))
                    if eps is not None:
                        handles.setdefault(f"ε = {eps:g}", plt.Line2D([], [], color="grey", ls=ls, lw=1.2))
            ax.set_xscale("log")
            if log_y:
                ax.set_yscale("log")
            else:
                ax.set_ylim(-0.03, 1.03)
            ax.set_title(f"p = {p}, |T| = {t}", fontsize=9)
            ax.tick_params(labelsize=7)
            if r == len(ps) - 1:
                ax.set_xlabel("n (thousands)", fontsize=8)
            if c == 0:
                ax.set_ylabel(ylabel, fontsize=8)
        for c in range(len(ts), ncol):
            axes[r][c].set_visible(False)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=7, fontsize=7, frameon=False)
    reps = int(np.nanmax(res.summary[metric]["n_ok"])) if "n_ok" in res.summary[metric] else None
    fig.suptitle(title + (f" ({reps} data sets per cell)" if reps else ""), fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    return save_figure(fig, os.path.dirname(out_base) or ".", os.path.basename(out_base))


def plot_file(path, out_dir, name=None):
    """Draw Figures 3/4 (ZS) and 8/9 (BIC) for each prior in the file; returns the written paths."""
    res = Results(path)
    if res.experiment != "ssp_simulation":
        raise ValueError(f"{path}: experiment {res.experiment} is not ssp_simulation")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for prior in _priors(res):
        f_pmse, f_true = FIGURE_NUMBERS.get(prior, (None, None))
        tag_pmse = f"fig{f_pmse}" if f_pmse else f"pmse_{prior}"
        tag_true = f"fig{f_true}" if f_true else f"prob_true_model_{prior}"
        written += plot_metric(res, "predictive_mse", prior, "PMSE", True,
                               f"Predictive MSE, prior {prior}", os.path.join(out_dir, f"{name}_{tag_pmse}"))
        written += plot_metric(res, "prob_true_model", prior, "P(true model | D)", False,
                               f"Posterior probability of the true model, prior {prior}",
                               os.path.join(out_dir, f"{name}_{tag_true}"))
    return written


def _series(res, metric, prior, mechanism, thr, eps):
    """{(p, T): (n_sim array, mean array)} for one method, n increasing."""
    mean = res.summary[metric]["mean"]
    out = {}
    for p in res.values("p"):
        for t in sorted(set(res.cells["true_model_size"][res.select(p=p)].tolist())):
            idx, n_sim = _cells(res, prior, mechanism, thr, eps, p=p, true_model_size=t)
            if len(idx):
                out[(p, t)] = (n_sim, mean[idx])
    return out


def check_claims(path, prior="zellner_siow"):
    """The qualitative claims of PB §5.2.1 checked on a results file; returns markdown lines."""
    res = Results(path)
    priors = _priors(res)
    if prior not in priors:
        print(f"error: --claims {prior}: the file has the priors {', '.join(priors)}", file=sys.stderr)
        sys.exit(2)
    eps = _epsilons(res)
    lo_e, hi_e = eps[0], eps[-1]
    pm = lambda mech, thr, e: _series(res, "predictive_mse", prior, mech, thr, e)  # noqa: E731
    pt = lambda mech, thr, e: _series(res, "prob_true_model", prior, mech, thr, e)  # noqa: E731
    lines = [f"Prior `{prior}`, file `{os.path.basename(path)}`, "
             f"{int(np.nanmax(res.summary['predictive_mse']['n_ok']))} data sets per cell.", ""]
    variants = [("none", 0, None)] + [(c, t, e) for e in eps for c in ("laplace", "wishart") for t in (0, 1)]
    # 1. PMSE decreases with n
    steps = down = ends = ends_down = 0
    for v in variants:
        for (_, (n, y)) in pm(*v).items():
            d = np.diff(y)
            steps += len(d)
            down += int(np.sum(d < 0))
            ends += 1
            ends_down += int(y[-1] < y[0])
    lines.append(f"1. PMSE decreases with n: {ends_down}/{ends} series lower at the largest n than at the smallest; "
                 f"{down}/{steps} consecutive steps decrease.")
    # 2. DP above non-private
    g = pm("none", 0, None)
    tot = above = 0
    for v in variants[1:]:
        for key, (n, y) in pm(*v).items():
            tot += len(y)
            above += int(np.sum(y > g[key][1]))
    lines.append(f"2. DP PMSE above non-private: {above}/{tot} (cell, DP variant) pairs.")
    # 3. epsilon 0.9 below 0.5
    tot = below = 0
    for c in ("laplace", "wishart"):
        for t in (0, 1):
            s_lo, s_hi = pm(c, t, lo_e), pm(c, t, hi_e)
            for key in s_lo:
                tot += len(s_lo[key][1])
                below += int(np.sum(s_hi[key][1] < s_lo[key][1]))
    lines.append(f"3. PMSE at epsilon {hi_e:g} below epsilon {lo_e:g}: {below}/{tot} (cell, mechanism, threshold) pairs.")
    # 4. Laplace below Wishart except p in {6, 9}, |T| = 0, small n (n <= 50 000)
    tot = lap = tot_x = wish_x = 0
    for e in eps:
        for t in (0, 1):
            sl, sw = pm("laplace", t, e), pm("wishart", t, e)
            for (p, tt), (n, y) in sl.items():
                exc = (p in (6, 9)) & (tt == 0) & (n <= 50000)
                yw = sw[(p, tt)][1]
                tot += int(np.sum(~exc))
                lap += int(np.sum((y < yw) & ~exc))
                tot_x += int(np.sum(exc))
                wish_x += int(np.sum((yw < y) & exc))
    lines.append(f"4. Laplace PMSE below Wishart outside the exception: {lap}/{tot}; inside the exception "
                 f"(p in {{6, 9}}, |T| = 0, n <= 50k) Wishart below Laplace: {wish_x}/{tot_x}.")
    # 5. thresholding: better at |T| = 0, worse at |T| = p with small n
    tot0 = better0 = totp = worsep = 0
    for e in eps:
        for c in ("laplace", "wishart"):
            s_nt, s_t = pm(c, 0, e), pm(c, 1, e)
            for (p, tt), (n, y) in s_nt.items():
                yt = s_t[(p, tt)][1]
                if tt == 0:
                    tot0 += len(y)
                    better0 += int(np.sum(yt < y))
                if tt == p:
                    small = n <= 50000
                    totp += int(np.sum(small))
                    worsep += int(np.sum((yt > y) & small))
    lines.append(f"5. Thresholded PMSE below non-thresholded at |T| = 0: {better0}/{tot0}; above it at |T| = p, "
                 f"n <= 50k: {worsep}/{totp}.")
    # 6. P(true model) increases with n, more slowly for larger p
    ends = up = 0
    for v in variants:
        for (_, (n, y)) in pt(*v).items():
            ends += 1
            up += int(y[-1] > y[0])
    lines.append(f"6. P(true model) higher at the largest n than at the smallest: {up}/{ends} series.")
    for v, name in [(("none", 0, None), "G (not DP)"), (("laplace", 0, hi_e), f"Lap Non-thresh, epsilon {hi_e:g}"),
                    (("wishart", 0, hi_e), f"Wish Non-thresh, epsilon {hi_e:g}")]:
        s = pt(*v)
        parts = []
        for (p, t), (n, y) in sorted(s.items()):
            if t == 0:
                continue
            parts.append(f"p={p},|T|={t}: " + " ".join(f"{x:.2f}" for x in y))
        lines.append(f"   - {name}, mean P(true model) over n = {', '.join(f'{x / 1000:g}k' for x in n)}: "
                     + "; ".join(parts))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", help="results files (.h5)")
    parser.add_argument("--out", default="results/figures", help="output folder")
    parser.add_argument("--claims", default=None, help="print the §5.2.1 claim checks for this prior instead")
    args = parser.parse_args()
    for path in args.results:
        check_results_file(path)
    if args.claims:
        for path in args.results:
            print("\n".join(check_claims(path, args.claims)))
        return
    for path in args.results:
        with figure_note(Results(path).incomplete_note()):
            for written in plot_file(path, args.out):
                print(written)


if __name__ == "__main__":
    main()
