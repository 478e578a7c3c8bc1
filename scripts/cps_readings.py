"""Why are our Figure 5 (PB §5.2.2) intervals wider than the paper's? Runs readings of the CPS
application side by side and prints the per-run confidence-interval widths.

Each reading is configs/fig5_cps.yaml with a few lines substituted (VARIANTS below). With
``--run`` the script writes the variant configs to OUT_DIR and runs them with
``dpmu run --replicates R``; without it, it reads OUT_DIR/<variant>.h5 from an earlier run.

Usage: /usr/bin/python3 scripts/cps_readings.py OUT_DIR [--run] [--replicates 25] [--dpmu build/engine/dpmu]

Printed per variant and mechanism: median over runs of the width t_K − t_0 of the 95% confidence
set of E(β_j | G) (the support of a run's histogram, PB §5.1) for j = 1, 3, 4, the peak of the
averaged density, the run-averaged DP estimates of β1 (non-thresholded / thresholded) and the
non-private β1, and the union of the runs' β1 intervals (the range a
histogram whose support is the confidence interval would need). The paper's axes (Figure 5): β1 [−2, 2], peak ≈ 4; β3 [−0.01, 0.01], peak ≈ 2 000;
β4 [0, 0.04], peak ≈ 80.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "plotting"))
from dpmu_h5 import Results  # noqa: E402

CENTRED = ("age_squared = age^2", "age_squared = (age - 42.13172519806078)^2")  # mean age of cps09mar
UNIFORM = ('model_prior: "beta-binomial:1,1"', "model_prior: uniform")
JOINT = ("permutation: independent", "permutation: joint")
VARIANTS = {
    "base": [],
    "centred": [CENTRED],
    "joint": [JOINT],
    "centred_joint": [CENTRED, JOINT],
    "uniform": [UNIFORM],
    "centred_uniform": [CENTRED, UNIFORM],
    "gprior": [("prior: zellner-siow-laplace", "prior: g-prior")],
    "nsim1000": [("simulations: 10000", "simulations: 1000")],
    "maxabs": [("norm: frobenius", "norm: max-abs")],
    "spectral": [("norm: frobenius", "norm: spectral")],
}


def write_configs(out_dir, source):
    text = open(source).read()
    paths = {}
    for name, subs in VARIANTS.items():
        t = text
        for old, new in subs:
            if old not in t:
                raise SystemExit(f"{source}: '{old}' not found (variant {name})")
            t = t.replace(old, new)
        paths[name] = os.path.join(out_dir, f"{name}.yaml")
        with open(paths[name], "w") as f:
            f.write(t)
    return paths


def widths(path):
    import h5py
    res = Results(path)
    rows = []
    with h5py.File(path, "r") as f:
        lo, hi = f["replicates/confidence_set_lower"][()], f["replicates/confidence_set_upper"][()]
        nt = f["replicates/posterior_mean_non_thresholded"][()]
        th = f["replicates/posterior_mean_thresholded"][()]
    coefs = np.asarray(res.calibration["histogram_coefficients"][0])
    coefs = coefs[np.isfinite(coefs)].astype(int)
    for mech in ("laplace", "wishart"):
        idx = res.select(mechanism=mech)
        if len(idx) == 0:
            continue
        c = int(idx[0])
        dens = res.summary["confidence_set_density"]["mean"][c]
        k = len(dens[np.isfinite(dens)]) // len(coefs)
        w = [float(np.nanmedian(hi[c, :, i] - lo[c, :, i])) for i in range(len(coefs))]
        peak = [float(np.nanmax(dens[i * k:(i + 1) * k])) for i in range(len(coefs))]
        union = (float(np.nanmin(lo[c, :, 0])), float(np.nanmax(hi[c, :, 0])))
        rows.append((mech, w, peak, float(np.nanmean(nt[c, :, 0])), float(np.nanmean(th[c, :, 0])),
                     float(res.calibration["non_private_posterior_mean"][c, 0]), res.replicates, union))
    return coefs, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--replicates", type=int, default=25)
    ap.add_argument("--dpmu", default=os.path.join(HERE, "..", "build", "engine", "dpmu"))
    ap.add_argument("--config", default=os.path.join(HERE, "..", "configs", "fig5_cps.yaml"))
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    configs = write_configs(args.out_dir, args.config)
    if args.run:
        for name, cfg in configs.items():
            out = os.path.join(args.out_dir, f"{name}.h5")
            if os.path.exists(out):
                os.remove(out)
            subprocess.run([args.dpmu, "run", cfg, "--out", out, "--replicates", str(args.replicates), "--quiet"],
                           check=True, cwd=os.path.join(HERE, ".."))
    print("| reading | mechanism | runs | median width β1 / β3 / β4 | peak density β1 / β3 / β4 | "
          "mean DP β1 NT / T | non-private β1 | union of the runs' β1 intervals |")
    print("|---|---|---|---|---|---|---|---|")
    for name in VARIANTS:
        path = os.path.join(args.out_dir, f"{name}.h5")
        if not os.path.exists(path):
            continue
        coefs, rows = widths(path)
        for mech, w, peak, nt, th, npv, reps, union in rows:
            print(f"| {name} | {mech} | {reps} | " + " / ".join(f"{v:.3g}" for v in w) + " | " +
                  " / ".join(f"{v:.3g}" for v in peak) + f" | {nt:.3f} / {th:.3f} | {npv:.3f} | "
                  f"[{union[0]:.3g}, {union[1]:.3g}] |")


if __name__ == "__main__":
    main()
