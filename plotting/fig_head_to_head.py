"""Head to head of the DP nested tests: PB's subsample-and-aggregate test, the Test of Tests and the DP F-test.

configs/head_to_head.yaml and configs/head_to_head_hsb.yaml (the HSB design; docs/methods.md §4, §11): rows = number of tested predictors q, columns = epsilon;
x = n (log scale), y = rejection rate at alpha, one line per method and effect size (solid: power at the
largest effect, dashed: the smaller effect, dotted: type-I error at effect 0 with the level alpha as a grey
line), +-2 Monte Carlo SE bars. The same simulated data sets for every method (cells with the same n, q and
effect share them); matched privacy: each method spends at most (epsilon, delta).
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, check_results_file, figure_note, save_figure  # noqa: E402

METHODS = [("subsample-aggregate", "PB subsample & aggregate"), ("test-of-tests", "Test of Tests"),
           ("dp-f", "DP F-test")]


def table(path):
    """Rows (q, epsilon, n, effect, method, rejection rate, MC SE) of a nested_test_head_to_head file."""
    res = Results(path)
    if res.experiment != "nested_test_head_to_head":
        raise ValueError(f"{path}: not a nested_test_head_to_head file")
    rows = []
    for c in range(res.n_cells):
        get = {k: v[c] for k, v in res.cells.items()}
        mean = float(np.ravel(res.summary["reject"]["mean"][c])[0])
        se = float(np.ravel(res.summary["reject"]["mcse"][c])[0])
        method = get["method"].decode() if isinstance(get["method"], bytes) else str(get["method"])
        rows.append((int(get["q"]), float(get["epsilon"]), int(get["n"]), float(get["effect"]), method, mean, se))
    return sorted(rows)


def plot_file(path, out_dir, name=None):
    """Write PNG and PDF of the head-to-head figure; return the paths."""
    rows = table(path)
    res = Results(path)
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    qs = sorted({r[0] for r in rows})
    eps_values = sorted({r[1] for r in rows})
    effects = sorted({r[3] for r in rows})
    alpha = float(np.ravel(res.cells["alpha"])[0]) if "alpha" in res.cells else 0.05
    styles = {e: ":" if e == 0 else ("-" if e == effects[-1] else "--") for e in effects}
    colours = {m: plt.get_cmap("tab10")(k) for k, (m, _) in enumerate(METHODS)}
    fig, axes = plt.subplots(len(qs), len(eps_values), figsize=(3.4 * len(eps_values), 3.0 * len(qs) + 0.8),
                             sharey=True, sharex=True, squeeze=False)
    for i, q in enumerate(qs):
        for j, eps in enumerate(eps_values):
            ax = axes[i, j]
            ax.axhline(alpha, color="grey", lw=0.8)
            for method, label in METHODS:
                for effect in effects:
                    pts = [(r[2], r[5], r[6]) for r in rows
                           if r[0] == q and r[1] == eps and r[3] == effect and r[4] == method and np.isfinite(r[5])]
                    if not pts:
                        continue
                    n, m, s = map(np.array, zip(*pts))
                    ax.errorbar(n, m, yerr=2 * s, fmt=styles[effect], marker="o", ms=3, lw=1,
                                color=colours[method], label=f"{label}, effect {effect:g}")
            ax.set_xscale("log")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"q = {q}, ε = {eps:g}", fontsize=9)
            if i == len(qs) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel(f"rejection rate at α = {alpha:g}")
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    handles["bars: ±2 MC SE; grey line: α"] = plt.Line2D([], [], color="grey", marker="|", ls="none", ms=8)
    fig.legend(list(handles.values()), list(handles.keys()), fontsize=6, loc="lower center", ncol=4, frameon=False)
    design = res.cells["design"][0] if "design" in res.cells else b"gaussian"
    design = design.decode() if isinstance(design, bytes) else str(design)
    what = ("HSB2's standardised scores resampled (tested: read, write, math), simulated response"
            if design == "hsb" else "simulated data sets")
    fig.suptitle("DP tests of a nested linear model at matched privacy: PB's test vs the Test of Tests vs the DP "
                 f"F-test\n{res.replicates} data sets per (n, q, effect), the same for every method: {what}",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
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
            print("| q | ε | n | effect | method | rejection rate ± MC SE |")
            print("|---|---|---|---|---|---|")
            for r in table(path):
                print(f"| {r[0]} | {r[1]:g} | {r[2]} | {r[3]:g} | {r[4]} | {r[5]:.3f} ± {r[6]:.3f} |")


if __name__ == "__main__":
    main()
