#!/usr/bin/env bash
# End to end: ssp_simulation smoke configs (Figures 3, 4, 8, 9) → dpmu run → HDF5 → fig_ssp.py → PNG/PDF;
# the full-size configs must validate; a few numbers checked with h5py.
# Usage: ssp_configs_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"
for config in fig3_4_zellner_siow fig8_9_bic; do
  if "$DPMU" run "configs/smoke/$config.yaml" --out "$TMP/$config.h5" --quiet --threads 2 2>"$TMP/err"; then
    passes=$((passes + 1))
  else
    echo "FAIL: dpmu run configs/smoke/$config.yaml: $(cat "$TMP/err")"; failures=$((failures + 1))
  fi
  if "$DPMU" run "configs/$config.yaml" --dry-run >/dev/null 2>"$TMP/err"; then passes=$((passes + 1)); else
    echo "FAIL: configs/$config.yaml does not validate: $(cat "$TMP/err")"; failures=$((failures + 1)); fi
done
if "$DPMU" run configs/fig3_4_zellner_siow_pruned.yaml --dry-run >/dev/null 2>"$TMP/err"; then passes=$((passes + 1)); else
  echo "FAIL: configs/fig3_4_zellner_siow_pruned.yaml does not validate: $(cat "$TMP/err")"; failures=$((failures + 1)); fi
# thread invariance: 1 thread gives the same replicate arrays as 2
if "$DPMU" run configs/smoke/fig8_9_bic.yaml --out "$TMP/one.h5" --quiet --threads 1 2>"$TMP/err" &&
   "$PY" - "$TMP/one.h5" "$TMP/fig8_9_bic.h5" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
for m in a["replicates"]:
    assert np.array_equal(a["replicates"][m][()], b["replicates"][m][()], equal_nan=True), m
PYEOF
then passes=$((passes + 1)); else echo "FAIL: 1 vs 2 threads differ"; failures=$((failures + 1)); fi
# pruning_share (stream-neutral): the same draws as the unpruned cells, results within 1e-17 of
# them (docs/decisions.md 2026-12-03); both pruning parameters at once is refused
sed 's/  n_scale: 0.004/  n_scale: 0.004\n  pruning_share: 1.0e-17/' configs/smoke/fig3_4_zellner_siow.yaml > "$TMP/pruned.yaml"
if "$DPMU" run "$TMP/pruned.yaml" --out "$TMP/pruned.h5" --quiet --threads 2 2>"$TMP/err" &&
   "$PY" - "$TMP/fig3_4_zellner_siow.h5" "$TMP/pruned.h5" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
text = lambda x: [v.decode() if isinstance(v, bytes) else v for v in x]
ka = text(a["cells/key"][()])
assert not any("pruning_share" in k for k in ka)  # at its default it is in no key (docs/decisions.md)
kb = [k.replace(";pruning_share=1e-17", "") for k in text(b["cells/key"][()])]
assert ka == kb
prior = text(a["cells/prior"][()])
for m in a["replicates"]:
    x, y = a["replicates"][m][()], b["replicates"][m][()]
    for i, p in enumerate(prior):
        if p == "bic" or m in ("ridge_fallback", "redrawn_rows", "highest_posterior_model_is_true"):
            assert x[i].tobytes() == y[i].tobytes(), (m, ka[i])  # never pruned / the same noise
        elif m == "predictive_mse":
            assert np.allclose(x[i], y[i], rtol=1e-12, atol=0), (m, ka[i])
        else:  # probabilities and inclusion probabilities: within 1e-17 (+ rounding)
            assert np.allclose(x[i], y[i], rtol=0, atol=1e-14, equal_nan=True), (m, ka[i])
PYEOF
then passes=$((passes + 1)); else echo "FAIL: pruning_share changes more than the pruned models"; failures=$((failures + 1)); fi
sed 's/  n_scale: 0.004/  n_scale: 0.004\n  pruning_share: 1.0e-17\n  negligible_model_share: 1.0e-17/' \
  configs/smoke/fig3_4_zellner_siow.yaml > "$TMP/both.yaml"
"$DPMU" run "$TMP/both.yaml" --out "$TMP/both.h5" --quiet 2>"$TMP/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "not both" "$TMP/err"; then passes=$((passes + 1)); else
  echo "FAIL: both pruning parameters: exit $rc, $(cat "$TMP/err")"; failures=$((failures + 1)); fi
# a bad config value is a clear error with exit code 2
sed 's/epsilon: \[0.5, 0.9\]/epsilon: [0.5, 1.5]/' configs/smoke/fig8_9_bic.yaml > "$TMP/bad.yaml"
"$DPMU" run "$TMP/bad.yaml" --out "$TMP/bad.h5" --quiet 2>"$TMP/err"; rc=$?
if [ $rc -eq 2 ] && grep -q "Wishart mechanism needs epsilon < 1" "$TMP/err"; then passes=$((passes + 1)); else
  echo "FAIL: bad epsilon: exit $rc, $(cat "$TMP/err")"; failures=$((failures + 1)); fi
# method axes: a repeated value, a budget for the non-private analysis; a problem shared by every
# cell is reported once (with the number of cells), not once per cell
for case in 's/epsilon: \[0.5, 0.9\]/epsilon: [0.5, 0.5]/|repeats' \
            's/mechanism: none/mechanism: none\n    epsilon: 0.5/|the non-private analysis (mechanism none) has no privacy budget' \
            's/model_prior: "beta-binomial:1,1"/model_prior: "beta-binomial:"/|model_prior' \
            's/lower: -2/lower: 3/|in 243 cells'; do
  expr="${case%%|*}"; want="${case#*|}"
  sed "$expr" configs/smoke/fig8_9_bic.yaml > "$TMP/bad2.yaml"
  "$DPMU" run "$TMP/bad2.yaml" --out "$TMP/bad2.h5" --quiet 2>"$TMP/err"; rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$TMP/err" && [ "$(grep -c "lower" "$TMP/err")" -le 1 ] && [ ! -e "$TMP/bad2.h5" ]; then
    passes=$((passes + 1))
  else
    echo "FAIL: '$expr': exit $rc, want '$want' once; $(cat "$TMP/err")"; failures=$((failures + 1))
  fi
done
if "$PY" plotting/plot_all.py "$TMP" --out "$TMP/figures" > "$TMP/plots.txt"; then passes=$((passes + 1)); else
  echo "FAIL: plot_all.py"; failures=$((failures + 1)); fi
for png in fig3_4_zellner_siow_fig3 fig3_4_zellner_siow_fig4 fig3_4_zellner_siow_fig8 fig3_4_zellner_siow_fig9 \
           fig8_9_bic_fig8 fig8_9_bic_fig9; do
  f="$TMP/figures/$png.png"
  if [ -s "$f" ] && [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && [ -s "${f%.png}.pdf" ]; then
    passes=$((passes + 1))
  else
    echo "FAIL: $png.png/.pdf missing or not a PNG"; failures=$((failures + 1))
  fi
done
# numbers: shapes, probabilities in [0, 1], PMSE >= 0, no failed replicates; the method axes are
# cell parameters; one data set per (p, |T|, n) is shared by its method cells (same data_id, the
# same redrawn-row count); the BIC-only file equals the BIC cells of the ZS+BIC file (same keys:
# same data and noise streams)
if "$PY" - "$TMP/fig3_4_zellner_siow.h5" "$TMP/fig8_9_bic.h5" <<'PYEOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f.attrs["experiment"] in (b"ssp_simulation", "ssp_simulation")
pm = f["replicates/predictive_mse"][()]
assert pm.shape == (27 * 18, 2), pm.shape
assert np.all(pm >= 0), "negative PMSE"
pt = f["replicates/prob_true_model"][()]
assert np.all((pt >= 0) & (pt <= 1 + 1e-12))
assert np.all(f["replicates/redrawn_rows"][()] == 0)
assert len(f["errors/message"][()]) == 0 if "errors/message" in f else True
text = lambda a: [x.decode() if isinstance(x, bytes) else x for x in a]
cells = f["cells"]
mech, prior = text(cells["mechanism"][()]), text(cells["prior"][()])
eps, thr = cells["epsilon"][()], cells["thresholded"][()]
assert sorted(set(mech)) == ["laplace", "none", "wishart"] and sorted(set(prior)) == ["bic", "zellner_siow"]
assert all(np.isinf(e) == (m == "none") for e, m in zip(eps, mech))
assert sorted(set(eps[np.isfinite(eps)])) == [0.5, 0.9] and sorted(set(thr)) == [0, 1]
assert "variant_mechanism" not in f["calibration"] and "variant_prior" not in f["calibration"]
assert len(set(cells["data_id"][()])) == 27
g = h5py.File(sys.argv[2], "r")
assert g["replicates/predictive_mse"].shape == (27 * 9, 2)
keys_f = {k: i for i, k in enumerate(text(cells["key"][()]))}
for j, k in enumerate(text(g["cells/key"][()])):
    i = keys_f[k]
    for m in g["replicates"]:
        assert np.array_equal(f["replicates"][m][i], g["replicates"][m][j], equal_nan=True), (k, m)
PYEOF
then passes=$((passes + 1)); else echo "FAIL: HDF5 contents"; failures=$((failures + 1)); fi
echo "ssp_configs_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
