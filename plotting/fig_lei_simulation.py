"""LCSSF Figures 1-2: proportion of correct selections of Algorithm 1 against the penalty phi.

One figure per (beta_model, calibration): panels by n (rows) and R (columns), one line per
epsilon, as in Lei et al. (2018) Figures 1-2. Shaded bands are +-2 Monte Carlo standard errors.
Every figure is labelled with its calibration (lcssf_delta, kappa, c), which are reconstructions
(docs/methods.md §6, A21).
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402


def plot_file(path, out_dir, name=None):
    """Write one PNG and PDF per (beta_model, calibration) of a ``lei_simulation`` file.

    Parameters
    ----------
    path : str
        Results file of the ``lei_simulation`` experiment.
    out_dir : str
        Output folder.
    name : str, optional
        File name stem (default: the results file's stem).

    Returns
    -------
    list of str
        Paths written.
    """
    res = Results(path)
    if res.experiment != "lei_simulation":
        raise ValueError(f"{path}: not a lei_simulation file")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    written = []
    calibrations = sorted({(d, float(k), float(c)) for d, k, c in zip(
        res.cells["lcssf_delta"], res.cells["noise_factor"], res.cells["objective_scale"])})
    for model in res.values("beta_model"):
        for delta_kind, kappa, scale in calibrations:
            ns = res.values("n")
            radii = res.values("radius")
            fig, axes = plt.subplots(len(ns), len(radii), figsize=(3.2 * len(radii), 2.8 * len(ns)),
                                     squeeze=False, sharey=True)
            for i, n in enumerate(ns):
                for j, radius in enumerate(radii):
                    ax = axes[i, j]
                    for epsilon in res.values("epsilon"):
                        idx = res.select(beta_model=model, lcssf_delta=delta_kind, noise_factor=kappa,
                                         objective_scale=scale, n=n, radius=radius, epsilon=epsilon)
                        if len(idx) == 0:
                            continue
                        c = idx[0]
                        phi = res.summary["penalty"]["mean"][c]
                        mean = res.summary["prob_true_model"]["mean"][c]
                        mcse = res.summary["prob_true_model"]["mcse"][c]
                        line, = ax.plot(phi, mean, lw=1.2, label=f"ε = {epsilon:g}")
                        ax.fill_between(phi, mean - 2 * mcse, mean + 2 * mcse, color=line.get_color(), alpha=0.2)
                    ax.set_ylim(-0.02, 1.02)
                    ax.set_title(f"n = {n}, R = {radius:g}", fontsize=9)
                    if i == len(ns) - 1:
                        ax.set_xlabel("φ")
                    if j == 0:
                        ax.set_ylabel("proportion correct")
            handles, labels = axes[0, 0].get_legend_handles_labels()
            handles.append(plt.Rectangle((0, 0), 1, 1, color="grey", alpha=0.2))
            labels.append("shaded: ±2 MC SE")
            fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=len(labels), frameon=False)
            beta = "(1, 1, 1, 0, 0, 0)" if model == "model1" else "(1.5, 1, 0.5, 0, 0, 0)"
            fig.suptitle(f"LCSSF Algorithm 1, {model} β0 = {beta}: proportion of {res.replicates} data sets whose "
                         f"selected model is the truth\nlcssf_delta = {delta_kind}, κ = {kappa:g}, c = {scale:g} "
                         "(reconstructed constants, docs/methods.md §6)", fontsize=9)
            fig.tight_layout(rect=(0, 0.04, 1, 1))
            stem = f"{name}_{model}_{delta_kind}_k{kappa:g}_c{scale:g}"
            written += save_figure(fig, out_dir, stem)
    return written


def main():
    plot_main(plot_file, __doc__.split("\n")[0])


if __name__ == "__main__":
    main()
