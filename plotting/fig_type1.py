"""Type-I error calibration plot: empirical vs nominal rejection rates of DP tests under H0.

One row per named cell of a ``type1_calibration`` results file (statistic, n, p, p0, M, ε, δ,
censoring limits), one panel per significance level, on a linear axis of rejection rates (no
negative rates can appear). Markers: the corrected test (reject iff T* > c), the corrected test
randomized at the atom T* = U, and uncorrected chi-square critical values; bars are ±2 Monte
Carlo standard errors of each rate; the grey band is α ± 2 binomial MC SEs.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402

LEVELS = (0.05, 0.01)
NAMES = [("prior", "{}"), ("n", "n={}"), ("p", "p={}"), ("p0", "p0={}"), ("num_subsets", "M={}"),
         ("epsilon", "ε={:g}"), ("delta", "δ={:g}"), ("censor_upper", "U={:g}")]


def cell_names(res):
    """A short name per cell from its parameters (those that vary, plus the statistic)."""
    names = []
    for c in range(res.n_cells):
        parts = []
        for key, fmt in NAMES:
            if key not in res.cells or (key != "prior" and len(res.values(key)) < 2):
                continue
            v = res.cells[key][c]
            parts.append(fmt.format(float(v) if "g" in fmt else v))
        names.append(" ".join(parts))
    return names


def plot_file(path, out_dir, name=None):
    res = Results(path)
    if res.experiment != "type1_calibration":
        raise ValueError(f"{path}: not a type1_calibration file")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    labels = cell_names(res)
    y = np.arange(res.n_cells)[::-1]
    fig, axes = plt.subplots(1, 2, figsize=(11, 1.2 + 0.115 * res.n_cells), sharey=True, squeeze=False)
    for k, alpha in enumerate(LEVELS):
        ax = axes[0][k]
        n_ok = res.summary["reject_corrected"]["n_ok"][:, k].astype(float)
        band = 2 * np.sqrt(alpha * (1 - alpha) / np.maximum(n_ok, 1))
        ax.fill_betweenx(y, alpha - band, alpha + band, color="grey", alpha=0.3, step="mid",
                         label="α ± 2 MC SE")
        ax.axvline(alpha, color="black", lw=0.8)
        for metric, colour, marker, label in (
                ("reject_corrected", "tab:blue", "o", "corrected (reject iff T* > c)"),
                ("reject_corrected_randomized", "tab:green", "s", "corrected, randomized at T* = U"),
                ("reject_uncorrected", "tab:red", "x", "uncorrected (χ²)")):
            if metric not in res.summary:
                continue
            mean = res.summary[metric]["mean"][:, k]
            mcse = res.summary[metric]["mcse"][:, k]
            ax.errorbar(mean, y, xerr=2 * mcse, fmt=marker, ms=2.5, color=colour, elinewidth=0.6,
                        label=f"{label}, ±2 MC SE", alpha=0.85)
        ax.set_xlim(left=0)
        ax.set_xlabel("empirical type-I error (rejection rate under H0)")
        ax.set_title(f"α = {alpha}", fontsize=9)
        ax.grid(axis="x", lw=0.3)
    axes[0][0].set_yticks(y)
    axes[0][0].set_yticklabels(labels, fontsize=5)
    axes[0][0].set_ylim(-1, res.n_cells)
    handles, labs = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labs, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle("Type-I error of DP tests on data simulated under H0 (PB §4.3): corrected vs uncorrected critical "
                 f"values\n{res.replicates} data sets per cell", fontsize=9)
    fig.tight_layout(rect=(0, 0.6 / (1.2 + 0.115 * res.n_cells), 1, 1))
    return save_figure(fig, out_dir, name)


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
