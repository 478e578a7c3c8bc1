#!/usr/bin/env bash
# End to end: CPS smoke configs (paper §5.2.2, Figure 5) → dpmu run → HDF5 → fig_cps.py → PNG/PDF.
# Usage: cps_configs_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"
for config in fig5_cps fig5_cps_centred_age fig5_cps_public_bounds; do
  if "$DPMU" run "configs/smoke/$config.yaml" --out "$TMP/$config.h5" --quiet 2>"$TMP/err"; then
    passes=$((passes + 1))
  else
    echo "FAIL: dpmu run configs/smoke/$config.yaml: $(cat "$TMP/err")"; failures=$((failures + 1))
  fi
  if "$DPMU" run "configs/$config.yaml" --dry-run >/dev/null 2>"$TMP/err"; then passes=$((passes + 1)); else
    echo "FAIL: configs/$config.yaml does not validate: $(cat "$TMP/err")"; failures=$((failures + 1)); fi
done
# a bad config is rejected before any work, naming the key
sed 's/  permute: \[married, education\]/  permute: [married, income]/' configs/smoke/fig5_cps.yaml > "$TMP/bad.yaml"
if "$DPMU" run "$TMP/bad.yaml" --out "$TMP/bad.h5" --quiet 2>"$TMP/err"; then
  echo "FAIL: bad permute accepted"; failures=$((failures + 1))
elif grep -q "'income' is not one of the predictors" "$TMP/err"; then passes=$((passes + 1)); else
  echo "FAIL: unclear error for a bad permute: $(cat "$TMP/err")"; failures=$((failures + 1)); fi
if "$PY" plotting/plot_all.py "$TMP" --out "$TMP/figures" > "$TMP/plots.txt"; then passes=$((passes + 1)); else
  echo "FAIL: plot_all.py"; failures=$((failures + 1)); fi
for png in fig5_cps fig5_cps_centred_age fig5_cps_public_bounds; do
  f="$TMP/figures/$png.png"
  if [ -s "$f" ] && [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && [ -s "${f%.png}.pdf" ] \
     && [ -s "$TMP/figures/${png}_numbers.txt" ]; then
    passes=$((passes + 1))
  else
    echo "FAIL: $png.png/.pdf/_numbers.txt missing or not a PNG"; failures=$((failures + 1))
  fi
done
# the figure's numbers straight from the HDF5 file
if "$PY" - "$TMP/fig5_cps.h5" <<'PYEOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f.attrs["experiment"] in (b"cps_bma", "cps_bma")
pip = f["calibration/non_private_pip"][()]
assert pip.shape == (2, 6), pip.shape
assert np.all(pip[:, 2] < 0.5) and np.all(pip[:, 4] < 0.5), pip   # permuted predictors
assert np.all(pip[:, [0, 1, 3, 5]] > 0.99), pip
d = f["summary/confidence_set_density/mean"][()]
e = f["calibration/histogram_edges"][()]
assert d.shape == (2, 120) and e.shape == (2, 123), (d.shape, e.shape)
for c in range(2):
    for j in range(3):
        w = np.diff(e[c, j * 41:(j + 1) * 41])
        mass = np.sum(d[c, j * 40:(j + 1) * 40] * w)
        out = f["summary/confidence_set_outside_bins/mean"][()][c, j]
        assert abs(mass - (1 - out)) < 1e-9, (mass, out)
PYEOF
then passes=$((passes + 1)); else echo "FAIL: fig5 HDF5 contents"; failures=$((failures + 1)); fi
echo "cps_configs_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
