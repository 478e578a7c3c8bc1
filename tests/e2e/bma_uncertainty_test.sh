#!/usr/bin/env bash
# End-to-end tests of `dpmu bma --uncertainty` (docs/bma.md "Uncertainty") on held-out
# simulated data (5000 rows, 3 predictors in [0, 1], y = 0.5 + 0.4 x1 + 0.2 x3 + N(0, 0.1²) clamped
# to [0, 1]): a release is noise-aware by default; the JSON says which uncertainty its SDs and
# intervals carry and shows the sampler's diagnostics; at epsilon = 1 the noise-aware intervals
# contain the plug-in point estimates and are at least as wide; at epsilon = 10^6 they equal the
# non-private analysis within their Monte Carlo error; the privacy record is the same for both
# (post-processing); bad values and the sampler's restrictions are refused before any release.
# Usage: bma_uncertainty_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"

# heldout FILE ROWS: the held-out design (x2 is pure noise), seed 30.
heldout() {
  "$PY" - "$1" "$2" <<'PYEOF'
import random, sys
random.seed(30)
with open(sys.argv[1], "w") as f:
    f.write("x1,x2,x3,y\n")
    for _ in range(int(sys.argv[2])):
        x = [random.random() for _ in range(3)]
        y = min(1.0, max(0.0, 0.5 + 0.4 * (x[0] - 0.5) + 0.2 * (x[2] - 0.5) + random.gauss(0, 0.1)))
        f.write(",".join(f"{v:.6f}" for v in x + [y]) + "\n")
PYEOF
}
DATA="$TMP/heldout.csv"
heldout "$DATA" 5000
COMMON=(bma --data "$DATA" --response y --predictors x1,x2,x3 --prior g-prior)
PRIV=(--bounds 0,1 --seed 11 --ridge-draws 2000)

# Plug-in and noise-aware (the default) analyses of the same seeded release at epsilon = 1.
"$DPMU" "${COMMON[@]}" "${PRIV[@]}" --epsilon 1 --uncertainty plug-in >"$TMP/plug.json" 2>"$TMP/err" ||
  fail "plug-in run: $(cat "$TMP/err")"
"$DPMU" "${COMMON[@]}" "${PRIV[@]}" --epsilon 1 >"$TMP/aware.json" 2>"$TMP/err" || fail "noise-aware run: $(cat "$TMP/err")"
"$DPMU" "${COMMON[@]}" --non-private >"$TMP/exact.json" 2>"$TMP/err" || fail "non-private run: $(cat "$TMP/err")"
"$DPMU" "${COMMON[@]}" "${PRIV[@]}" --epsilon 1e6 --uncertainty noise-aware \
  >"$TMP/huge.json" 2>"$TMP/err" || fail "noise-aware run at epsilon 1e6: $(cat "$TMP/err")"

check() {
  if "$PY" -c "
import json, math, sys
P = json.load(open('$TMP/plug.json')); A = json.load(open('$TMP/aware.json'))
E = json.load(open('$TMP/exact.json')); H = json.load(open('$TMP/huge.json'))
names = ['x1', 'x2', 'x3']
pn, an, hn, en = P['non_thresholded'], A['non_thresholded'], H['non_thresholded'], E['non_private']
pi, ai, hi, ei = (x['credible_intervals']['intervals'] for x in (pn, an, hn, en))
ok = $1
sys.exit(0 if ok else 1)
"; then pass; else fail "$2"; fi
}
# The JSON states what the SDs and intervals carry.
check "pn['uncertainty']['kind'] == 'plug-in' and 'NOT' in pn['uncertainty']['carries'] and an['uncertainty']['kind'] == 'noise-aware' and 'privacy noise' in an['uncertainty']['carries'] and en['uncertainty']['kind'] == 'exact' and A['settings']['uncertainty'] == 'noise-aware' and P['settings']['uncertainty'] == 'plug-in'" \
  "uncertainty labels"
check "an['uncertainty']['sampler'] == 'data-augmentation' and an['uncertainty']['chains'] == 4 and an['uncertainty']['converged'] and an['uncertainty']['max_rhat'] <= 1.01 and an['uncertainty']['min_ess'] >= 400 and all(0 <= an['uncertainty']['pip_mc_se'][k] < 0.05 for k in names) and 'fallback_to_plug_in' not in an['uncertainty']" \
  "noise-aware Monte Carlo summary"
# Post-processing: the same release and privacy record.
check "P['released_gram'] == A['released_gram'] and P['privacy'] == A['privacy']" "release or privacy record differs"
# Noise-aware intervals contain the plug-in point estimates and are at least as wide.
check "all(ai[k][0] <= pn['posterior_means'][k] <= ai[k][1] for k in names)" "noise-aware intervals miss a plug-in estimate"
check "all(ai[k][1] - ai[k][0] >= pi[k][1] - pi[k][0] for k in names)" "a noise-aware interval is narrower than the plug-in one"
# epsilon = 10^6: the noise scale is 10^-5 against Gram entries of ~400, so the posterior given the
# release is the non-private one up to the sampler's proper priors on sigma^2 and the design (weak at
# n = 5000): PIPs within 4 MC SE + 0.01, means within 4 MC SE + 1 %, interval ends within 10 % of the
# width (the MC error of a 2.5 % quantile from >= 400 effective draws is ~5 % of it).
check "hn['uncertainty']['converged'] and all(abs(hn['posterior_inclusion_probabilities'][k] - en['posterior_inclusion_probabilities'][k]) <= 4 * hn['uncertainty']['pip_mc_se'][k] + 0.01 for k in names) and all(abs(hn['posterior_means'][k] - en['posterior_means'][k]) <= 4 * hn['uncertainty']['posterior_mean_mc_se'][k] + 0.01 * abs(en['posterior_means'][k]) + 1e-4 for k in names) and all(abs(hi[k][j] - ei[k][j]) <= 0.1 * (ei[k][1] - ei[k][0]) for k in names for j in (0, 1) if en['posterior_inclusion_probabilities'][k] > 0.99)" \
  "noise-aware analysis at epsilon 1e6 differs from the non-private one"
# and the check can fail: at epsilon = 1 they differ
check "any(abs(ai[k][0] - ei[k][0]) > 1e-4 * (ei[k][1] - ei[k][0]) for k in names)" "epsilon 1 equals non-private (check cannot fail)"

# Small n, small epsilon (300 rows, epsilon = 0.1 and 1: the Laplace scale 10 x (p+1)(p+2)/2 / epsilon
# = 100-1000 swamps Gram entries of ~25): the release says almost nothing, so the noise-aware PIP of
# the pure-noise predictor x2 stays near its prior inclusion probability 1/2 (|PIP - 1/2| <= 0.25,
# its MC SE < 0.05), where the plug-in analysis of the same release puts it at >= 0.9 or <= 0.1.
heldout "$TMP/small.csv" 300
for eps in 0.1 1; do
  for u in noise-aware plug-in; do
    "$DPMU" bma --data "$TMP/small.csv" --response y --predictors x1,x2,x3 --prior g-prior --bounds 0,1 --seed 1 \
      --epsilon "$eps" --uncertainty "$u" >"$TMP/small_${u}_$eps.json" 2>"$TMP/err" || fail "n = 300, $u, epsilon $eps: $(cat "$TMP/err")"
  done
  if "$PY" -c "
import json, sys
A = json.load(open('$TMP/small_noise-aware_$eps.json'))['non_thresholded']
P = json.load(open('$TMP/small_plug-in_$eps.json'))['non_thresholded']
prior = A['prior_inclusion_probabilities']['x2']
a, p = A['posterior_inclusion_probabilities']['x2'], P['posterior_inclusion_probabilities']['x2']
ok = prior == 0.5 and A['uncertainty']['converged'] and A['uncertainty']['pip_mc_se']['x2'] < 0.05 and abs(a - prior) <= 0.25 and (p >= 0.9 or p <= 0.1)
print(f'epsilon $eps: noise-aware PIP(x2) {a:.3f}, plug-in {p:.3f}', file=sys.stderr)
sys.exit(0 if ok else 1)
"; then pass; else fail "n = 300, epsilon $eps: the pure-noise predictor's noise-aware PIP is not near its prior"; fi
done

# Bad values are refused with a clear message before any release.
expect_error "--uncertainty must be noise-aware (the default for a release) or plug-in" "${COMMON[@]}" "${PRIV[@]}" --epsilon 1 --uncertainty bayes
expect_error "--noise-aware-draws" "${COMMON[@]}" "${PRIV[@]}" --epsilon 1 --noise-aware-draws 5
# the default's restrictions name the way to the paper's analysis
expect_error "--uncertainty plug-in" bma --data "$DATA" --response y --predictors x1,x2,x3 --prior hyper-g "${PRIV[@]}" --epsilon 1
expect_error "--uncertainty plug-in" "${COMMON[@]}" "${PRIV[@]}" --epsilon 1 --always-include x1
"$DPMU" bma --data "$DATA" --response y --predictors x1,x2,x3 --prior hyper-g "${PRIV[@]}" --epsilon 1 --uncertainty plug-in \
  >"$TMP/hyper.json" 2>"$TMP/err" && pass || fail "hyper-g with --uncertainty plug-in refused: $(cat "$TMP/err")"
expect_error "a --non-private fit has none" "${COMMON[@]}" --non-private --uncertainty noise-aware
finish bma_uncertainty_test
