"""Type-I error calibration plot: empirical vs nominal rejection rates of DP tests under H0.

Each cell of a ``type1_calibration`` results file gives two points per significance level: the
rejection rate with corrected (simulated) critical values and with uncorrected (chi-square) ones,
with +-3 Monte Carlo standard errors. The band around the diagonal is +-3 binomial MC SEs.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402

LEVELS = (0.05, 0.01)


def plot_file(path, out_dir, name=None):
    res = Results(path)
    if res.experiment != "type1_calibration":
        raise ValueError(f"{path}: not a type1_calibration file")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for k, alpha in enumerate(LEVELS):
        ax = axes[k]
        for metric, colour, label in (("reject_corrected", "tab:blue", "corrected"),
                                      ("reject_corrected_randomized", "tab:green", "corrected, randomized at T* = U"),
                                      ("reject_uncorrected", "tab:red", "uncorrected (χ²)")):
            if metric not in res.summary:
                continue
            mean = res.summary[metric]["mean"][:, k]
            mcse = res.summary[metric]["mcse"][:, k]
            x = np.arange(res.n_cells)
            ax.errorbar(x, mean, yerr=3 * mcse, fmt="o", ms=3, color=colour, label=label, alpha=0.8)
        n_ok = res.summary["reject_corrected"]["n_ok"][:, k].astype(float)
        band = 3 * np.sqrt(alpha * (1 - alpha) / np.maximum(n_ok, 1))
        ax.fill_between(np.arange(res.n_cells), alpha - band, alpha + band, color="grey", alpha=0.3,
                        label="nominal ± 3 MC SE")
        ax.axhline(alpha, color="black", lw=1)
        ax.set_xlabel("cell")
        ax.set_ylabel("empirical type-I error")
        ax.set_title(f"α = {alpha}")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.legend(fontsize=7)
    fig.suptitle("Type-I error of DP tests under H0: corrected vs uncorrected critical values")
    fig.tight_layout()
    return save_figure(fig, out_dir, name)


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
