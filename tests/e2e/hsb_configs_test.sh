#!/usr/bin/env bash
# End to end: every HSB / calibration smoke config → dpmu run → HDF5 → plotting → valid PNG files.
# Usage: hsb_configs_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"
for config in fig1_hsb_posterior fig2_hsb_likelihood_ratio fig6_hsb_censoring fig7_hsb_lr_censoring type1_calibration \
              fig6_hsb_censoring_h11 fig7_hsb_lr_censoring_h11; do
  if "$DPMU" run "configs/smoke/$config.yaml" --out "$TMP/$config.h5" --quiet 2>"$TMP/err"; then
    passes=$((passes + 1))
  else
    echo "FAIL: dpmu run configs/smoke/$config.yaml: $(cat "$TMP/err")"; failures=$((failures + 1))
  fi
  # the full-size config must validate too
  if "$DPMU" run "configs/$config.yaml" --dry-run >/dev/null 2>"$TMP/err"; then passes=$((passes + 1)); else
    echo "FAIL: configs/$config.yaml does not validate: $(cat "$TMP/err")"; failures=$((failures + 1)); fi
done
if "$PY" plotting/plot_all.py "$TMP" --out "$TMP/figures" > "$TMP/plots.txt"; then passes=$((passes + 1)); else
  echo "FAIL: plot_all.py"; failures=$((failures + 1)); fi
for png in fig1_hsb_posterior fig2_hsb_likelihood_ratio_exact fig2_hsb_likelihood_ratio_paper_literal fig7_hsb_lr_censoring_paper_literal \
           fig6_hsb_censoring fig7_hsb_lr_censoring_exact type1_calibration fig6_hsb_censoring_h11 \
           fig7_hsb_lr_censoring_h11_exact fig7_hsb_lr_censoring_h11_paper_literal; do
  f="$TMP/figures/$png.png"
  if [ -s "$f" ] && [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && [ -s "${f%.png}.pdf" ]; then
    passes=$((passes + 1))
  else
    echo "FAIL: $png.png/.pdf missing or not a PNG"; failures=$((failures + 1))
  fi
done
# the figures' numbers: a few checks straight from the HDF5 file with h5py
if "$PY" - "$TMP/fig1_hsb_posterior.h5" <<'PYEOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f.attrs["filetype"] in (b"dpmu-results", "dpmu-results")
p = f["summary/posterior_probability_h1/q500"][()]
assert np.all((p >= 0.01 - 1e-12) & (p <= 0.99 + 1e-12)), p
npv = f["calibration/non_private_posterior_probability_h1"][()][:, 0]
tests = [t.decode() if isinstance(t, bytes) else t for t in f["cells/test"][()]]
assert all(abs(v - (0.0713 if t == "H1" else 1.0)) < 1e-3 for v, t in zip(npv, tests)), npv
PYEOF
then passes=$((passes + 1)); else echo "FAIL: fig1 HDF5 contents"; failures=$((failures + 1)); fi
echo "hsb_configs_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
