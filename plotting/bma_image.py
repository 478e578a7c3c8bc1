#!/usr/bin/python3
"""Image of the model space of `dpmu bma --plot` (like BAS's image.bas): one column per model
(most probable left), one row per predictor, a cell filled when the model includes the predictor,
coloured by the model's log posterior odds against the highest-probability model.

Usage: bma_image.py MODELS.json OUT.png  (the JSON is written by `dpmu bma --plot`)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main(src: str, out: str) -> None:
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    names = doc["predictors"]
    models = doc["models"]
    if not models:
        raise SystemExit("bma_image.py: no models to draw (use --top-models > 0)")
    top = models[0]["log_posterior_probability"]
    odds = np.array([m["log_posterior_probability"] - top for m in models])
    grid = np.full((len(names), len(models)), np.nan)
    for c, m in enumerate(models):
        for name in m["predictors"]:
            grid[names.index(name), c] = odds[c]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.35 * len(models) + 2.5), max(3.0, 0.35 * len(names) + 1.5)))
    lo = float(odds.min()) if odds.min() < 0 else -1.0
    image = ax.imshow(grid, aspect="auto", cmap="viridis", vmin=lo, vmax=0.0, interpolation="nearest")
    ax.set_yticks(range(len(names)))
    pip = doc["posterior_inclusion_probabilities"]
    ax.set_yticklabels([f"{n} ({pip[n]:.2f})" for n in names])
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels([str(i + 1) for i in range(len(models))])
    ax.set_xlabel("model rank")
    ax.set_title(f"Model space of {doc['response']} (top {len(models)} models)")
    fig.colorbar(image, ax=ax, label="log posterior odds vs the top model")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
