#!/usr/bin/env bash
# `dpmu describe`: every registered experiment is described (Markdown and JSON agree on the
# parameter lists), docs/configs.md's tables are its output (no drift), bad input is an error.
# Usage: describe_test.sh DPMU SOURCE_DIR
DPMU="$1"
SRC="$2"
source "$(dirname "$0")/lib.sh"

# JSON: a list with one entry per registered experiment, each parameter typed and classified.
json_check 'len(d) == 12 and all(e["parameters"] and all(p["axis_kind"] in ("data factor", "method") and p["type"] in ("integer", "real", "string", "integer_list", "real_list", "string_list") for p in e["parameters"]) for e in d)' describe --format json
json_check 'd["experiment"] == "normal_mean" and [p["name"] for p in d["parameters"]] == ["n", "mu", "sigma"] and [m["name"] for m in d["metrics"]] == ["sample_mean", "covered", "quantiles"] and d["parameters"][0]["required"] and d["parameters"][2]["min"] == 0 and not d["parameters"][2]["min_inclusive"]' describe normal_mean --format json

# Markdown: one table row per parameter, in declaration order, with range and default.
"$DPMU" describe normal_mean >"$TMP/md"
if grep -qF '| `sigma` | real | method | 1 | > 0 |' "$TMP/md" && grep -qF '| `n` | integer | data factor | required | ≥ 1 |' "$TMP/md"; then
  pass
else
  fail "describe normal_mean markdown: $(cat "$TMP/md")"
fi

# Every registered experiment has a section in docs/configs.md and its tables are current.
if "$PY" "$SRC/scripts/update-configs-doc.py" "$DPMU" --check "$SRC/docs/configs.md" 2>"$TMP/err"; then
  pass
else
  fail "docs/configs.md drifted from dpmu describe: $(cat "$TMP/err")"
fi
# The check can fail: a drifted copy is detected, and a missing section is named.
sed 's/| `sigma` | real | method | 1 | > 0 |/| `sigma` | real | method | 2 | > 0 |/' "$SRC/docs/configs.md" >"$TMP/drift.md"
if ! "$PY" "$SRC/scripts/update-configs-doc.py" "$DPMU" --check "$TMP/drift.md" 2>/dev/null; then pass; else fail "drift not detected"; fi
grep -v 'dpmu describe cps_bma -->' "$SRC/docs/configs.md" >"$TMP/missing.md"
if ! "$PY" "$SRC/scripts/update-configs-doc.py" "$DPMU" --check "$TMP/missing.md" 2>"$TMP/err" && grep -qF "cps_bma" "$TMP/err"; then
  pass
else
  fail "a missing section is not reported"
fi

expect_exit 2 "unknown experiment 'nope'; registered experiments are" describe nope
expect_exit 2 "" describe normal_mean --format yaml
finish describe_test
