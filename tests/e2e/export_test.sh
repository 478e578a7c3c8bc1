#!/usr/bin/env bash
# End-to-end tests of `dpmu export` (the tidy tables of engine/runtime/include/dpmu/runtime/tidy.hpp)
# and of the reader-friendly parts of results schema 2.0: the CSV reads with pandas into the
# documented columns and its numbers equal `dpmu summarize` and the file's /replicates; strings
# are UTF-8; cell_key is the hex of cell_id; vector components carry labels; files of schema 1.1
# (tests/fixtures/results_schema_1_1.h5) are still summarised and exported.
# Usage: export_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
OLD="$SRC/tests/fixtures/results_schema_1_1.h5"

expect_exit 0 "" run "$SRC/tests/fixtures/export_study.yaml" --out "$TMP/hsb.h5" --quiet
expect_exit 0 "" summarize "$TMP/hsb.h5"
cp "$TMP/out" "$TMP/hsb.json"
expect_exit 0 "" export "$TMP/hsb.h5"
cp "$TMP/out" "$TMP/hsb.csv"
expect_exit 0 "" export "$TMP/hsb.h5" --replicates
cp "$TMP/out" "$TMP/hsb_reps.csv"

"$PY" - "$TMP" <<'PYEOF' && pass || fail "export of hsb.h5 does not match summarize / the file"
import json, math, sys
import h5py, numpy as np, pandas as pd
tmp = sys.argv[1]
d = json.load(open(f"{tmp}/hsb.json"))
t = pd.read_csv(f"{tmp}/hsb.csv", keep_default_na=False, na_values=["NA"], float_precision="round_trip")
params = ["prior", "prior_h0", "epsilon", "delta", "num_subsets", "censoring_scale", "censor_lower", "censor_upper",
          "gaussian_calibration", "null_simulations", "test", "data_file", "common", "tested", "response"]
with h5py.File(f"{tmp}/hsb.h5", "r") as f:
    declared = [p for p in f.attrs["parameters"]]
    assert list(t.columns) == ["cell_key"] + declared + ["metric", "component", "component_label", "mean", "sd",
        "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan"], list(t.columns)
    assert set(params) <= set(declared), declared
    # UTF-8 everywhere, and cell_key = hex(cell_id)
    assert f["cells/key"].id.get_type().get_cset() == h5py.h5t.CSET_UTF8
    assert f.attrs.get_id("description").get_type().get_cset() == h5py.h5t.CSET_UTF8
    assert f.attrs["description"] == "export test (PB §4.4)"
    keys = [k.decode() for k in f["cells/cell_key"][()]]
    assert keys == [format(int(i), "016x") for i in f["cells/cell_id"][()]]
    assert [k.decode() for k in f["cells/data_key"][()]] == [format(int(i), "016x") for i in f["cells/data_id"][()]]
    assert keys == [c["cell_key"] for c in d]
    labels = f["component_labels/reject_corrected"][()].astype(str)
    assert [list(row) for row in labels] == [["alpha=0.05", "alpha=0.01"]] * len(keys), labels
    reps = {m: f["replicates"][m][()] for m in f.attrs["metrics"]}
    done = f["replicates_done"][()]
    assert all(f["summary"][m]["n_nan"].dtype == np.int64 for m in f.attrs["metrics"])
# the string parameter survives CSV quoting
assert t["test"].tolist()[0] == 'H§1, "quoted"' and set(t["test"]) == {'H§1, "quoted"', "H2"}
assert t["common"].tolist().count("") > 0  # an empty string stays empty, not NA
# every number equals summarize's (same doubles: both print the shortest round-trip form)
rows = 0
for c in d:
    for name, s in c["metrics"].items():
        metric, k = (name[:name.index("[")], int(name[name.index("[") + 1:-1])) if "[" in name else (name, 0)
        row = t[(t.cell_key == c["cell_key"]) & (t.metric == metric) & (t.component == k)]
        assert len(row) == 1, (c["cell_key"], name)
        row = row.iloc[0]
        assert row["component_label"] == s.get("component_label", "") or (pd.isna(row["component_label"]) and "component_label" not in s)
        for key in ("mean", "sd", "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan"):
            x, y = s[key], row[key]
            assert (x is None and pd.isna(y)) or x == y, (c["cell_key"], name, key, x, y)
        for p, v in c["parameters"].items():
            assert row[p] == v, (p, row[p], v)
        rows += 1
assert rows == len(t) and rows > 0
assert set(t[t.metric == "reject_corrected"]["component_label"]) == {"alpha=0.05", "alpha=0.01"}
# replicates: one row per cell x done replicate x component, values as in /replicates
r = pd.read_csv(f"{tmp}/hsb_reps.csv", keep_default_na=False, na_values=["NA"], float_precision="round_trip")
assert list(r.columns) == ["cell_key"] + declared + ["replicate", "metric", "component", "component_label", "value"]
n = 0
for c, key in enumerate(keys):
    for m, v in reps.items():
        sub = r[(r.cell_key == key) & (r.metric == m)]
        width = v.shape[2] if v.ndim == 3 else 1
        assert len(sub) == done[c].sum() * width
        for _, row in sub.iterrows():
            want = v[c, row["replicate"], row["component"]] if v.ndim == 3 else v[c, row["replicate"]]
            assert (math.isnan(want) and pd.isna(row["value"])) or want == row["value"], (key, m, row)
        n += len(sub)
assert n == len(r)
PYEOF

# --metric, --out, and the errors
expect_exit 0 "" export "$TMP/hsb.h5" --replicates --metric reject_corrected --out "$TMP/rc.csv"
[ ! -s "$TMP/out" ] && "$PY" -c "
import pandas as pd; t = pd.read_csv('$TMP/rc.csv', float_precision='round_trip')
assert set(t.metric) == {'reject_corrected'} and len(t) == 4 * 5 * 2 and set(t.component_label) == {'alpha=0.05', 'alpha=0.01'}
" && pass || fail "export --metric --out"
expect_exit 2 "--out '$TMP/rc.csv' exists" export "$TMP/hsb.h5" --out "$TMP/rc.csv"
expect_exit 0 "" export "$TMP/hsb.h5" --out "$TMP/rc.csv" --force
# a killed export's temporary file (a PID that no longer runs) is removed by the next export to that
# output (before: it stayed forever)
sleep 0 & dead=$!; wait $dead
echo partial > "$TMP/rc.csv.tmp-$dead"
expect_exit 0 "" export "$TMP/hsb.h5" --out "$TMP/rc.csv" --force
[ ! -e "$TMP/rc.csv.tmp-$dead" ] && grep -q "removed $TMP/rc.csv.tmp-$dead" "$TMP/err" && pass || fail "stale export temp file kept: $(cat "$TMP/err")"
expect_exit 2 "no metric 'nope' (the file's metrics: log_statistic, " export "$TMP/hsb.h5" --replicates --metric nope
expect_exit 2 "export: unknown --format 'parquet' (known: csv)" export "$TMP/hsb.h5" --format parquet
expect_exit 2 "--metric requires --replicates" export "$TMP/hsb.h5" --metric log_statistic
expect_exit 2 "not an HDF5 file" export "$SRC/tests/fixtures/export_study.yaml"
"$PY" -c "import h5py; h5py.File('$TMP/other.h5', 'w').attrs['x'] = 1"
expect_exit 2 "not a dpmu results file" export "$TMP/other.h5"
"$PY" -c "
import h5py
with h5py.File('$TMP/future.h5', 'w') as f:  # a results file of a newer dpmu
    f.attrs['filetype'] = 'dpmu-results'
    f.attrs['schema_version'] = [3, 0]
"
expect_exit 2 "schema version 3.0 is not supported (this dpmu reads 1.x to 2.x); read it with the newer dpmu" \
  export "$TMP/future.h5"

# a file of schema 1.1: summarize and export still read it (labels default to the index)
expect_exit 0 "" summarize "$OLD"
cp "$TMP/out" "$TMP/old.json"
expect_exit 0 "" export "$OLD"
cp "$TMP/out" "$TMP/old.csv"
"$PY" - "$TMP" <<'PYEOF' && pass || fail "schema 1.1 fixture: export does not match summarize"
import json, sys
import pandas as pd
tmp = sys.argv[1]
d = json.load(open(f"{tmp}/old.json"))
t = pd.read_csv(f"{tmp}/old.csv", keep_default_na=False, na_values=["NA"], float_precision="round_trip")
assert len(d) == 2 and len(t) == 2 * (1 + 1 + 3)
assert list(t[t.metric == "quantiles"]["component_label"].astype(str)) == ["0", "1", "2"] * 2
for c in d:
    assert c["metrics"]["quantiles[1]"]["component_label"] == "1"
    row = t[(t.cell_key == c["cell_key"]) & (t.metric == "sample_mean")].iloc[0]
    s = c["metrics"]["sample_mean"]
    assert all(row[k] == s[k] for k in ("mean", "sd", "q250", "q500", "n_ok", "n_nan")), (row, s)
PYEOF
# summaries of the fixture as written by dpmu 0.1.0 (schema 1.1) are unchanged
"$PY" - "$OLD" "$TMP/old.json" <<'PYEOF' && pass || fail "schema 1.1 fixture: summaries differ from its /summary"
import json, sys
import h5py, numpy as np
d = json.load(open(sys.argv[2]))
with h5py.File(sys.argv[1], "r") as f:
    assert list(f.attrs["schema_version"]) == [1, 1]
    for c, cell in enumerate(d):
        assert cell["cell_key"] == format(int(f["cells/cell_id"][c]), "016x")
        for q in ("mean", "sd", "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok"):
            assert cell["metrics"]["sample_mean"][q] == f["summary/sample_mean"][q][c]
            assert cell["metrics"]["quantiles[2]"][q] == f["summary/quantiles"][q][c, 2]
PYEOF

finish export_test
