"""Figures 3, 4, 8, 9 of Peña & Barrientos (2024) from ``ssp_simulation`` results files.

Figure 3 (Zellner-Siow) / 8 (BIC): Monte Carlo mean of the predictive MSE against n (thousands),
both axes on log scales. Figure 4 (ZS) / 9 (BIC): mean posterior probability of the true model.
Facets as the paper draws them: rows = p = 9, 6, 2 top to bottom, columns = the three |T| values
of that p, one y-scale per figure (``--per-panel-y`` for one per panel). Colour = method and
mechanism (G (not DP), Lap Non-thresh, Wish Non-thresh, Lap Thresh, Wish Thresh); line type =
epsilon. Cells are selected by their axis values (mechanism, thresholded, epsilon, prior). The x
position is the simulated number of rows (``/calibration/simulated_n``), so quick runs with
``n_scale < 1`` are drawn where they were simulated. Error bars: +-2 MC SEs of the mean (labelled
in the legend). The claims of §5.2.1 are checked by plotting/claims.py, not here.
"""
import argparse
import os
import textwrap

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
    ("adassp", 0, "AdaSSP (baseline; PMSE only)", "tab:purple"),  # configs/head_to_head_pmse.yaml
    ("adassp-bma", 0, "AdaSSP plug-in BMA (with y'y)", "tab:brown"),
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


PRIOR_NAMES = {"zellner_siow": "Zellner-Siow prior", "zellner-siow": "Zellner-Siow prior", "bic": "BIC"}


def _study_caption(res):
    """The design in words (PB §5.2.1): from the file's parameters and calibration outputs."""
    lower = res.cells["lower"][0] if "lower" in res.cells else -2
    upper = res.cells["upper"][0] if "upper" in res.cells else 2
    gen = str(res.cells["generator"][0]) if "generator" in res.cells else "rows"
    z = res.cells["signal_z"][0] if "signal_z" in res.cells else 7
    return (f"x ~ U({lower:g}, {upper:g}), beta_j = 1/({z:g} sqrt|T|) on the |T| active predictors, SNR 1/2; "
            f"Laplace (epsilon-DP) / Wishart ((epsilon, 1/n)-DP) noise on the Gram matrix; "
            + ("AdaSSP ((epsilon, 1/n)-DP, ridge point estimate); " if "adassp" in res.values("mechanism") else "")
            + f"data: {gen.replace('_', ' ')} generator")


def plot_metric(res, metric, prior, ylabel, log_y, title, out_base, shared_y=True):
    """Draw one figure (rows p = 9, 6, 2 top to bottom as in the paper; columns the |T| values of
    that p) of ``metric`` for one prior, with one y-scale for all panels (``shared_y``; the
    paper's facets share one) or one per panel. Error bars are +-2 MC SE of the mean (clipped
    at the axis on a log scale). Returns the written paths."""
    ps = sorted(res.values("p"), reverse=True)
    mean = res.summary[metric]["mean"]
    mcse = res.summary[metric]["mcse"]
    epsilons = _epsilons(res)
    ncol = max(len(set(res.cells["true_model_size"][res.select(p=p)].tolist())) for p in ps)
    width = max(3.3 * ncol, 7.0)  # a one-column file (a head to head) still has room for its legend
    fig, axes = plt.subplots(len(ps), ncol, figsize=(width, 2.7 * len(ps) + 0.6), sharex=True,
                             sharey="all" if shared_y else False, squeeze=False)
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
                    se = np.nan_to_num(mcse[idx])
                    ok = np.isfinite(y) & ((y > 0) if log_y else True)
                    ls = "-" if eps is None else LINESTYLES[e_i % len(LINESTYLES)]
                    ax.plot(n_k[ok], y[ok], ls, color=colour, lw=1.2, marker="o", ms=2.5)
                    lo = 2 * se[ok]
                    if log_y:  # a bar reaching 0 is drawn down to a tenth of the mean
                        lo = np.minimum(lo, 0.9 * y[ok])
                    ax.errorbar(n_k[ok], y[ok], yerr=np.vstack([lo, 2 * se[ok]]), fmt="none", ecolor=colour,
                                elinewidth=0.6, alpha=0.6, capsize=1.5)
                    handles.setdefault(label, plt.Line2D([], [], color=colour, lw=1.5))
                    if eps is not None:
                        handles.setdefault(f"ε = {eps:g}", plt.Line2D([], [], color="grey", ls=ls, lw=1.2))
            ax.set_xscale("log")
            if log_y:
                ax.set_yscale("log")
            else:
                ax.set_ylim(-0.03, 1.03)
            ax.set_title(f"p = {p}, |T| = {t}", fontsize=9)
            ax.tick_params(labelsize=7, labelleft=True)
            if r == len(ps) - 1:
                ax.set_xlabel("n (thousands)", fontsize=8)
            if c == 0:
                ax.set_ylabel(ylabel, fontsize=8)
        for c in range(len(ts), ncol):
            axes[r][c].set_visible(False)
    handles["bars: ±2 MC SE of the mean"] = plt.Line2D([], [], color="grey", lw=0.6, marker="|", ms=6)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=5 if ncol > 1 else 3,
               fontsize=7, frameon=False)
    reps = int(np.nanmax(res.summary[metric]["n_ok"])) if "n_ok" in res.summary[metric] else None
    scale = "one y-scale for all panels" if shared_y else "a y-scale per panel"
    caption = textwrap.fill(_study_caption(res), width=int(12 * width))
    fig.suptitle(title + (f" ({reps} data sets per cell; {scale})" if reps else f" ({scale})") + "\n" + caption,
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 0.93))
    return save_figure(fig, os.path.dirname(out_base) or ".", os.path.basename(out_base))


def plot_file(path, out_dir, name=None, shared_y=True):
    """Draw Figures 3/4 (ZS) and 8/9 (BIC) for each prior in the file; returns the written paths."""
    res = Results(path)
    if res.experiment != "ssp_simulation":
        raise ValueError(f"{path}: experiment {res.experiment} is not ssp_simulation")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    written = []
    # a file with the AdaSSP baseline is our head to head (configs/head_to_head_pmse.yaml), not a
    # figure of the paper: no figure numbers
    paper = not {"adassp", "adassp-bma"} & set(res.values("mechanism"))
    for prior in _priors(res):
        f_pmse, f_true = FIGURE_NUMBERS.get(prior, (None, None)) if paper else (None, None)
        tag_pmse = f"fig{f_pmse}" if f_pmse else f"pmse_{prior}"
        tag_true = f"fig{f_true}" if f_true else f"prob_true_model_{prior}"
        what = PRIOR_NAMES.get(prior, f"prior {prior}")
        fig_pmse = f"Figure {f_pmse} (PB §5.2.1): " if f_pmse else ""
        fig_true = f"Figure {f_true} (PB §5.2.1): " if f_true else ""
        written += plot_metric(res, "predictive_mse", prior, "PMSE", True, f"{fig_pmse}predictive MSE, {what}",
                               os.path.join(out_dir, f"{name}_{tag_pmse}"), shared_y)
        written += plot_metric(res, "prob_true_model", prior, "P(true model | D)", False,
                               f"{fig_true}posterior probability of the true model, {what}",
                               os.path.join(out_dir, f"{name}_{tag_true}"), shared_y)
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", help="results files (.h5)")
    parser.add_argument("--out", default="results/figures", help="output folder")
    parser.add_argument("--per-panel-y", action="store_true",
                        help="a y-scale per panel (default: one per figure, as the paper's facets)")
    args = parser.parse_args()
    for path in args.results:
        check_results_file(path)
    for path in args.results:
        with figure_note(Results(path).incomplete_note()):
            for written in plot_file(path, args.out, shared_y=not args.per_panel_y):
                print(written)


if __name__ == "__main__":
    main()
