"""Figure of a ``linear_design`` study (docs/linear-design.md): each method against n.

Panels (x axis: n, log scale; one line per analysis — bma, ssp_laplace / ssp_wishart at each ε
(thresholded ones marked), dp_test at each ε; bars are ±2 Monte Carlo standard errors):
  1. mean PIP of the predictors with nonzero coefficients (the true model);
  2. mean PIP of the predictors with zero coefficients;
  3. P(true model | data);
  4. predictive MSE (log scale);
  5. dp_test: rejection rate at α = 0.05 (corrected test for lr/bic/aic; for Bayesian statistics
     the released P*(H1 | D) averaged instead) — the power if H0 is false, the size if it is true.
Cells that differ in another data factor or method parameter (e.g. two predictor designs, or two
priors) get a panel row each. Also writes ``<name>_calibration.md`` (files with the calibration
metrics; docs/bma.md "Calibration metrics"): per bma / ssp_* cell and coefficient the coverage of the
true beta_j by the 50/80/95 % intervals and the mean 95 % width, and per cell the Brier score of the
PIPs, each ± its MC SE. Usage: fig_linear_design.py RESULTS.h5... [--out DIR].
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402

# parameters that never split the figure into rows (they are the x axis or the line)
LINE_KEYS = ("method", "epsilon", "thresholded")
IGNORED = {"n", "key", "cell_id", "cell_key", "data_id", "data_key"} | set(LINE_KEYS)


def _float(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def line_label(res, c):
    method = str(res.cells["method"][c])
    if method == "bma":
        return "bma (non-private)"
    label = f"{method} ε={_float(res.cells['epsilon'][c]):g}"
    if method.startswith("ssp") and "thresholded" in res.cells and int(res.cells["thresholded"][c]):
        label += " thresholded"
    return label


def row_keys(res):
    """Parameters other than n and the line keys whose value differs between cells."""
    keys = []
    for name in sorted(res.cells):
        if name in IGNORED or name.startswith("_"):
            continue
        column = res.cells[name]
        if column.ndim != 1:
            continue
        if len(set(column.tolist())) > 1:
            keys.append(name)
    return keys


PANELS = (
    ("mean_pip_active", "mean PIP, true predictors", False),
    ("mean_pip_inactive", "mean PIP, null predictors", False),
    ("prob_true_model", "P(true model | data)", False),
    ("predictive_mse", "predictive MSE", True),
    ("test", "dp_test: rejection rate (α = 0.05) or mean P*(H1|D)", False),
)


def panel_values(res, metric, cells):
    """Mean and MC SE of a scalar metric per cell (for 'test': the dp_test summary)."""
    if metric == "test":
        rej = res.summary["reject_corrected"]
        post = res.summary["posterior_probability_h1"]
        mean = np.where(np.isfinite(rej["mean"][cells, 0]), rej["mean"][cells, 0], post["mean"][cells])
        mcse = np.where(np.isfinite(rej["mean"][cells, 0]), rej["mcse"][cells, 0], post["mcse"][cells])
        return mean, mcse
    s = res.summary[metric]
    return s["mean"][cells], s["mcse"][cells]


def write_calibration_table(res, path):
    """Markdown table of the calibration metrics of every bma / ssp_* cell."""
    keys = [k for k in row_keys(res) if k != "method"]
    lines = ["| analysis | n | " + "".join(f"{k} | " for k in keys) + "coefficient | true beta | cover50 | cover80 | "
             "cover95 | width95 | Brier (cell) |", "|" + "---|" * (9 + len(keys))]
    order = sorted(range(res.n_cells), key=lambda c: (line_label(res, c), [str(res.cells[k][c]) for k in keys],
                                                       _float(res.cells["n"][c])))
    for c in order:
        if str(res.cells["method"][c]) == "dp_test":
            continue
        beta = np.asarray(res.cells["coefficients"][c].split(", ") if isinstance(res.cells["coefficients"][c], str)
                          else res.cells["coefficients"][c], dtype=float)
        labels = res.component_labels.get("cover95", np.array([[]]))[c]
        brier = res.summary["brier"]
        for j, label in enumerate(labels):
            if not np.isfinite(res.summary["cover95"]["mean"][c, j]):
                continue
            row = [line_label(res, c), str(int(_float(res.cells["n"][c])))] + [str(res.cells[k][c]) for k in keys]
            row += [str(label), f"{beta[j]:g}"]
            for lv in ("50", "80", "95"):
                sm = res.summary[f"cover{lv}"]
                row.append(f"{sm['mean'][c, j]:.3f} ± {sm['mcse'][c, j]:.3f}")
            row.append(f"{res.summary['width95']['mean'][c, j]:.4g}")
            row.append(f"{brier['mean'][c]:.4f} ± {brier['mcse'][c]:.4f}" if j == 0 else "")
            lines.append("| " + " | ".join(row) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def plot_file(path, out_dir, name=None):
    res = Results(path)
    if res.experiment != "linear_design":
        raise ValueError(f"{path}: not a linear_design file")
    name = name or os.path.splitext(os.path.basename(path))[0]
    keys = row_keys(res)
    rows = sorted({tuple(str(res.cells[k][c]) for k in keys) for c in range(res.n_cells)})
    # one block of 2 x 3 panels per row of cells: the five panels, then the legend
    fig, grid = plt.subplots(2 * len(rows), 3, figsize=(12.5, 6.4 * len(rows) + 0.6), squeeze=False)
    n_all = res.cells["n"].astype(float)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labels = sorted({line_label(res, c) for c in range(res.n_cells)},
                    key=lambda s: (not s.startswith("bma"), s))
    colour_of = {lab: colours[i % len(colours)] for i, lab in enumerate(labels)}
    for r, row in enumerate(rows):
        in_row = [c for c in range(res.n_cells) if tuple(str(res.cells[k][c]) for k in keys) == row]
        block = [grid[2 * r][0], grid[2 * r][1], grid[2 * r][2], grid[2 * r + 1][0], grid[2 * r + 1][1]]
        for ax, (metric, title, log_y) in zip(block, PANELS):
            drawn = False
            for lab in labels:
                cells = np.array([c for c in in_row if line_label(res, c) == lab], dtype=int)
                if cells.size == 0:
                    continue
                cells = cells[np.argsort(n_all[cells])]
                mean, mcse = panel_values(res, metric, cells)
                ok = np.isfinite(mean)
                if not ok.any():
                    continue
                err = 2 * np.nan_to_num(mcse[ok])
                lower = np.minimum(err, 0.9 * mean[ok]) if log_y else err  # keep log-scale bars positive
                ax.errorbar(n_all[cells][ok], mean[ok], yerr=[lower, err], marker="o", ms=3, lw=1, capsize=2,
                            color=colour_of[lab], label=lab)
                drawn = True
            heading = title if not keys else title + "\n" + ", ".join(f"{k}={v}" for k, v in zip(keys, row))
            if not drawn:
                # e.g. a row of dp_test cells has no PIPs: say so instead of an empty frame
                ax.text(0.5, 0.5, "no analysis in this row\nhas this metric", ha="center", va="center",
                        transform=ax.transAxes, fontsize=8, color="0.4")
                ax.set_xticks([])
                ax.set_yticks([])
                ax.set_title(heading, fontsize=8)
                continue
            ax.set_xscale("log")
            if log_y:
                ax.set_yscale("log")
            else:
                ax.set_ylim(-0.03, 1.03)
            ax.set_xlabel("n")
            ax.grid(lw=0.3)
            ax.set_title(heading, fontsize=8)
        legend_ax = grid[2 * r + 1][2]
        legend_ax.axis("off")
        handles, labs = [], []
        for ax in block:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labs:
                    handles.append(h)
                    labs.append(lab)
        legend_ax.legend(handles, labs, loc="center", fontsize=8, frameon=False, title="analysis")
    design = str(res.cells["predictors"][0]) if "predictors" in res.cells and "predictors" not in keys else ""
    error = str(res.cells["error"][0]) if "error" in res.cells and "error" not in keys else ""
    fig.suptitle(f"linear_design: {design}  error {error}\n{res.replicates} data sets per cell "
                 "(common random numbers across methods); bars ±2 MC SE", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / (6.4 * len(rows) + 0.6)))
    written = save_figure(fig, out_dir, name)
    if "cover95" in res.summary:
        written.append(write_calibration_table(res, os.path.join(out_dir, f"{name}_calibration.md")))
    return written


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
