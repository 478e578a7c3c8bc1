#!/usr/bin/env bash
# End-to-end tests of `dpmu select` (LCSSF Algorithms 1 and 2, docs/methods.md §6): the non-private
# minimiser against an independent numpy best-subset computation, reproducibility with --seed,
# labels of reconstructed constants, clamping counts, and every bad input ending in a clear
# message with a non-zero exit.
# Usage: select_cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
PROS="$SRC/experiments/data/prostate.csv"
FIX="$SRC/tests/fixtures"


P8=lcavol,lweight,age,lbph,svi,lcp,gleason,pgg45
"$DPMU" select --help >/dev/null && pass || fail "dpmu select --help"

# --- independent check: with R large the constraint is inactive, so the non-private minimiser is
# best subset by c*RSS + phi*|M| (no intercept, standardized columns), computed here with numpy.
for phi in 0.5 2 8 40; do
  want=$("$PY" - "$PROS" "$phi" <<'EOF'
import sys, numpy as np
cols = "lcavol,lweight,age,lbph,svi,lcp,gleason,pgg45".split(",")
with open(sys.argv[1]) as f:
    head = f.readline().strip().split(",")
    rows = [list(map(float, l.strip().split(","))) for l in f if l.strip()]
a = np.array(rows)
def z(v):
    v = v - v.mean(); return v / np.sqrt(v @ v / (len(v) - 1))
X = np.column_stack([z(a[:, head.index(c)]) for c in cols]); y = z(a[:, head.index("lpsa")])
phi = float(sys.argv[2]); best = None
for m in range(256):
    idx = [j for j in range(8) if m >> j & 1]
    rss = y @ y if not idx else np.sum((y - X[:, idx] @ np.linalg.lstsq(X[:, idx], y, rcond=None)[0]) ** 2)
    s = 0.5 * rss + phi * len(idx)
    if best is None or s < best[0]: best = (s, m)
print(best[1])
EOF
)
  json_check "d['diagnostics']['non_private_minimiser']['mask'] == $want and d['selected_model']['mask'] == $want" \
    select --data "$PROS" --response lpsa --predictors $P8 --epsilon 1e12 --radius 1000 --penalty "$phi" \
    --data-bound auto --standardize --seed 3
done

# --- seeded runs are reproducible; labels and privacy flags
"$DPMU" select --data "$PROS" --response lpsa --predictors $P8 --epsilon 1 --radius 2 --penalty 5 --data-bound 3 --standardize --seed 11 >"$TMP/a"
"$DPMU" select --data "$PROS" --response lpsa --predictors $P8 --epsilon 1 --radius 2 --penalty 5 --data-bound 3 --standardize --seed 11 >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && pass || fail "same --seed gives different output"
json_check "d['settings']['candidate_models'] == 256 and d['settings']['lcssf_delta'] == 'r2_1pR2' and any('objective_scale c=0.5' in l for l in d['settings']['labels']) and any('kappa=2' in l for l in d['settings']['labels']) and d['private'] == False and abs(d['privacy']['l1_sensitivity'] - 81 - 1e-10*97*9*4) < 1e-9 and abs(d['privacy']['laplace_scale'] - d['privacy']['l1_sensitivity']) < 1e-9" \
  select --data "$PROS" --response lpsa --predictors $P8 --epsilon 1 --radius 2 --penalty 5 --data-bound 3 --standardize --seed 11
json_check "d['diagnostics']['clamped']['y_entries'] > 0 and d['diagnostics']['clamped']['x_entries'] > 0 and d['private'] == False" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 2 --seed 1
# a real release: "private": true, only the selected model (no non-private minimiser, no clamp counts)
json_check "d['private'] is True and d['private_reason'] == [] and 'diagnostics' not in d and 'research' not in d and 'non_private' not in json.dumps(d) and 'clamped' not in json.dumps(d) and set(d['selected_model']) == {'mask', 'predictors'}" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 2
json_check "d['private'] is True and 'diagnostics' not in d and d['released_variance'] == d['released_variance'] and 'discrete Laplace' in d['privacy']['sampler'] and d['privacy']['epsilon'] == 2" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 2 --algorithm 2 --delta 1e-6
# a singular submodel (a duplicated column) is handled without an error, in a release and seeded
awk -F, 'BEGIN{OFS=","} NR==1{print $0",lcavol2"; next} {print $0","$2}' "$PROS" >"$TMP/dup.csv"
json_check "d['private'] is True and 'selected_model' in d" \
  select --data "$TMP/dup.csv" --response lpsa --predictors lcavol,lcavol2,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 3
json_check "d['diagnostics']['singular_submodels'] == 2" \
  select --data "$TMP/dup.csv" --response lpsa --predictors lcavol,lcavol2,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 3 --seed 1
expect_error "for research runs only: add --seed" select --data "$PROS" --response lpsa --predictors lcavol --epsilon 1 --radius 2 --penalty 5 --data-bound auto
json_check "any('LCSSF-literal candidate' in l for l in d['settings']['labels']) and any('NOT DIFFERENTIALLY PRIVATE' in l for l in d['settings']['labels']) and d['private'] == False and abs(d['privacy']['l1_sensitivity'] - 9 - 1e-10*97*9*4) < 1e-9 and d['privacy']['epsilon'] is None" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 3 --lcssf-delta 1pR_2 --noise-factor 1 --seed 2
json_check "abs(d['privacy']['l1_sensitivity'] - 25 - 1e-10*97*4) < 1e-9 and d['settings']['predictor_bound'] == 1" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 2 --penalty 5 --data-bound 3 --lcssf-delta rpR_2 --seed 2
json_check "d['settings']['algorithm'] == 2 and any('Algorithm-2-like' in l for l in d['settings']['labels']) and d['variance_truncation'] >= 0.01 and 'released_variance' in d" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight,svi --algorithm 2 --delta 0.01 --epsilon 1 --radius 2 --penalty 2 --data-bound 3 --standardize --seed 4
json_check "d['settings']['alg2_selection'] == 'noisy_min' and d['privacy']['variance_laplace_scale'] > 0" \
  select --data "$PROS" --response lpsa --predictors lcavol,lweight,svi --algorithm 2 --delta 0.01 --epsilon 1 --radius 2 --penalty 2 --data-bound 3 --alg2-selection noisy_min --seed 4

# --- bad input: clear message, non-zero exit, never a crash
B=(--data "$PROS" --response lpsa --predictors lcavol,lweight --radius 2 --penalty 1 --data-bound 3)
expect_error "--epsilon is 0, but must be finite and > 0" select "${B[@]}" --epsilon 0
expect_error "--epsilon is -1" select "${B[@]}" --epsilon -1
expect_error "--epsilon is nan" select "${B[@]}" --epsilon nan
expect_error "needs --delta" select "${B[@]}" --epsilon 1 --algorithm 2
expect_error "--delta is 0, but must be in (0, 1)" select "${B[@]}" --epsilon 1 --algorithm 2 --delta 0
expect_error "--delta is 1.5" select "${B[@]}" --epsilon 1 --algorithm 2 --delta 1.5
expect_error "only used by --algorithm 2" select "${B[@]}" --epsilon 1 --delta 0.1
expect_error "--algorithm is 3, but must be 1 or 2" select "${B[@]}" --epsilon 1 --algorithm 3
expect_error "--radius is 0" select --data "$PROS" --response lpsa --predictors lcavol --radius 0 --penalty 1 --data-bound 3 --epsilon 1
expect_error "--penalty is -2, but must be finite and >= 0" select --data "$PROS" --response lpsa --predictors lcavol --radius 1 --penalty -2 --data-bound 3 --epsilon 1
expect_error "--data-bound is -1" select --data "$PROS" --response lpsa --predictors lcavol --radius 1 --penalty 1 --data-bound -1 --epsilon 1
expect_error "--data-bound 'big': expected a number or 'auto'" select --data "$PROS" --response lpsa --predictors lcavol --radius 1 --penalty 1 --data-bound big --epsilon 1
expect_error "no column 'nosuch'" select --data "$PROS" --response lpsa --predictors lcavol,nosuch --radius 1 --penalty 1 --data-bound 3 --epsilon 1
expect_error "named twice" select --data "$PROS" --response lpsa --predictors lcavol,lpsa --radius 1 --penalty 1 --data-bound 3 --epsilon 1
expect_error "unknown lcssf_delta 'r2'" select "${B[@]}" --epsilon 1 --lcssf-delta r2
expect_error "unknown alg2_selection" select "${B[@]}" --epsilon 1 --algorithm 2 --delta 0.1 --alg2-selection gumbel
expect_error "noise_factor is 0" select "${B[@]}" --epsilon 1 --noise-factor 0
expect_error "variance_floor is 0" select "${B[@]}" --epsilon 1 --algorithm 2 --delta 0.1 --variance-floor 0
expect_error "not finite" select --data "$FIX/nan.csv" --response a --predictors b --radius 1 --penalty 1 --data-bound 3 --epsilon 1
P21=$(seq -s, -f 'x%g' 1 21)
"$PY" -c "
import random; random.seed(1)
print(','.join(['y'] + ['x%d' % j for j in range(1, 22)]))
for i in range(30): print(','.join('%.3f' % random.uniform(-1, 1) for _ in range(22)))" >"$TMP/wide.csv"
expect_error "enumerated only for d <= 20" select --data "$TMP/wide.csv" --response y --predictors "$P21" --radius 1 --penalty 1 --data-bound 3 --epsilon 1

# --- the LCSSF experiments run end to end on their smoke configs
if "$DPMU" run "$SRC/configs/smoke/lei_simulation.yaml" --out "$TMP/sim.h5" --replicates 4 --quiet 2>"$TMP/err"; then
  "$DPMU" summarize "$TMP/sim.h5" --format json >"$TMP/sum.json" && "$PY" -c "
import json, sys
d = json.load(open('$TMP/sum.json'))
ok = len(d) == 128 and all(c['metrics']['prob_true_model[0]']['n_ok'] == 4 for c in d)
ok = ok and all(c['metrics']['penalty[10]']['mean'] == c['parameters']['n'] / 2 for c in d)
sys.exit(0 if ok else 1)" && pass || fail "lei_simulation smoke summary"
else
  fail "dpmu run lei_simulation smoke: $(cat "$TMP/err")"
fi
if "$DPMU" run "$SRC/configs/smoke/lei_real_data.yaml" --out "$TMP/real.h5" --replicates 4 --quiet 2>"$TMP/err"; then
  "$DPMU" summarize "$TMP/real.h5" --format json >"$TMP/sum.json" && "$PY" -c "
import json, sys
d = json.load(open('$TMP/sum.json'))
ok = len(d) == 27 and all(abs(sum(c['metrics']['selection_frequency[%d]' % j]['mean'] for j in range(256)) - 1) < 1e-12 for c in d)
sys.exit(0 if ok else 1)" && pass || fail "lei_real_data smoke summary"
else
  fail "dpmu run lei_real_data smoke: $(cat "$TMP/err")"
fi
if "$DPMU" run "$SRC/configs/smoke/selection_head_to_head.yaml" --out "$TMP/h2h.h5" --replicates 2 --quiet 2>"$TMP/err"; then
  "$DPMU" summarize "$TMP/h2h.h5" --format json >"$TMP/sum.json" && "$PY" -c "
import json, sys
d = json.load(open('$TMP/sum.json'))
lcssf = [c for c in d if c['parameters']['method'].startswith('lcssf')]
other = [c for c in d if not c['parameters']['method'].startswith('lcssf')]
ok = (len(d) == 64 and len(lcssf) == 32
      and all(c['metrics']['hpm_correct']['n_ok'] == 0 and c['metrics']['correct_per_penalty[0]']['n_ok'] == 2 for c in lcssf)
      and all(c['metrics']['hpm_correct']['n_ok'] == 2 for c in other)
      and not any(c['parameters']['method'].startswith('ssp_wishart') and c['parameters']['epsilon'] >= 1 for c in d))
sys.exit(0 if ok else 1)" && pass || fail "selection_head_to_head smoke summary"
else
  fail "dpmu run selection_head_to_head smoke: $(cat "$TMP/err")"
fi

echo "select_cli_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
