"""Print the numbers behind docs/reproduction.md (HSB section) from the results files.

Usage: /usr/bin/python3 scripts/hsb_report.py [RESULTS_DIR]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plotting"))
from dpmu_h5 import Results  # noqa: E402

d = sys.argv[1] if len(sys.argv) > 1 else "results"

f1 = Results(os.path.join(d, "fig1_hsb_posterior.h5"))
print("## Figure 1: median [Q1, Q3] of P*(H1|D)")
for test in ("H1", "H2"):
    for m in (2, 5, 10):
        row = []
        for eps in (0.25, 1, 8):
            i = f1.select(test=test, num_subsets=m, epsilon=eps)[0]
            s = f1.summary["posterior_probability_h1"]
            row.append(f"{s['q500'][i]:.3f} [{s['q250'][i]:.3f}, {s['q750'][i]:.3f}]")
        npv = f1.calibration["non_private_posterior_probability_h1"][i, 0]
        print(f"{test} M={m}: eps 0.25 / 1 / 8: " + " | ".join(row) + f"  (non-private {npv:.4f})")

f2 = Results(os.path.join(d, "fig2_hsb_likelihood_ratio.h5"))
print("\n## Figure 2: corrected critical values c_0.05, c_0.01 (test H2), MC se; uncorrected 3.84, 6.63")
for cal in ("exact", "paper_literal"):
    for m in (2, 5, 10):
        row = []
        for delta in (0.01, 0.25, 0.5, 0.75):
            i = f2.select(test="H2", num_subsets=m, delta=delta, gaussian_calibration=cal)[0]
            c = f2.calibration["critical_value_corrected"][i]
            se = f2.calibration["critical_value_corrected_mcse"][i]
            row.append(f"{c[0]:.2f}/{c[1]:.2f} (±{max(se):.2f})")
        print(f"{cal} M={m}: " + " | ".join(row))
print("\n## Figure 2: rejection rate of H02 at 0.05 with corrected critical values (test H2), and H01 (test H1)")
for cal in ("exact", "paper_literal"):
    for test in ("H1", "H2"):
        for m in (2, 5, 10):
            row = []
            for delta in (0.01, 0.25, 0.5, 0.75):
                i = f2.select(test=test, num_subsets=m, delta=delta, gaussian_calibration=cal)[0]
                row.append(f"{f2.summary['reject_corrected']['mean'][i, 0]:.3f}")
            print(f"{cal} {test} M={m}: " + " ".join(row))

t = Results(os.path.join(d, "type1_calibration.h5"))
print("\n## Type-I calibration")
for k, alpha in enumerate((0.05, 0.01)):
    mc = t.summary["reject_corrected"]["mean"][:, k]
    n = t.summary["reject_corrected"]["n_ok"][:, k]
    se = np.sqrt(alpha * (1 - alpha) / n)
    z = (mc - alpha) / se
    mu = t.summary["reject_uncorrected"]["mean"][:, k]
    zu = (mu - alpha) / se
    print(f"alpha={alpha}: cells {len(mc)}; corrected max |z| = {np.max(np.abs(z)):.2f}, within 3 SE: "
          f"{np.sum(np.abs(z) <= 3)}/{len(mc)}; rate range [{mc.min():.4f}, {mc.max():.4f}]")
    print(f"   uncorrected: outside 3 SE in {np.sum(np.abs(zu) > 3)}/{len(mu)} cells; rate range "
          f"[{mu.min():.4f}, {mu.max():.4f}]; too liberal (>3 SE above) in {np.sum(zu > 3)}, too conservative in {np.sum(zu < -3)}")
