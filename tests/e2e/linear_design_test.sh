#!/usr/bin/env bash
# End to end: a user-defined linear design from YAML alone (configs/linear_design_example.yaml,
# docs/linear-design.md) → dpmu run --replicates 20 → HDF5 → fig_linear_design.py → PNG; config
# errors (a bad distribution, the wrong number of coefficients, a missing CSV) found by --dry-run.
# Usage: linear_design_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"
config=configs/linear_design_example.yaml
if "$DPMU" run "$config" --replicates 20 --out "$TMP/linear_design_example.h5" --quiet --threads 2 2>"$TMP/err"; then
  pass
else
  fail "dpmu run $config --replicates 20: $(cat "$TMP/err")"
fi
if "$DPMU" run "$config" --dry-run >/dev/null 2>"$TMP/err"; then pass; else fail "$config does not validate: $(cat "$TMP/err")"; fi
# the numbers: strong signal of x1 found by every model-averaging method at n = 5000; the null x4
# less often; common random numbers: the bma and ssp cells of one n saw the same data sets
if "$PY" - "$TMP/linear_design_example.h5" <<'PYEOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f.attrs["experiment"] in (b"linear_design", "linear_design")
method = np.array([m.decode() if isinstance(m, bytes) else m for m in f["cells/method"][()]])
n = f["cells/n"][()]
pip = f["summary/pip/mean"][()]
assert pip.shape == (len(method), 4), pip.shape
big = n == 100000
for m in ("bma", "ssp_laplace", "ssp_wishart"):
    rows = big & (method == m)
    assert rows.any(), m
    assert np.all(pip[rows, 0] > 0.9), (m, pip[rows])
bma = big & (method == "bma")
assert np.all(pip[bma, 3] < 0.5), pip[bma]
test = method == "dp_test"
assert np.all(np.isnan(pip[test])), "dp_test cells have no PIPs"
post = f["summary/posterior_probability_h1/mean"][()]
assert np.all(np.isfinite(post[test])) and np.all(np.isnan(post[~test])), post
assert f["replicates/pip"].shape[1] == 20
PYEOF
then pass; else fail "linear_design_example HDF5 contents"; fi
if "$PY" plotting/fig_linear_design.py "$TMP/linear_design_example.h5" --out "$TMP/figures" >"$TMP/plots.txt" 2>"$TMP/err"; then
  pass
else
  fail "fig_linear_design.py: $(cat "$TMP/err")"
fi
f="$TMP/figures/linear_design_example.png"
if [ -s "$f" ] && [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && [ "$(stat -c %s "$f")" -gt 20000 ]; then
  pass
else
  fail "$f missing, not a PNG or trivially small ($(stat -c %s "$f" 2>/dev/null) bytes)"
fi
# plot_all.py dispatches linear_design files to the same figure
if "$PY" plotting/plot_all.py "$TMP" --out "$TMP/all" >/dev/null 2>"$TMP/err" && [ -s "$TMP/all/linear_design_example.png" ]; then
  pass
else
  fail "plot_all.py on a linear_design file: $(cat "$TMP/err")"
fi
# config errors are found before any work, naming the key (and its line)
sed 's/uniform(-2, 2)/gamma(2, 1)/' "$config" > "$TMP/bad_dist.yaml"
expect_error "predictors: item 2 'gamma(2, 1)'" run "$TMP/bad_dist.yaml" --dry-run
sed 's/coefficients: \[1, 0, 0.5, 0\]/coefficients: [1, 0, 0.5]/' "$config" > "$TMP/bad_beta.yaml"
expect_error "coefficients: 3 values for 4 predictors" run "$TMP/bad_beta.yaml" --dry-run
sed 's/error: "t(5, 1)"/error: "t(5)"/' "$config" > "$TMP/bad_error.yaml"
expect_error "error: 't(5)' has 1 argument; write t(df, scale)" run "$TMP/bad_error.yaml" --dry-run
# designs that overflow in every replicate, or whose data set cannot fit in memory, are refused by
# --dry-run (before: accepted; then every replicate failed, or "out of memory ... --resume")
sed 's/coefficients: \[1, 0, 0.5, 0\]/coefficients: [1e200, 0, 0.5, 0]/' "$config" > "$TMP/overflow.yaml"
expect_error "overflows a double in every replicate" run "$TMP/overflow.yaml" --dry-run
sed 's/uniform(-2, 2)/normal(0, 1e160)/' "$config" > "$TMP/overflow_x.yaml"
expect_error "predictors: item '" run "$TMP/overflow_x.yaml" --dry-run
# an error law whose draws are infinite (t with df = 1e-300) is refused naming the key (before: it
# passed --dry-run, then every replicate failed)
sed 's/error: "t(5, 1)"/error: "t(1e-300, 1)"/' "$config" > "$TMP/tiny_df.yaml"
expect_error "error: 't(1e-300, 1)' has errors of typical size inf" run "$TMP/tiny_df.yaml" --dry-run
sed 's/  - n: \[1000, 10000, 100000\]/  - n: [1000000000000000]/' "$config" > "$TMP/huge_n.yaml"
expect_error "one simulated data set per thread) needs about" run "$TMP/huge_n.yaml" --dry-run
# csv(column) predictors: the file is checked by --dry-run (missing file, missing column), then runs
cat > "$TMP/csv.yaml" <<YAML
experiment: linear_design
master_seed: 1
replicates: 3
parameters:
  predictors: "csv(read); csv(science); normal(0, 1)"
  data_file: $SRC/experiments/data/hsb2.csv
  coefficients: [0.5, 0, 1]
  error: "heteroscedastic(1, 3)"
  method: bma
grid:
  - n: [100, 400]
YAML
if "$DPMU" run "$TMP/csv.yaml" --out "$TMP/csv.h5" --quiet 2>"$TMP/err"; then pass; else fail "csv design: $(cat "$TMP/err")"; fi
sed "s|hsb2.csv|no_such_file.csv|" "$TMP/csv.yaml" > "$TMP/csv_missing.yaml"
expect_error "data_file:" run "$TMP/csv_missing.yaml" --dry-run
sed "s|csv(science)|csv(salary)|" "$TMP/csv.yaml" > "$TMP/csv_column.yaml"
expect_error "predictors: csv(salary)" run "$TMP/csv_column.yaml" --dry-run
echo "linear_design_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
