"""Figures 1, 2, 6, 7 of Peña & Barrientos (2024) from dpmu results files.

Figures 1 and 6 (experiment ``hsb_posterior``): distribution of P*(H1|D) against epsilon; error
bars from the first to the third quartile with the median as the midpoint; dashed line = the
non-private posterior probability. Facets: rows = test (Figure 1) or censoring limits (Figure 6),
columns = M.

Figures 2 and 7 (experiment ``hsb_likelihood_ratio``): distribution of 2 log Lambda* against
delta; same error bars; grey "+" and triangle = corrected critical values at 0.01 and 0.05; black
ones = uncorrected. Facets: rows = test (Figure 2) or U (Figure 7, U = 10, 7, 2, 1 from top to
bottom as in the paper), columns = M; one figure per Gaussian calibration. Strips and axis labels
name the test (H11 / H12, P*(H11|D) / P*(H12|D), 2 log Λ*10,1 / 2 log Λ*10,2); the legend sits
below the panels; the title says what was simulated.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402


# Which hypothesis each test of the HSB configs is (PB §4.4): test 1 H01/H11, test 2 H02/H12.
TEST_NAMES = {"H1": ("H11", "math ~ 1 + female vs math ~ 1"), "H2": ("H12", "math ~ 1 + science + read vs math ~ 1 + science")}


def _rows(res, candidates):
    for name in candidates:
        if name in res.cells and len(res.values(name)) > 1:
            values = res.values(name)
            if name == "censor_upper":  # the paper's Figure 7: U = 10, 7, 2, 1 from top to bottom
                values = sorted(values, reverse=True)
            return name, values
    return None, [None]


def _test_of(res, idx):
    """'H1' or 'H2' of the cells idx (the test parameter; Figures 6 and 7 use test 2 only)."""
    return str(res.cells["test"][idx[0]]) if "test" in res.cells else "H2"


def _row_label(name, value, res, idx):
    if name is None or name == "test":
        return ""
    if name == "censor_lower":
        upper = res.cells["censor_upper"][idx[0]]
        return f"P({TEST_NAMES[_test_of(res, idx)][0]}|D) in [{value:g}, {upper:g}]"
    if name == "censor_upper":
        return f"U = {value:g}"
    return f"{value}"


def _ylabel(metric, test):
    h, _ = TEST_NAMES[test]
    if metric == "posterior_probability_h1":
        return f"P*({h} | D)"
    return f"2 log Λ*10,{h[-1]}"


def _study(res, x_name):
    """One line describing the study, for the figure's title (from the cells and the file)."""
    def one(name):
        vals = res.values(name) if name in res.cells else []
        return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in vals)
    parts = ["HSB2 (n = 200)"]
    if res.experiment == "hsb_posterior":
        prior = one("prior")
        parts.append(f"{prior} (g = b_i)" if prior == "g-prior" else prior)
        parts.append("Laplace noise")
    else:
        parts.append(f"likelihood ratio, L = 0, ε = {one('epsilon')}, Gaussian noise")
    parts.append(f"{res.replicates} random splits + noise per bar")
    return "; ".join(parts)


def plot_family(res, out_base, x_name, metric, title_stub, extra=None):
    extra = extra or {}
    row_name, row_values = _rows(res, ["test", "censor_lower", "censor_upper"])
    ms = res.values("num_subsets")
    fig, axes = plt.subplots(len(row_values), len(ms), figsize=(3.2 * len(ms), 2.6 * len(row_values) + 0.9),
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
            test = _test_of(res, idx)
            order = idx[np.argsort(res.cells[x_name][idx].astype(float))]
            pos = np.arange(len(order))
            med, q1, q3 = s["q500"][order], s["q250"][order], s["q750"][order]
            ax.errorbar(pos, med, yerr=[med - q1, q3 - med], fmt="o", color="black", ms=3, capsize=3,
                        label="median, Q1–Q3 of the releases")
            if metric == "posterior_probability_h1":
                npv = res.calibration["non_private_posterior_probability_h1"][order, 0]
                ax.axhline(npv[0], ls="--", color="grey", lw=1, label="non-private value")
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
                    ax.axhline(npl, ls="--", color="grey", lw=1, label="non-private value")
                else:
                    ax.annotate(f"non-private {npl:.1f} (above U)", xy=(0.02, 0.02), xycoords="axes fraction",
                                fontsize=6, color="grey")
            ax.set_xticks(pos)
            ax.set_xticklabels([f"{v:.2f}" for v in res.cells[x_name][order].astype(float)], fontsize=7)
            label = _row_label(row_name, rv, res, idx)
            strip = f"{TEST_NAMES[test][0]}: {TEST_NAMES[test][1]}" if row_name == "test" else label
            ax.set_title(f"{strip}\nM = {m}" if row_name == "test" else f"{strip}  M = {m}", fontsize=7 if
                         row_name == "test" else 8)
            if j == 0:
                ax.set_ylabel(_ylabel(metric, test))
    for ax in axes[-1]:
        ax.set_xlabel("ε" if x_name == "epsilon" else "δ")
    # one legend for the figure, below the panels, so that it covers neither titles nor data
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles.keys()), fontsize=7, loc="lower center",
               ncol=min(len(handles), 6), frameon=False)
    fig.suptitle(f"{title_stub}\n{_study(res, x_name)}", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return save_figure(fig, os.path.dirname(out_base), os.path.basename(out_base))


def plot_file(path, out_dir, name=None):
    """Draw the figure family of one results file; returns the written paths."""
    res = Results(path)
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    if res.experiment == "hsb_posterior":
        tests = res.values("test") if "test" in res.cells else ["H2"]
        which = " and ".join(f"P*({TEST_NAMES[t][0]}|D)" for t in tests)
        return plot_family(res, os.path.join(out_dir, name), "epsilon", "posterior_probability_h1",
                           f"DP posterior probabilities {which} (bars: first quartile, median, third quartile)")
    if res.experiment == "hsb_likelihood_ratio":
        tests = res.values("test") if "test" in res.cells else ["H2"]
        written = []
        for cal in res.values("gaussian_calibration"):
            suffix = "" if len(res.values("gaussian_calibration")) == 1 else f"_{cal}"
            written += plot_family(res, os.path.join(out_dir, name + suffix), "delta", "log_statistic",
                                   f"DP likelihood ratio {' and '.join(_ylabel('log_statistic', t) for t in tests)} "
                                   f"(bars: quartiles), Gaussian calibration: {cal}",
                                   extra={"gaussian_calibration": cal})
        return written
    raise ValueError(f"{path}: experiment {res.experiment} is not an HSB figure")


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
