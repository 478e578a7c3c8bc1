#!/usr/bin/env bash
# End-to-end tests of `dpmu bma`: the non-private run against BAS (tests/reference/
# bma_bas_reference.json), the private outputs (finite, PD ridge, thresholded version, confidence
# sets, clamping count, reproducibility by seed), Prop. 3 synthetic data round trip, and every bad
# input ending in a clear message with a non-zero exit.
# Usage: bma_cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
HSB="$SRC/experiments/data/hsb2.csv"
REF="$SRC/tests/reference/bma_bas_reference.json"


HP=female,race,ses,schtyp,prog,write,math,science,socst
# --- non-private vs BAS (configuration 2 = JZS, 3 = ZS-null, 4 = BIC, all beta-binomial(1,1)) ---
for pair in "2 zellner-siow" "3 zellner-siow-laplace" "4 bic" "0 g-prior"; do
  set -- $pair
  json_check "all(abs(d['posterior_inclusion_probabilities'][k]-v)<1e-6 for k,v in zip(r['configurations'][$1]['predictors'], r['configurations'][$1]['posterior_inclusion_probabilities'])) and all(abs(d['posterior_means'][k]-v)<1e-6 for k,v in zip(r['configurations'][$1]['predictors'], r['configurations'][$1]['posterior_means']))" \
    bma --data "$HSB" --response read --predictors $HP --non-private --prior $2
done
# top model probability equals BAS's largest posterior model probability
json_check "abs(d['non_private']['top_models'][0]['posterior_probability']-r['configurations'][2]['model_probabilities'][0])<1e-6 and d['non_private']['highest_posterior_model']==['math','science','socst'] and d['non_private']['median_probability_model']==['math','science','socst']" \
  bma --data "$HSB" --response read --predictors $HP --non-private --prior zellner-siow
# forced predictors: prior inclusion of free predictors is the Bernoulli w
json_check "d['non_private']['prior_inclusion_probabilities']['female']==1 and d['non_private']['prior_inclusion_probabilities']['math']==0.2 and d['posterior_inclusion_probabilities']['female']==1 and d['non_private']['models_evaluated']==128" \
  bma --data "$HSB" --response read --predictors $HP --always-include female,race --model-prior bernoulli:0.2 --non-private

# --- private runs ---
json_check "d['privacy']['mechanism']=='laplace' and d['privacy']['clamped_entries']==0 and all(math.isfinite(v) for v in d['posterior_means'].values()) and 'thresholded' in d and d['regularization']['non_thresholded']['regularization']>0 and d['confidence_sets']['accepted']==190" \
  bma --data "$HSB" --response read --predictors female,write,math --bounds -0.5,0.5 --rescale --epsilon 0.9 --threshold 0.95 --confidence 0.95 --simulations 200 --ridge-draws 2000
json_check "d['privacy']['mechanism']=='wishart' and d['privacy']['delta']==0.005 and d['privacy']['wishart_degrees_of_freedom']==237 and all(math.isfinite(v) for v in d['posterior_inclusion_probabilities'].values())" \
  bma --data "$HSB" --response read --predictors female,write,math,science,socst --bounds -0.5,0.5 --rescale --epsilon 0.9 --mechanism wishart
# confidence sets: 90% of 300 draws accepted, all PD at this ε; histograms integrate to 1, count
# every kept candidate, and their interval contains the point estimate
json_check "d['confidence_sets']['accepted']==270 and d['confidence_sets']['positive_definite']==270 and all(abs(sum(x*(b-a) for x,a,b in zip(h['density'],h['edges'][:-1],h['edges'][1:]))-1)<1e-9 and sum(h['counts'])==270 for h in list(d['confidence_sets']['posterior_means'].values())+list(d['confidence_sets']['posterior_inclusion_probabilities'].values()) if not h['degenerate']) and all(d['confidence_sets']['posterior_means'][k]['interval'][0]<=v<=d['confidence_sets']['posterior_means'][k]['interval'][1] for k,v in d['posterior_means'].items())" \
  bma --data "$HSB" --response read --predictors write,math,science --bounds -0.5,0.5 --rescale --epsilon 50 --confidence 0.9 --simulations 300 --bins 8 --ridge-draws 500
# bounds too narrow for the centred data: entries are clamped and counted
json_check "d['privacy']['clamped_entries']>100" \
  bma --data "$HSB" --response read --predictors write,math --bounds -1,1 --epsilon 0.5 --ridge-draws 1000
# very large epsilon: private answers converge to the non-private ones
"$DPMU" bma --data "$HSB" --response read --predictors write,math,science --non-private >"$TMP/np.json" 2>/dev/null
json_check "all(abs(d['posterior_inclusion_probabilities'][k]-v)<1e-6 for k,v in json.load(open('$TMP/np.json'))['posterior_inclusion_probabilities'].items())" \
  bma --data "$HSB" --response read --predictors write,math,science --bounds -100,100 --epsilon 1e15 --ridge 0
# same seed → identical output; different seed → different
"$DPMU" bma --data "$HSB" --response read --predictors write,math --bounds -0.5,0.5 --rescale --epsilon 0.9 --seed 7 --ridge-draws 500 >"$TMP/s1" 2>&1
"$DPMU" bma --data "$HSB" --response read --predictors write,math --bounds -0.5,0.5 --rescale --epsilon 0.9 --seed 7 --ridge-draws 500 >"$TMP/s2" 2>&1
"$DPMU" bma --data "$HSB" --response read --predictors write,math --bounds -0.5,0.5 --rescale --epsilon 0.9 --seed 8 --ridge-draws 500 >"$TMP/s3" 2>&1
if cmp -s "$TMP/s1" "$TMP/s2"; then pass; else fail "same seed gave different output"; fi
if cmp -s "$TMP/s1" "$TMP/s3"; then fail "different seeds gave identical output"; else pass; fi
# Prop. 3: synthetic data reproduce the non-private analysis
"$DPMU" bma --data "$HSB" --response read --predictors write,math,science --non-private --synthetic-out "$TMP/syn.csv" >/dev/null 2>&1
json_check "all(abs(d['posterior_inclusion_probabilities'][k]-v)<1e-8 for k,v in json.load(open('$TMP/np.json'))['posterior_inclusion_probabilities'].items()) and all(abs(d['posterior_means'][k]-v)<1e-8 for k,v in json.load(open('$TMP/np.json'))['posterior_means'].items())" \
  bma --data "$TMP/syn.csv" --response read --predictors write,math,science --non-private

# p = 26 > 24: MCMC search with its stopping rule finds the true model {x0, x3}
"$PY" - "$TMP/wide.csv" <<'PYEOF'
import random, sys
random.seed(5)
p = 26
with open(sys.argv[1], "w") as f:
    f.write(",".join(["y"] + ["x%d" % j for j in range(p)]) + "\n")
    for i in range(300):
        x = [random.gauss(0, 1) for _ in range(p)]
        y = 0.5 * x[0] - 0.4 * x[3] + random.gauss(0, 1)
        f.write(",".join("%.6f" % v for v in [y] + x) + "\n")
PYEOF
WIDE=$(seq -s, -f 'x%g' 0 25)
json_check "d['settings']['search']=='mcmc' and d['non_private']['mcmc']['converged'] and d['non_private']['highest_posterior_model']==['x0','x3'] and d['posterior_inclusion_probabilities']['x0']>0.99" \
  bma --data "$TMP/wide.csv" --response y --predictors "$WIDE" --non-private --prior bic

# --- bad input: clear message, non-zero exit ---
expect_error "--delta applies to the wishart mechanism only" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --delta 0.1
expect_error "lower is 0, but must be < 0" bma --data "$HSB" --response read --predictors write --bounds 0,1 --epsilon 1
expect_error "upper is -1, but must be > 0" bma --data "$HSB" --response read --predictors write --bounds -2,-1 --epsilon 1
expect_error "epsilon is 0, but must be finite and > 0" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0
expect_error "epsilon is -1" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon -1
expect_error "epsilon is 1, but must be in (0, 1)" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --mechanism wishart
expect_error "delta is 1.5" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0.5 --mechanism wishart --delta 1.5
expect_error "delta is 0," bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0.5 --mechanism wishart --delta 0
expect_error "no column 'nosuch'" bma --data "$HSB" --response read --predictors write,nosuch --non-private
expect_error "--bounds l,u is required" bma --data "$HSB" --response read --predictors write --epsilon 1
expect_error "--epsilon is required" bma --data "$HSB" --response read --predictors write --bounds -1,1
expect_error "unknown mechanism 'gauss'" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --mechanism gauss
expect_error "unknown model prior" bma --data "$HSB" --response read --predictors write --non-private --model-prior poisson:1
expect_error "w is 2" bma --data "$HSB" --response read --predictors write --non-private --model-prior bernoulli:2
expect_error "unknown prior" bma --data "$HSB" --response read --predictors write --non-private --prior zellner
expect_error "is not one of --predictors" bma --data "$HSB" --response read --predictors write --always-include math --non-private
expect_error "named twice" bma --data "$HSB" --response read --predictors write,read --non-private
expect_error "--threshold is 1.5" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --threshold 1.5
expect_error "--ridge must be" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --ridge lots
printf 'y,x\n1,2\n3,nan\n5,1\n2,2\n' >"$TMP/nan.csv"
expect_error "nan.csv" bma --data "$TMP/nan.csv" --response y --predictors x --non-private

echo "bma e2e: $passes passed, $failures failed"
[ $failures -eq 0 ]
