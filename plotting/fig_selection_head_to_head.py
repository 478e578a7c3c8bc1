"""Head-to-head: probability of selecting the true model, LCSSF vs SSP vs non-private BIC.

Panels by epsilon, x = n (log scale), y = proportion of data sets whose selected model is the
truth, one line per method, +-2 Monte Carlo SE bars. LCSSF curves use the best phi of the grid
(oracle tuning, which favours LCSSF); dashed LCSSF lines are the LCSSF-accuracy calibration
(lcssf_delta = 1pR_2, kappa = 1: not DP for r > 1). SSP and BIC come from the default block.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, check_results_file, figure_note, save_figure  # noqa: E402

LCSSF = [("lcssf_algorithm1", "LCSSF Alg. 1"), ("lcssf_algorithm2", "LCSSF Alg. 2-like")]
SSP = [("ssp_laplace", "SSP Laplace"), ("ssp_laplace_thresholded", "SSP Laplace thr."),
       ("ssp_wishart", "SSP Wishart"), ("ssp_wishart_thresholded", "SSP Wishart thr.")]


def _mean_se(res, metric, c):
    return float(np.ravel(res.summary[metric]["mean"][c])[0]), float(np.ravel(res.summary[metric]["mcse"][c])[0])


def best_phi(res, c):
    """Largest mean over the phi grid of ``correct_per_penalty`` in cell c, with its MC SE."""
    mean = res.summary["correct_per_penalty"]["mean"][c]
    k = int(np.nanargmax(mean))
    return mean[k], res.summary["correct_per_penalty"]["mcse"][c][k]


def table(path):
    """Rows (epsilon, n, method, mean, mcse) of a selection_head_to_head file; cells are selected by
    their ``method`` axis (and ``lcssf_delta`` for the two LCSSF calibrations)."""
    res = Results(path)
    if res.experiment != "selection_head_to_head":
        raise ValueError(f"{path}: not a selection_head_to_head file")
    if "method" not in res.cells:
        raise ValueError(f"{path}: a selection_head_to_head file without the method axis (written before "
                         "2026-12-01); re-run its config")
    rows = []
    for eps in res.values("epsilon"):
        for n in res.values("n"):
            for cal, tag in (("r2_1pR2", ""), ("1pR_2", " [1pR_2, κ=1]")):
                for method, label in LCSSF:
                    idx = res.select(epsilon=eps, n=n, lcssf_delta=cal, method=method)
                    if len(idx):
                        m, s = best_phi(res, idx[0])
                        rows.append((eps, n, label + tag, m, s))
            for method, label in SSP:
                idx = res.select(epsilon=eps, n=n, lcssf_delta="r2_1pR2", method=method)
                if len(idx):
                    for metric, est in (("hpm_correct", "HPM"), ("mpm_correct", "MPM")):
                        m, s = _mean_se(res, metric, idx[0])
                        rows.append((eps, n, f"{label} {est}", m, s))
            idx = res.select(epsilon=eps, n=n, lcssf_delta="r2_1pR2", method="bic_best_subset")
            if len(idx):
                m, s = _mean_se(res, "hpm_correct", idx[0])
                rows.append((eps, n, "BIC (non-private)", m, s))
    return rows


def plot_file(path, out_dir, name=None):
    """Write PNG and PDF of the head-to-head figure; return the paths."""
    rows = table(path)
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    eps_values = sorted({r[0] for r in rows})
    methods = list(dict.fromkeys(r[2] for r in rows))
    fig, axes = plt.subplots(1, len(eps_values), figsize=(4 * len(eps_values), 5.0), sharey=True, squeeze=False)
    for j, eps in enumerate(eps_values):
        ax = axes[0, j]
        for method in methods:
            pts = sorted((r[1], r[3], r[4]) for r in rows if r[0] == eps and r[2] == method and np.isfinite(r[3]))
            if not pts:
                continue
            n, m, s = map(np.array, zip(*pts))
            style = "--" if "1pR_2" in method else ("-." if "BIC" in method else "-")
            colour = plt.get_cmap("tab20")(methods.index(method) % 20)  # same colour in every panel
            ax.errorbar(n, m, yerr=2 * s, fmt=style, marker="o", ms=3, lw=1, label=method, color=colour)
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"ε = {eps:g}")
        ax.set_xlabel("n")
        if j == 0:
            ax.set_ylabel("P(selected model = truth)")
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    handles["bars: ±2 MC SE"] = plt.Line2D([], [], color="grey", marker="|", ls="none", ms=8)
    fig.legend(list(handles.values()), list(handles.keys()), fontsize=6, loc="lower center", ncol=5,
               frameon=False)  # below the panels
    res = Results(path)
    fig.suptitle("Selecting the true model: LCSSF (best φ, reconstructed constants) vs SSP model averaging\n"
                 f"LCSSF §5 design, model 1 β0 = (1,1,1,0,0,0); {res.replicates} simulated data sets per n, the same "
                 "for every method", fontsize=9)
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    return save_figure(fig, out_dir, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--out", default="results/figures")
    parser.add_argument("--table", action="store_true", help="print the numbers as a markdown table")
    args = parser.parse_args()
    for path in args.results:
        res = check_results_file(path)
        with figure_note(res.incomplete_note()):
            for p in plot_file(path, args.out):
                print(p)
        if args.table:
            for r in table(path):
                print(f"| {r[0]:g} | {r[1]} | {r[2]} | {r[3]:.3f} ± {r[4]:.3f} |")


if __name__ == "__main__":
    main()
