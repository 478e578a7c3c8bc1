"""Calibration of private model averaging (docs/methods.md §5.11): plug-in vs noise-aware credible intervals.

Reads an ``ssp_calibration`` results file (configs/calibration.yaml). Figure: coverage of the true
beta_j by the equal-tailed 95 % intervals (averaged over the p coefficients) against n, one panel
per mechanism (rows) and epsilon (columns), a line per p and method (plug-in dashed, noise-aware
solid, non-private grey), bars ±2 Monte Carlo SE (the largest per-coefficient SE: conservative for
the average), the nominal level drawn. Also writes ``<name>_table.md``: per cell and coefficient
the coverage at 50/80/95 % of both methods with their MC SEs, the Brier score of the PIPs, the
acceptance rate and the share of noise-aware fallbacks to the plug-in.

Reliability (docs/bma.md "Calibration metrics"): ``<name>_reliability`` plots, per mechanism (columns)
and for the PIPs and the posterior model probabilities (rows), the observed frequency of the event
against the mean predicted probability in each of the 10 bins, pooled over the cells of the
mechanism (every epsilon, n and p), plug-in dashed and noise-aware solid, bars ±2 replicate-clustered
SE; ``<name>_reliability.md`` tabulates per mechanism and epsilon, method, kind and bin the count,
mean predicted, observed frequency, its binomial SE sqrt(f (1 - f) / count) and the clustered SE.
Files without the reliability metrics (written before they existed) get the coverage outputs only.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import h5py  # noqa: E402
import numpy as np  # noqa: E402

from dpmu_h5 import Results, plot_main, save_figure  # noqa: E402

LEVELS = ("50", "80", "95")
KINDS = (("pip", "PIPs (event: j in T)"), ("model", "model probabilities (event: model = T)"))
ALL_METHODS = (("plug_in", "plug-in", "--", "s"), ("noise_aware", "rejection (§5.11)", "-", "o"),
               ("augmented", "data augmentation (§5.12)", ":", "^"))
COLOURS = {"plug_in": "tab:blue", "noise_aware": "tab:red", "augmented": "tab:green"}


def methods_of(res):
    """The analyses a file holds results for: plug-in and rejection always, data augmentation when it
    was run (augmented_draws > 0: its metrics are not all NaN)."""
    return tuple(m for m in ALL_METHODS
                 if f"{m[0]}_cover95" in res.summary and np.isfinite(res.summary[f"{m[0]}_cover95"]["mean"]).any())


def _coverage(res, method, level, cells):
    """Mean over coefficients of the coverage, and the largest per-coefficient MC SE, per cell.

    Vector metrics of cells with fewer predictors are padded with NaN up to the largest p."""
    s = res.summary[f"{method}_cover{level}"]
    return np.nanmean(s["mean"][cells], axis=1), np.nanmax(s["mcse"][cells], axis=1)


def write_table(res, path):
    """Markdown table of every cell: coverage per coefficient and level, every method the file holds."""
    methods = methods_of(res)
    lines = ["| mechanism | epsilon | p | n | coefficient | "
             + " | ".join(f"{label} {lv}" for _, label, *_ in methods for lv in LEVELS) + " | "
             + " | ".join(f"Brier {label}" for _, label, *_ in methods)
             + " | acceptance | fallback | replicates |",
             "|" + "---|" * (5 + (len(LEVELS) + 1) * len(methods) + 3)]
    order = sorted(range(res.n_cells), key=lambda c: (str(res.cells["mechanism"][c]), float(res.cells["epsilon"][c]),
                                                      int(res.cells["p"][c]), int(res.cells["n"][c])))
    for c in order:
        p = int(res.cells["p"][c])
        for j in range(p):
            row = [str(res.cells["mechanism"][c]), f"{float(res.cells['epsilon'][c]):g}", str(p),
                   str(int(res.cells["n"][c])), f"beta{j + 1}"]
            for method, *_ in methods:
                for lv in LEVELS:
                    s = res.summary[f"{method}_cover{lv}"]
                    row.append(f"{s['mean'][c, j]:.3f} ± {s['mcse'][c, j]:.3f}")
            for method, *_ in methods:
                row.append(f"{res.summary[f'{method}_brier']['mean'][c]:.4f}")
            row.append(f"{res.summary['acceptance_rate']['mean'][c]:.3g}")
            row.append(f"{res.summary['fallback']['mean'][c]:.3f}")
            row.append(str(int(res.summary["fallback"]["n_ok"][c])))
            lines.append("| " + " | ".join(row) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def reliability(res, replicates, method, kind, cells):
    """The reliability table of `method` and `kind` ("pip" or "model") pooled over `cells`.

    Totals per bin from the summaries (mean x n_ok = the sum over replicates); the clustered SE
    from the per-replicate counts (`replicates`: metric -> [cells, R, K] array).
    Returns a dict of arrays over the bins: count, predicted (mean), observed, se_binomial, se_cluster."""
    names = {x: f"{method}_{kind}_bin_{x}" for x in ("count", "events", "predicted")}
    total = {x: np.nansum(res.summary[m]["mean"][cells] * res.summary[m]["n_ok"][cells], axis=0)
             for x, m in names.items()}
    count = total["count"]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = total["events"] / count
        predicted = total["predicted"] / count
        se_binomial = np.sqrt(observed * (1.0 - observed) / count)
        c = replicates[names["count"]][cells].reshape(-1, count.size)
        e = replicates[names["events"]][cells].reshape(-1, count.size)
        ok = np.all(np.isfinite(c), axis=1) & np.all(np.isfinite(e), axis=1)
        c, e = c[ok], e[ok]
        r = len(c)
        resid = e - observed * c
        se_cluster = np.sqrt(r / max(r - 1, 1) * np.sum(resid ** 2, axis=0)) / c.sum(axis=0)
    return dict(count=count, predicted=predicted, observed=observed, se_binomial=se_binomial,
                se_cluster=se_cluster)


def _read_replicates(path, metrics):
    with h5py.File(path, "r") as f:
        return {m: np.asarray(f["replicates"][m], dtype=float) for m in metrics}


def write_reliability_table(res, replicates, path):
    """Markdown table: per mechanism and epsilon (pooled over n and p), method, kind and bin."""
    lines = ["| mechanism | epsilon | method | probabilities | bin | count | mean predicted | observed | "
             "binomial SE | clustered SE |", "|" + "---|" * 10]
    groups = sorted({(str(res.cells["mechanism"][c]), float(res.cells["epsilon"][c])) for c in range(res.n_cells)})
    edges = np.linspace(0.0, 1.0, 11)
    for mech, eps in groups:
        cells = res.select(mechanism=mech, epsilon=eps) if np.isfinite(eps) else res.select(mechanism=mech)
        for method, label, *_ in methods_of(res):
            if mech == "none" and method != "plug_in":
                continue  # the same analysis as plug-in
            for kind, what in KINDS:
                t = reliability(res, replicates, method, kind, cells)
                for k in range(len(t["count"])):
                    if not t["count"][k] > 0:
                        continue
                    lines.append(f"| {mech} | {eps:g} | {label if mech != 'none' else 'non-private'} | {kind} | "
                                 f"[{edges[k]:.1f}, {edges[k + 1]:.1f}{']' if k == 9 else ')'} | "
                                 f"{int(round(t['count'][k]))} | {t['predicted'][k]:.3f} | {t['observed'][k]:.3f} | "
                                 f"{t['se_binomial'][k]:.3f} | {t['se_cluster'][k]:.3f} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def plot_reliability(res, replicates, out_dir, name):
    mechanisms = [m for m in ("none", "laplace", "wishart") if m in set(res.cells["mechanism"].tolist())]
    fig, axes = plt.subplots(len(KINDS), len(mechanisms), figsize=(3.4 * len(mechanisms), 3.3 * len(KINDS)),
                             squeeze=False)
    for col, mech in enumerate(mechanisms):
        cells = res.select(mechanism=mech)
        for row, (kind, what) in enumerate(KINDS):
            ax = axes[row][col]
            ax.plot([0, 1], [0, 1], color="black", lw=0.8)
            for method, label, style, marker in methods_of(res):
                if mech == "none" and method != "plug_in":
                    continue
                t = reliability(res, replicates, method, kind, cells)
                ok = t["count"] > 0
                ax.errorbar(t["predicted"][ok], t["observed"][ok], yerr=2 * t["se_cluster"][ok],
                            color="grey" if mech == "none" else COLOURS[method],
                            ls=style, marker=marker, ms=4,
                            label=("non-private" if mech == "none" else label) if row == 0 else None)
            ax.set_xlim(-0.02, 1.02)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"{'non-private' if mech == 'none' else mech}: {kind}", fontsize=9)
            ax.set_xlabel("mean predicted probability")
            if col == 0:
                ax.set_ylabel(f"observed frequency\n({what})", fontsize=8)
            if row == 0:
                ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return save_figure(fig, out_dir, f"{name}_reliability")


def plot_file(path, out_dir, name=None):
    res = Results(path)
    if res.experiment != "ssp_calibration":
        raise ValueError(f"{path}: not an ssp_calibration file")
    name = name or os.path.splitext(os.path.basename(path))[0]
    os.makedirs(out_dir, exist_ok=True)
    mechanisms = [m for m in ("laplace", "wishart") if m in set(res.cells["mechanism"].tolist())]
    eps_by_mech = {m: sorted({float(res.cells["epsilon"][c]) for c in res.select(mechanism=m)}) for m in mechanisms}
    ncol = max(len(v) for v in eps_by_mech.values())
    fig, axes = plt.subplots(len(mechanisms), ncol, figsize=(3.6 * ncol, 3.2 * len(mechanisms)), sharey=True,
                             squeeze=False)
    ps = res.values("p")
    colours = dict(zip(ps, ("tab:blue", "tab:orange", "tab:green", "tab:red")))
    for r, mech in enumerate(mechanisms):
        for k, eps in enumerate(eps_by_mech[mech]):
            ax = axes[r][k]
            ax.axhline(0.95, color="black", lw=0.8)
            for p in ps:
                base = res.select(mechanism="none", p=p)
                if len(base):
                    base = base[np.argsort(res.cells["n"][base].astype(float))]
                    m, se = _coverage(res, "plug_in", "95", base)
                    ax.errorbar(res.cells["n"][base].astype(float), m, yerr=2 * se, color="grey", lw=0.8,
                                label=f"non-private, p={p}" if k == 0 and r == 0 else None)
                cells = res.select(mechanism=mech, epsilon=eps, p=p)
                cells = cells[np.argsort(res.cells["n"][cells].astype(float))]
                for method, label, style, marker in methods_of(res):
                    m, se = _coverage(res, method, "95", cells)
                    ax.errorbar(res.cells["n"][cells].astype(float), m, yerr=2 * se, color=colours[p], ls=style,
                                marker=marker, ms=4, label=f"{label}, p={p}" if k == 0 and r == 0 else None)
            ax.set_xscale("log")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"{mech}, ε = {eps:g}")
            ax.set_xlabel("n")
            if k == 0:
                ax.set_ylabel("coverage of the 95 % intervals")
        for k in range(len(eps_by_mech[mech]), ncol):
            axes[r][k].axis("off")
    fig.legend(loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    written = save_figure(fig, out_dir, f"{name}_coverage95")
    written.append(write_table(res, os.path.join(out_dir, f"{name}_table.md")))
    needed = [f"{m}_{k}_bin_{x}" for m, *_ in methods_of(res) for k, _ in KINDS
              for x in ("count", "events", "predicted")]
    if all(m in res.summary for m in needed):
        replicates = _read_replicates(path, [m for m in needed if not m.endswith("_predicted")])
        written += plot_reliability(res, replicates, out_dir, name)
        written.append(write_reliability_table(res, replicates, os.path.join(out_dir, f"{name}_reliability.md")))
    return written


if __name__ == "__main__":
    plot_main(plot_file, __doc__.splitlines()[0])
