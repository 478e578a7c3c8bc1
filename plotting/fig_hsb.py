"""Figures 1, 2, 6, 7 of Peña & Barrientos (2024) from dpmu results files.

Figures 1 and 6 (experiment ``hsb_posterior``): distribution of P*(H1|D) against epsilon; error
bars from the first to the third quartile with the median as the midpoint; dashed line = the
non-private posterior probability. Facets: rows = test (Figure 1) or censoring limits (Figure 6),
columns = M.

Figures 2 and 7 (experiment ``hsb_likelihood_ratio``): distribution of 2 log Lambda* against
delta; same error bars; grey "+" and triangle = corrected critical values at 0.01 and 0.05; black
ones = uncorrected. Facets: rows = test (Figure 2) or U (Figure 7), columns = M; one figure per
Gaussian calibration.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402


def _rows(res, candidates):
    for name in candidates:
        if name in res.cells and len(res.values(name)) > 1:
            return name, res.values(name)
    return None, [None]


def _row_label(name, value, res, idx):
    if name is None:
        return ""
    if name == "censor_lower":
        upper = res.cells["censor_upper"][idx[0]]
        return f"P(H1|D) in [{value:g}, {upper:g}]"
    if name == "censor_upper":
        return f"U = {value:g}"
    return f"{value}"


def plot_family(res, out_base, x_name, metric, ylabel, title_stub, extra=None):
    extra = extra or {}
    row_name, row_values = _rows(res, ["test", "censor_lower", "censor_upper"])
    ms = res.values("num_subsets")
    fig, axes = plt.subplots(len(row_values), len(ms), figsize=(3.2 * len(ms), 2.6 * len(row_values)),
                             sharex=True, sharey=True, squeeze=False)
    s = res.summary[metric]
    for i, rv in enumerate(row_values):
        for j, m in enumerate(ms):
            ax = axes[i][j]
            cond = dict(extra, num_subsets=m)
            if row_name is not None:
                cond[row_name] = rv
            idx = res.select(**cond)
            if len(idx) == 0:
                ax.set_visible(False)
                continue
            order = idx[np.argsort(res.cells[x_name][idx].astype(float))]
            pos = np.arange(len(order))
            med, q1, q3 = s["q500"][order], s["q250"][order], s["q750"][order]
            ax.errorbar(pos, med, yerr=[med - q1, q3 - med], fmt="o", color="black", ms=3, capsize=3)
            if metric == "posterior_probability_h1":
                npv = res.calibration["non_private_posterior_probability_h1"][order, 0]
                ax.axhline(npv[0], ls="--", color="grey", lw=1)
                ax.set_ylim(-0.02, 1.02)
            else:
                cc = res.calibration["critical_value_corrected"][order]
                cu = res.calibration["critical_value_uncorrected"][order]
                ax.plot(pos, cc[:, 1], "+", color="grey", ms=9, label="corrected 0.01")
                ax.plot(pos, cc[:, 0], "^", color="grey", ms=5, label="corrected 0.05")
                ax.plot(pos, cu[:, 1], "+", color="black", ms=9, label="uncorrected 0.01")
                ax.plot(pos, cu[:, 0], "^", color="black", ms=5, mfc="none", label="uncorrected 0.05")
                npl = res.calibration["non_private_log_statistic"][order, 0][0]
                upper = res.calibration["censoring_limits"][order, 1].max()
                if npl <= upper:
                    ax.axhline(npl, ls="--", color="grey", lw=1)
                else:
                    ax.annotate(f"non-private {npl:.1f} (above U)", xy=(0.02, 0.02), xycoords="axes fraction",
                                fontsize=6, color="grey")
            ax.set_xticks(pos)
            ax.set_xticklabels([f"{v:.2f}" for v in res.cells[x_name][order].astype(float)], fontsize=7)
            label = _row_label(row_name, rv, res, idx)
            ax.set_title(f"{label}  M = {m}".strip(), fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("ε" if x_name == "epsilon" else "δ")
    for row in axes:
        row[0].set_ylabel(ylabel)
    if metric != "posterior_probability_h1":
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, fontsize=7, loc="upper right", ncol=4)
    fig.suptitle(title_stub, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, os.path.dirname(out_base), os.path.basename(out_base))


def plot_file(path, out_dir, name=None):
    """Draw the figure family of one results file; returns the written paths."""
    res = Results(path)
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    if res.experiment == "hsb_posterior":
        return plot_family(res, os.path.join(out_dir, name), "epsilon", "posterior_probability_h1", "P*(H1 | D)",
                           "DP posterior probability (quartiles; dashed: non-private)")
    if res.experiment == "hsb_likelihood_ratio":
        written = []
        for cal in res.values("gaussian_calibration"):
            suffix = "" if len(res.values("gaussian_calibration")) == 1 else f"_{cal}"
            written += plot_family(res, os.path.join(out_dir, name + suffix), "delta", "log_statistic",
                                   "2 log Λ*", f"DP likelihood ratio, Gaussian calibration: {cal}",
                                   extra={"gaussian_calibration": cal})
        return written
    raise ValueError(f"{path}: experiment {res.experiment} is not an HSB figure")


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
