"""Draw every figure for which a results file exists.

Usage: /usr/bin/python3 plotting/plot_all.py [RESULTS_DIR] [--out FIGURES_DIR]
Each ``*.h5`` in RESULTS_DIR is dispatched on its ``experiment`` attribute; files of other
experiments (or not dpmu results files) are skipped with a note. Figures of an incomplete file
(a stopped run) are stamped "INCOMPLETE" with the number of replicates done.
Exit codes: 0 done; 1 a figure failed or a results file is damaged; 2 RESULTS_DIR is missing or
holds no ``*.h5`` file.
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fig_calibration  # noqa: E402
import fig_cps  # noqa: E402
import fig_hsb  # noqa: E402
import fig_lei_simulation  # noqa: E402
import fig_head_to_head  # noqa: E402
import fig_linear_design  # noqa: E402
import fig_selection_head_to_head  # noqa: E402
import fig_ssp  # noqa: E402
import fig_type1  # noqa: E402
from dpmu_h5 import DamagedFile, Results, figure_note  # noqa: E402

PLOTTERS = {
    "hsb_posterior": fig_hsb.plot_file,
    "hsb_likelihood_ratio": fig_hsb.plot_file,
    "type1_calibration": fig_type1.plot_file,
    "lei_simulation": fig_lei_simulation.plot_file,
    "selection_head_to_head": fig_selection_head_to_head.plot_file,
    "nested_test_head_to_head": fig_head_to_head.plot_file,
    "cps_bma": fig_cps.plot_file,
    "ssp_simulation": fig_ssp.plot_file,
    "linear_design": fig_linear_design.plot_file,
    "ssp_calibration": fig_calibration.plot_file,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results_dir", nargs="?", default="results")
    parser.add_argument("--out", default=None, help="figures folder (default RESULTS_DIR/figures)")
    args = parser.parse_args()
    out = args.out or os.path.join(args.results_dir, "figures")
    if not os.path.isdir(args.results_dir):
        print(f"error: {args.results_dir}: no such folder (give the folder of the results files)", file=sys.stderr)
        return 2
    paths = sorted(glob.glob(os.path.join(args.results_dir, "*.h5")))
    if not paths:
        print(f"error: {args.results_dir}: no results files (*.h5) to plot", file=sys.stderr)
        return 2
    failures = 0
    for path in paths:
        try:
            res = Results(path)
        except DamagedFile as exc:
            failures += 1
            print(f"FAILED {exc}", file=sys.stderr)
            continue
        except Exception as exc:  # not a dpmu file, or a newer schema
            print(f"skip {path}: {exc}")
            continue
        plotter = PLOTTERS.get(res.experiment)
        if plotter is None:
            print(f"skip {path}: no figure for experiment {res.experiment}")
            continue
        note = res.incomplete_note()
        if note:
            print(f"warning: {path}: {note}", file=sys.stderr)
        try:
            with figure_note(note):
                for written in plotter(path, out):
                    print(written + (" (incomplete)" if note else ""))
        except Exception as exc:
            failures += 1
            print(f"FAILED {path}: {exc}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
