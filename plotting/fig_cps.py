"""Figure 5 of Peña & Barrientos (2024, §5.2.2) from a dpmu results file (experiment ``cps_bma``).

Rows: mechanisms (Laplace, Wishart); columns: the coefficients of ``histogram_coefficients``
(paper: beta_1, beta_3, beta_4). Each panel is the averaged density histogram of the §5.1
approximate 95% confidence sets of T(G) = E(beta_j | G) over the runs (paper's Hist formula:
d_k = mean over runs of the run's densities, on the cell's fixed bins). Vertical lines: solid =
non-private posterior mean, dashed = average non-thresholded DP estimate, dotted = average
thresholded DP estimate. Also writes ``<name>_numbers.txt`` with the plotted numbers and, for files
with the calibration metrics (docs/bma.md "Calibration metrics"), ``<name>_calibration.md``: per
mechanism and coefficient the coverage of the non-private posterior mean by the private 50/80/95 %
intervals of G*_r and G**_r and the Brier score of the private PIPs against the non-private ones,
each ± its MC SE.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402


def _finite(v):
    v = np.asarray(v, dtype=float)
    return v[np.isfinite(v)]


def plot_file(path, out_dir, name=None):
    """Draw Figure 5 for one results file; returns the written paths."""
    res = Results(path)
    if res.experiment != "cps_bma":
        raise ValueError(f"{path}: experiment {res.experiment} is not cps_bma")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    mechanisms = [m for m in ("laplace", "wishart") if m in res.values("mechanism")]
    cal = res.calibration
    coefs = _finite(cal["histogram_coefficients"][0]).astype(int)
    m = len(coefs)
    fig, axes = plt.subplots(len(mechanisms), m, figsize=(3.6 * m, 3.0 * len(mechanisms)), squeeze=False)
    lines = [f"# {path}: averaged Figure 5 numbers (rescaled units)"]
    for r, mech in enumerate(mechanisms):
        idx = res.select(mechanism=mech)
        if len(idx) != 1:
            raise ValueError(f"{path}: expected one cell for mechanism {mech}, found {len(idx)}")
        c = idx[0]
        edges_all = _finite(cal["histogram_edges"][c])
        k = len(edges_all) // m - 1
        dens_all = res.summary["confidence_set_density"]["mean"][c]
        non_private = cal["non_private_posterior_mean"][c]
        dp_nt = res.summary["posterior_mean_non_thresholded"]["mean"][c]
        dp_t = res.summary["posterior_mean_thresholded"]["mean"][c]
        n_ok = int(np.nanmin(res.summary["confidence_set_density"]["n_ok"][c]))
        lo = res.summary["confidence_set_lower"]["mean"][c]
        hi = res.summary["confidence_set_upper"]["mean"][c]
        outside = res.summary["confidence_set_outside_bins"]["mean"][c]
        for i, j in enumerate(coefs):
            ax = axes[r][i]
            edges = edges_all[i * (k + 1):(i + 1) * (k + 1)]
            dens = dens_all[i * k:(i + 1) * k]
            ax.stairs(dens, edges, fill=True, color="0.8", edgecolor="0.3", linewidth=0.6)
            ax.axvline(non_private[j - 1], color="k", linestyle="-", linewidth=1.2)
            ax.axvline(dp_nt[j - 1], color="k", linestyle="--", linewidth=1.2)
            ax.axvline(dp_t[j - 1], color="k", linestyle=":", linewidth=1.5)
            ax.set_xlabel(f"posterior expected value of β{j}")
            ax.set_ylabel("density")
            ax.set_title(f"{mech.capitalize()} mechanism", fontsize=10)
            lines.append(f"{mech} beta{j}: non_private={non_private[j - 1]:.6g} dp_non_thresholded={dp_nt[j - 1]:.6g} "
                         f"dp_thresholded={dp_t[j - 1]:.6g} mean_interval=[{lo[i]:.6g}, {hi[i]:.6g}] "
                         f"mean_width={hi[i] - lo[i]:.6g} outside_bins={outside[i]:.3g} runs={n_ok}")
        pip_np = cal["non_private_pip"][c]
        pip_nt = res.summary["pip_non_thresholded"]["mean"][c]
        pip_t = res.summary["pip_thresholded"]["mean"][c]
        p = len(_finite(pip_np))
        lines.append(f"{mech} PIP non_private=" + " ".join(f"{v:.4g}" for v in pip_np[:p]))
        lines.append(f"{mech} PIP dp_non_thresholded(mean)=" + " ".join(f"{v:.4g}" for v in pip_nt[:p]))
        lines.append(f"{mech} PIP dp_thresholded(mean)=" + " ".join(f"{v:.4g}" for v in pip_t[:p]))
        lines.append(f"{mech} posterior_mean non_private=" + " ".join(f"{v:.6g}" for v in non_private[:p]))
    preds = str(res.cells["predictors"][0]) if "predictors" in res.cells else ""
    age2 = next((t.split("=", 1)[1].strip() for t in preds.split(";") if t.strip().startswith("age_squared")), "?")
    rescale = str(res.cells["rescale"][0]) if "rescale" in res.cells else ""
    fig.suptitle(f"CPS (cps09mar substitute data): averaged 95% confidence-set histograms of E(β_j | G), "
                 f"{res.values('prior')[0] if 'prior' in res.cells else ''}, ε = {res.values('epsilon')[0]:g}, "
                 f"{res.replicates} runs\nage² = {age2}; rescaling: {rescale}. Lines: solid = non-private; "
                 "dashed = non-thresholded DP; dotted = thresholded DP (averages over runs)", fontsize=8)
    fig.tight_layout()
    written = save_figure(fig, out_dir, name, dpi=150)
    txt = os.path.join(out_dir, f"{name}_numbers.txt")
    with open(txt, "w") as f:
        f.write("\n".join(lines) + "\n")
    written.append(txt)
    if "cover95_non_thresholded" in res.summary:
        written.append(write_calibration_table(res, os.path.join(out_dir, f"{name}_calibration.md")))
    return written


def write_calibration_table(res, path):
    """Markdown table of the calibration against the non-private fit, per mechanism and coefficient."""
    lines = ["| mechanism | analysis | coefficient | non-private PIP | non-private mean | cover50 | cover80 | cover95 | "
             "width95 | Brier (cell) | runs |", "|" + "---|" * 11]
    for c in range(res.n_cells):
        npm = np.asarray(res.calibration["non_private_posterior_mean"][c], dtype=float)
        npp = np.asarray(res.calibration["non_private_pip"][c], dtype=float)
        labels = res.component_labels["cover95_non_thresholded"][c]
        for t, what in (("_non_thresholded", "G*_r"), ("_thresholded", "G**_r")):
            brier = res.summary["brier" + t]
            for j, label in enumerate(labels):
                row = [str(res.cells["mechanism"][c]), what, str(label), f"{npp[j]:.4f}", f"{npm[j]:.4g}"]
                for lv in ("50", "80", "95"):
                    sm = res.summary[f"cover{lv}{t}"]
                    row.append(f"{sm['mean'][c, j]:.3f} ± {sm['mcse'][c, j]:.3f}")
                row.append(f"{res.summary['width95' + t]['mean'][c, j]:.4g}")
                row.append(f"{brier['mean'][c]:.4f} ± {brier['mcse'][c]:.4f}" if j == 0 else "")
                row.append(str(int(brier["n_ok"][c])))
                lines.append("| " + " | ".join(row) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
