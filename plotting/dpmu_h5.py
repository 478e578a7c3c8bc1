"""Read dpmu results files (HDF5, docs/results-schema.md) with h5py only.

The plotting scripts never re-run the engine: everything they draw comes from these files.
"""
import h5py
import numpy as np

SUPPORTED_MAJOR = 1


class Results:
    """A dpmu results file: cells table, per-cell summaries and calibration outputs.

    Parameters
    ----------
    path : str
        Path of an ``.h5`` file written by ``dpmu run`` or ``dpmu merge``.

    Raises
    ------
    ValueError
        If the file is not a dpmu results file or has an unsupported major schema version.
    """

    def __init__(self, path):
        self.path = str(path)
        with h5py.File(self.path, "r") as f:
            if _text(f.attrs.get("filetype", "")) != "dpmu-results":
                raise ValueError(f"{path}: not a dpmu results file")
            major = int(f.attrs["schema_version"][0])
            if major != SUPPORTED_MAJOR:
                raise ValueError(f"{path}: schema major version {major} is not supported (expected {SUPPORTED_MAJOR})")
            self.experiment = _text(f.attrs["experiment"])
            self.complete = bool(f.attrs["complete"])
            self.cells = {name: _array(f["cells"][name]) for name in f["cells"]}
            self.summary = {}
            for metric in f["summary"]:
                self.summary[metric] = {k: np.asarray(f["summary"][metric][k]) for k in f["summary"][metric]}
            self.calibration = {}
            if "calibration" in f:
                self.calibration = {k: np.asarray(f["calibration"][k]) for k in f["calibration"]}
            self.n_cells = len(self.cells["cell_id"])

    def select(self, **conditions):
        """Indices of the cells whose parameters equal the given values."""
        mask = np.ones(self.n_cells, dtype=bool)
        for name, value in conditions.items():
            column = self.cells[name]
            if column.dtype.kind in "fiu":
                mask &= np.isclose(column.astype(float), float(value))
            else:
                mask &= column == value
        return np.flatnonzero(mask)

    def values(self, name):
        """Sorted distinct values of a parameter."""
        return sorted(set(self.cells[name].tolist()))


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def _array(dataset):
    data = dataset[()]
    if data.dtype.kind in "OS":
        return np.array([_text(v) for v in data], dtype=object)
    return np.asarray(data)


def save_figure(fig, out_dir, stem, dpi=130):
    """Write ``fig`` as ``STEM.png`` and ``STEM.pdf`` in ``out_dir``, close it, return the paths."""
    import os

    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"{stem}.{ext}") for ext in ("png", "pdf")]
    for path in paths:
        fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return paths


def check_results_file(path):
    """Open ``path`` as a dpmu results file for a command-line script: on failure print one line
    on stderr and exit with code 2 (no traceback); warn on stderr if the run is incomplete.

    Returns
    -------
    Results
    """
    import sys

    try:
        res = Results(path)
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {path}: not a readable dpmu results file ({e})", file=sys.stderr)
        sys.exit(2)
    if not res.complete:
        print(f"warning: {path} is incomplete (a stopped run): its summaries use only the finished "
              "replicates, and cells without any are missing; finish it with dpmu run --resume", file=sys.stderr)
    return res


def plot_main(plot_file, description):
    """Command line shared by the figure scripts: ``RESULTS.h5... [--out DIR]``; prints the files written.

    Parameters
    ----------
    plot_file : callable
        ``plot_file(path, out_dir)`` returning the list of written paths.
    description : str
        Help text.
    """
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("results", nargs="+", help="results files (.h5)")
    parser.add_argument("--out", default="results/figures", help="output folder")
    args = parser.parse_args()
    for path in args.results:
        check_results_file(path)
        for written in plot_file(path, args.out):
            print(written)
