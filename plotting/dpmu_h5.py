"""Read dpmu results files (HDF5, docs/results-schema.md) with h5py only.

The plotting scripts never re-run the engine: everything they draw comes from these files.
"""
import contextlib

import h5py
import numpy as np

# Schema major versions read (docs/results-schema.md, "Versions"): 1.x and 2.x.
SUPPORTED_MAJORS = (1, 2)

# Notes stamped on every figure saved while they are active (see figure_note).
_FIGURE_NOTES = []


class DamagedFile(ValueError):
    """A dpmu results file whose contents cannot be read back (a checksum fails or data are missing)."""


_USER_BLOCK = 512
_CHECKSUM_HEADER = b"dpmu-results\nsha256 "
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def verify_checksum(path):
    """Check the SHA-256 that dpmu stores in the user block of a results file (schema 1.1) before
    HDF5 reads anything: HDF5 has no checksum for variable-length strings, and a damaged one can
    crash the reader. Files without it (schema 1.0) pass unchecked.

    Raises
    ------
    DamagedFile
        If the stored and computed digests differ, or the header is damaged.
    """
    import hashlib

    with open(path, "rb") as f:
        head = f.read(_USER_BLOCK)
        if len(head) < _USER_BLOCK or head.startswith(_HDF5_SIGNATURE):
            return
        if not head.startswith(_CHECKSUM_HEADER):
            if f.read(8) == _HDF5_SIGNATURE:
                raise DamagedFile(f"{path}: the results file is damaged (the checksum header at its start is not intact)")
            return
        stored = head[len(_CHECKSUM_HEADER):len(_CHECKSUM_HEADER) + 64].decode("ascii", "replace")
        digest = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != stored:
        raise DamagedFile(f"{path}: the results file is damaged (its SHA-256 does not match the one stored when it "
                          "was written)")


class Results:
    """A dpmu results file: cells table, per-cell summaries and calibration outputs.

    Attributes: ``cells`` (name -> array, one value per cell: the parameters, ``cell_id``,
    ``cell_key``, ...), ``summary`` (metric -> {``mean``, ``sd``, ``mcse``, ``q025``, ``q250``,
    ``q500``, ``q750``, ``q975``, ``n_ok``, ``n_nan``} arrays [cells] or [cells, K]),
    ``component_labels`` (vector metric -> [cells, K] array of str; before schema 2.0 the index
    "0", "1", ...), ``calibration``.

    Parameters
    ----------
    path : str
        Path of an ``.h5`` file written by ``dpmu run`` or ``dpmu merge``.

    Raises
    ------
    ValueError
        If the file is not a dpmu results file or has an unsupported major schema version.
    DamagedFile
        (a ValueError) If its checksums fail.
    """

    def __init__(self, path):
        self.path = str(path)
        verify_checksum(self.path)
        with h5py.File(self.path, "r") as f:
            if _text(f.attrs.get("filetype", "")) != "dpmu-results":
                raise ValueError(f"{path}: not a dpmu results file")
            major = int(f.attrs["schema_version"][0])
            if major not in SUPPORTED_MAJORS:
                raise ValueError(f"{path}: schema major version {major} is not supported (this reader reads "
                                 f"{', '.join(f'{m}.x' for m in SUPPORTED_MAJORS)})")
            try:
                # h5py verifies HDF5's checksums (Fletcher32 per dataset, metadata) while reading.
                self.experiment = _text(f.attrs["experiment"])
                self.complete = bool(f.attrs["complete"])
                self.replicates = int(f.attrs["replicates"])
                self.cells = {name: _array(f["cells"][name]) for name in f["cells"]}
                self.n_done = np.asarray(f["cell_status"]["n_done"])
                self.summary = {}
                for metric in f["summary"]:
                    self.summary[metric] = {k: np.asarray(f["summary"][metric][k]) for k in f["summary"][metric]}
                self.calibration = {}
                if "calibration" in f:
                    self.calibration = {k: np.asarray(f["calibration"][k]) for k in f["calibration"]}
                self.n_cells = len(self.cells["cell_id"])
                if "cell_key" not in self.cells:  # before schema 2.0
                    self.cells["cell_key"] = np.array([format(int(i), "016x") for i in self.cells["cell_id"]],
                                                      dtype=object)
                self.component_labels = {}
                for metric in self.summary:
                    if "component_labels" in f and metric in f["component_labels"]:
                        self.component_labels[metric] = _array(f["component_labels"][metric])
                    elif f["replicates"][metric].ndim == 3:
                        k = f["replicates"][metric].shape[2]
                        self.component_labels[metric] = np.array([[str(j) for j in range(k)]] * self.n_cells,
                                                                 dtype=object).reshape(self.n_cells, k)
            except (OSError, KeyError, ValueError, TypeError) as exc:
                raise DamagedFile(f"{path}: the results file is damaged ({exc}); `dpmu summarize {path}` says more")

    def incomplete_note(self):
        """A line for figures drawn from an incomplete file ("" for a complete one)."""
        if self.complete:
            return ""
        total = self.n_cells * self.replicates
        return (f"INCOMPLETE RUN: {int(self.n_done.sum())} of {total} replicates done "
                f"({int((self.n_done == 0).sum())} of {self.n_cells} cells without any) - finish it with dpmu run --resume")

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
        return np.array([_text(v) for v in data.ravel()], dtype=object).reshape(data.shape)
    return np.asarray(data)


@contextlib.contextmanager
def figure_note(text):
    """Stamp ``text`` (if not empty) in red on top of every figure saved by save_figure meanwhile."""
    _FIGURE_NOTES.append(text)
    try:
        yield
    finally:
        _FIGURE_NOTES.pop()


def save_figure(fig, out_dir, stem, dpi=130):
    """Write ``fig`` as ``STEM.png`` and ``STEM.pdf`` in ``out_dir``, close it, return the paths.

    Figures drawn from an incomplete results file (inside ``figure_note``) carry the note on top.
    """
    import os

    import matplotlib.pyplot as plt

    notes = [n for n in _FIGURE_NOTES if n]
    if notes:
        fig.text(0.5, 0.995, "\n".join(notes), ha="center", va="top", color="red", fontsize=8, weight="bold")
        fig.text(0.5, 0.5, "INCOMPLETE", ha="center", va="center", color="red", alpha=0.15, fontsize=60,
                 rotation=30, weight="bold")
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
    except DamagedFile as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
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
        res = check_results_file(path)
        with figure_note(res.incomplete_note()):
            for written in plot_file(path, args.out):
                print(written)
