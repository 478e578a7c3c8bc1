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

# --- private runs (bounds are public bounds on the raw values; HSB scores lie in [0, 100]) ---
# A real release (no --seed): "private": true, the released Gram matrix (unique entries), no
# diagnostic, no non-private answer, no clamp count, no data-derived scale.
json_check "d['private'] is True and d['private_reason']==[] and 'diagnostics' not in d and 'non_private' not in d and 'clamped_entries' not in json.dumps(d) and len(d['released_gram'])==4 and [len(r) for r in d['released_gram']]==[1,2,3,4] and d['released_gram_columns']==['female','write','math','read'] and abs(d['privacy']['l1_sensitivity']/((199/200)*((1+100*3)**2+1+3*100**2)/2)-1)<1e-8 and d['settings']['column_scale']=={'female':1,'write':1,'math':1,'read':1} and d['privacy']['epsilon']==0.9 and 'thresholded' in d and d['regularization']['non_thresholded']['regularization']>0 and d['confidence_sets']['accepted']==190" \
  bma --data "$HSB" --response read --predictors female,write,math --bounds 0,1,0,100,0,100,0,100 --epsilon 0.9 --threshold 0.95 --confidence 0.95 --simulations 200 --ridge-draws 2000
# --rescale divides by the public widths only: sensitivity (n-1)/n (p+1)^2
json_check "d['private'] is True and d['settings']['column_scale']=={'female':1,'write':100,'math':100,'read':100} and abs(d['privacy']['l1_sensitivity']-(199/200)*10)<1e-9 and all(math.isfinite(v) for v in d['posterior_means'].values())" \
  bma --data "$HSB" --response read --predictors female,write,math --bounds 0,1,0,100,0,100,0,100 --rescale --epsilon 0.9 --ridge-draws 2000
# Wishart: delta is required, k and B^2 follow from it; the floating-point sampler is labelled and warned about
json_check "d['private'] is True and d['privacy']['mechanism'].startswith('Wishart') and d['privacy']['delta']==1e-06 and d['privacy']['wishart_degrees_of_freedom']==math.floor(6+28*math.log(4e6)/0.81) and abs(d['privacy']['wishart_row_norm_squared']-(199/200)*6)<1e-12 and 'NOT hardened' in d['privacy']['sampler'] and all(math.isfinite(v) for v in d['posterior_inclusion_probabilities'].values())" \
  bma --data "$HSB" --response read --predictors female,write,math,science,socst --bounds 0,100 --rescale --epsilon 0.9 --mechanism wishart --delta 1e-6
if grep -q "not hardened against floating-point attacks" "$TMP/err"; then pass; else fail "no floating-point warning for a Wishart release"; fi
"$DPMU" bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 0.5 --mechanism wishart --delta 0.01 >/dev/null 2>"$TMP/err"
if grep -q "above min(1/n^2, 1e-5)" "$TMP/err"; then pass; else fail "no warning for a large delta"; fi
# confidence sets: 90% of 300 draws accepted, all PD at this ε; histograms integrate to 1, count
# every kept candidate, and their interval contains the point estimate
json_check "d['confidence_sets']['accepted']==270 and d['confidence_sets']['positive_definite']==270 and all(abs(sum(x*(b-a) for x,a,b in zip(h['density'],h['edges'][:-1],h['edges'][1:]))-1)<1e-9 and sum(h['counts'])==270 for h in list(d['confidence_sets']['posterior_means'].values())+list(d['confidence_sets']['posterior_inclusion_probabilities'].values()) if not h['degenerate']) and all(d['confidence_sets']['posterior_means'][k]['interval'][0]<=v<=d['confidence_sets']['posterior_means'][k]['interval'][1] for k,v in d['posterior_means'].items())" \
  bma --data "$HSB" --response read --predictors write,math,science --bounds 0,100 --rescale --epsilon 5000 --confidence 0.9 --simulations 300 --bins 8 --ridge-draws 500
# seeded = simulation: "private": false with the reason; clamp counts only there (bounds too narrow)
json_check "d['private'] is False and any('seed' in x for x in d['private_reason']) and d['diagnostics']['clamped_entries']>100 and d['settings']['seed']==3" \
  bma --data "$HSB" --response read --predictors write,math --bounds 40,60 --epsilon 0.5 --ridge-draws 1000 --seed 3
if grep -q "clamp" "$TMP/err"; then pass; else fail "no warning when the bounds clamp most values"; fi
# very large epsilon, bounds that clamp nothing: private answers converge to the non-private ones
"$DPMU" bma --data "$HSB" --response read --predictors write,math,science --non-private >"$TMP/np.json" 2>/dev/null
# (the plug-in analysis exactly; the noise-aware default within 4 MC SE + 0.01, its priors on sigma^2 and
# the design being weak at n = 200 but not absent)
json_check "all(abs(d['posterior_inclusion_probabilities'][k]-v)<1e-6 for k,v in json.load(open('$TMP/np.json'))['posterior_inclusion_probabilities'].items())" \
  bma --data "$HSB" --response read --predictors write,math,science --bounds 0,100 --epsilon 1e15 --ridge 0 --uncertainty plug-in
json_check "d['non_thresholded']['uncertainty']['kind'] == 'noise-aware' and all(abs(d['posterior_inclusion_probabilities'][k]-v) <= 4*d['non_thresholded']['uncertainty']['pip_mc_se'][k] + 0.01 for k,v in json.load(open('$TMP/np.json'))['posterior_inclusion_probabilities'].items())" \
  bma --data "$HSB" --response read --predictors write,math,science --bounds 0,100 --epsilon 1e15 --ridge 0 --seed 1
json_check "d['private'] is False and any('non-private' in x for x in d['private_reason'])" \
  bma --data "$HSB" --response read --predictors write,math --non-private
# same seed → identical output; different seed → different
"$DPMU" bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --rescale --epsilon 0.9 --seed 7 --ridge-draws 500 >"$TMP/s1" 2>&1
"$DPMU" bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --rescale --epsilon 0.9 --seed 7 --ridge-draws 500 >"$TMP/s2" 2>&1
"$DPMU" bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --rescale --epsilon 0.9 --seed 8 --ridge-draws 500 >"$TMP/s3" 2>&1
if cmp -s "$TMP/s1" "$TMP/s2"; then pass; else fail "same seed gave different output"; fi
if cmp -s "$TMP/s1" "$TMP/s3"; then fail "different seeds gave identical output"; else pass; fi
# Neighbouring data sets (one row replaced by an adversarial row: an outlier far outside the
# bounds, the corners of the box, a row inside): with the same seed the released Gram matrices
# differ by at most the stated L1 sensitivity, summed over the unique entries.
"$PY" - "$HSB" "$TMP" <<'PYEOF'
import csv, sys
src, tmp = sys.argv[1], sys.argv[2]
rows = list(csv.reader(open(src)))
head, body = rows[0], rows[1:]
cols = [head.index(c) for c in ("female", "write", "math", "read")]
cases = {"outlier": ["1e6", "-1e6", "1e9", "-1e9"], "upper": ["1", "100", "100", "100"],
         "lower": ["0", "0", "0", "0"], "mixed": ["1", "0", "100", "0"], "inside": ["0", "50", "50", "50"]}
for name, vals in cases.items():
    for k in (0, 57):
        b = [r[:] for r in body]
        for c, v in zip(cols, vals):
            b[k][c] = v
        with open("%s/nb_%s_%d.csv" % (tmp, name, k), "w", newline="") as f:
            csv.writer(f).writerows([head] + b)
PYEOF
"$DPMU" bma --data "$HSB" --response read --predictors female,write,math --bounds 0,1,0,100,0,100,0,100 --epsilon 1 --seed 11 --ridge 0 >"$TMP/g0.json" 2>/dev/null
for f in "$TMP"/nb_*.csv; do
  json_check "(lambda a,b: (lambda s: s<=d['privacy']['l1_sensitivity']*(1+1e-9) and s>0)(sum(abs(x-y) for ra,rb in zip(a,b) for x,y in zip(ra,rb))))(d['released_gram'], json.load(open('$TMP/g0.json'))['released_gram'])" \
    bma --data "$f" --response read --predictors female,write,math --bounds 0,1,0,100,0,100,0,100 --epsilon 1 --seed 11 --ridge 0
done
# the outlier case reaches a material share of the bound (17% here; the worst case needs the mean at a corner)
json_check "(lambda a,b: sum(abs(x-y) for ra,rb in zip(a,b) for x,y in zip(ra,rb)) > 0.1*d['privacy']['l1_sensitivity'])(d['released_gram'], json.load(open('$TMP/g0.json'))['released_gram'])" \
  bma --data "$TMP/nb_outlier_0.csv" --response read --predictors female,write,math --bounds 0,1,0,100,0,100,0,100 --epsilon 1 --seed 11 --ridge 0
# --synthetic-out never overwrites the input and refuses an existing file without --force
cp "$HSB" "$TMP/in.csv"
expect_error "is the input file" bma --data "$TMP/in.csv" --response read --predictors write --non-private --synthetic-out "$TMP/in.csv"
if cmp -s "$HSB" "$TMP/in.csv"; then pass; else fail "--synthetic-out changed the input"; fi
echo x >"$TMP/exists.csv"
expect_error "exists; choose a new file or add --force" bma --data "$HSB" --response read --predictors write --non-private --synthetic-out "$TMP/exists.csv"
expect_error "does not exist" bma --data "$HSB" --response read --predictors write --non-private --synthetic-out "$TMP/nofolder/x.csv"
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
expect_error "--bounds for every column: need finite l < u, got 1,1" bma --data "$HSB" --response read --predictors write --bounds 1,1 --epsilon 1
expect_error "--bounds for column 'read': need finite l < u" bma --data "$HSB" --response read --predictors write --bounds 0,1,5,-1 --epsilon 1
expect_error "--bounds: give l,u" bma --data "$HSB" --response read --predictors write --bounds 0,1,2 --epsilon 1
expect_error "epsilon is 0, but must be finite and > 0" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0
expect_error "epsilon is -1" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon -1
expect_error "epsilon (wishart) is 1, but must be in (0, 1)" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --mechanism wishart --delta 1e-6
expect_error "--delta is required for the wishart mechanism" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0.5 --mechanism wishart
expect_error "delta is 1.5" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0.5 --mechanism wishart --delta 1.5
expect_error "delta is 0," bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 0.5 --mechanism wishart --delta 0
expect_error "no column 'nosuch'" bma --data "$HSB" --response read --predictors write,nosuch --non-private
expect_error "--bounds: give l,u" bma --data "$HSB" --response read --predictors write --epsilon 1
expect_error "--epsilon is required" bma --data "$HSB" --response read --predictors write --bounds -1,1
expect_error "unknown mechanism 'gauss'" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --mechanism gauss
expect_error "unknown model prior" bma --data "$HSB" --response read --predictors write --non-private --model-prior poisson:1
expect_error "w is 2" bma --data "$HSB" --response read --predictors write --non-private --model-prior bernoulli:2
expect_error "unknown prior" bma --data "$HSB" --response read --predictors write --non-private --prior zellner
expect_error "is not one of --predictors" bma --data "$HSB" --response read --predictors write --always-include math --non-private
expect_error "named twice" bma --data "$HSB" --response read --predictors write,read --non-private
expect_error "--threshold is 1.5" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --threshold 1.5
expect_error "--ridge must be" bma --data "$HSB" --response read --predictors write --bounds -1,1 --epsilon 1 --ridge lots
expect_error "need a private run" bma --data "$HSB" --response read --predictors write --non-private --bounds 0,1
printf 'y,x\n1,2\n3,nan\n5,1\n2,2\n' >"$TMP/nan.csv"
expect_error "nan.csv" bma --data "$TMP/nan.csv" --response y --predictors x --non-private

# --- numerics: exact fits, scale, rank deficiency, settings that ruin an analysis ---
"$PY" - "$TMP" <<'PYEOF'
import random, sys
random.seed(1)
t = sys.argv[1]
def write(name, f):
    with open("%s/%s.csv" % (t, name), "w") as out:
        out.write("y,x1,x2,x3\n")
        for i in range(100):
            x1, x2, x3 = random.gauss(0, 1), random.gauss(0, 1), random.gauss(0, 1)
            out.write("%r,%r,%r,%r\n" % (f(x1), x1, x2, x3))
write("exact", lambda x: x)
write("exact2", lambda x: 2 * x + 3)
with open("%s/rd.csv" % t, "w") as out:
    out.write("y,a,b,c,k,d\n")
    for i in range(80):
        a, b, c = random.gauss(0, 1), random.gauss(0, 1), random.gauss(0, 1)
        out.write("%r,%r,%r,%r,0.1,%r\n" % (0.5 * a + random.gauss(0, 1), a, b, c, a + 2 * b))
with open("%s/yconst.csv" % t, "w") as out:
    out.write("y,a\n")
    for i in range(20):
        out.write("3.5,%r\n" % random.gauss(0, 1))
PYEOF
# y = x1 exactly (and y = 2 x1 + 3): the g-prior's finite limit makes the exact fit win (it used to
# give PIP(x1) = 0 and the intercept-only model); the other priors have infinite evidence: an error naming x1.
for f in exact exact2; do
  json_check "d['posterior_inclusion_probabilities']['x1'] == 1 and d['non_private']['highest_posterior_model'] == ['x1'] and d['non_private']['median_probability_model'] == ['x1'] and d['non_private']['models_exact_fit'] == 4 and d['non_private']['models_rank_deficient'] == 0 and abs(d['non_private']['top_models'][0]['log_marginal'] - 49*math.log(101)) < 1e-9 and d['non_private']['top_models'][0]['r_squared'] == 1" \
    bma --data "$TMP/$f.csv" --response y --predictors x1,x2,x3 --non-private --prior g-prior
  grep -q "fit the response exactly (R^2 = 1); the g-prior's finite limit" "$TMP/err" && pass || fail "no note on the exact fit"
  json_check "d['posterior_inclusion_probabilities']['x1'] > 0.99 and d['non_private']['highest_posterior_model'] == ['x1']" \
    bma --data "$TMP/$f.csv" --response y --predictors x1,x2,x3 --non-private --prior g-prior --mcmc
  for pr in zellner-siow zellner-siow-laplace hyper-g hyper-g-n robust bic aic; do
    expect_error "the model with predictors 'x1' fits the response 'y' exactly (R^2 = 1). Under --prior $pr an exact fit has infinite evidence" \
      bma --data "$TMP/$f.csv" --response y --predictors x1,x2,x3 --non-private --prior $pr
  done
  expect_error "predictors 'x1' fits the response 'y' exactly" bma --data "$TMP/$f.csv" --response y --predictors x2,x3,x1 --non-private --mcmc
done
# scale invariance: the PIPs of a predictor times 1e-160, of columns times 1e300 / 1e-300
"$PY" - "$HSB" "$TMP" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]
for name, scales in (("s160", {"write": 1e-160}), ("big", {"write": 1e300, "math": 1e300, "science": 1e-300})):
    with open("%s/%s.csv" % (sys.argv[2], name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(h)
        for r in rows[1:]:
            r = list(r)
            for c, s in scales.items():
                r[h.index(c)] = repr(float(r[h.index(c)]) * s)
            w.writerow(r)
PYEOF
"$DPMU" bma --non-private --data "$HSB" --response math --predictors read,write,science,female >"$TMP/np4.json" 2>/dev/null
for f in s160 big; do
  json_check "all(abs(d['posterior_inclusion_probabilities'][k]-v) < 1e-12 for k,v in json.load(open('$TMP/np4.json'))['posterior_inclusion_probabilities'].items())" \
    bma --non-private --data "$TMP/$f.csv" --response math --predictors read,write,science,female
done
json_check "abs(d['posterior_means']['write'] * 1e-160 - json.load(open('$TMP/np4.json'))['posterior_means']['write']) < 1e-9 * abs(json.load(open('$TMP/np4.json'))['posterior_means']['write'])" \
  bma --non-private --data "$TMP/s160.csv" --response math --predictors read,write,science,female
# constant and collinear predictors: still excluded (as BAS), now named on stderr
json_check "d['posterior_inclusion_probabilities']['k'] == 0 and d['non_private']['models_rank_deficient'] == 18" \
  bma --non-private --data "$TMP/rd.csv" --response y --predictors a,b,c,k,d
grep -q "predictor 'k' is constant; every model that contains it is rank-deficient" "$TMP/err" && pass || fail "constant predictor not named: $(cat "$TMP/err")"
grep -q "predictor 'd' is collinear with 'a', 'b'" "$TMP/err" && pass || fail "collinear predictor not named: $(cat "$TMP/err")"
grep -q "18 of 32 models are rank-deficient" "$TMP/err" && pass || fail "excluded models not counted on stderr"
# ... but never in a release: the collinearity of the confidential columns is not disclosed
json_check "d['private'] is True" bma --data "$TMP/rd.csv" --response y --predictors a,b,c,k,d --bounds -5,5 --epsilon 1 --ridge-draws 300
if grep -q "collinear\|constant" "$TMP/err"; then fail "a release talked about the confidential columns: $(cat "$TMP/err")"; else pass; fi
expect_error "the response 'y' is constant (every value is 3.5)" bma --non-private --data "$TMP/yconst.csv" --response y --predictors a
expect_error "--synthetic-out needs a full-rank Gram matrix" bma --non-private --data "$TMP/rd.csv" --response y --predictors a,b,c,k,d --synthetic-out "$TMP/syn_rd.csv"
# hyper-g with a huge a: the posterior is the prior (log B -> 0), not NaN dropped silently
json_check "all(abs(v - 0.5) < 1e-6 for v in d['posterior_inclusion_probabilities'].values())" \
  bma --non-private --data "$HSB" --response read --predictors write,math --prior hyper-g --a 1e50 --model-prior uniform
# --ridge 0 raised by the positive-definiteness fallback: said on stderr and in the output
json_check "d['regularization']['requested'] == 0 and d['regularization']['non_thresholded']['fallback'] is True and d['regularization']['non_thresholded']['regularization'] > 0" \
  bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --epsilon 0.01 --ridge 0 --seed 1
grep -q -- "--ridge 0 leaves the non_thresholded released matrix G\* + rI not positive definite; the ridge was raised to" "$TMP/err" && pass || fail "--ridge 0 overridden silently: $(cat "$TMP/err")"
# an empty Sec. 5.1 confidence set is said on stderr and in the output
json_check "d['confidence_sets']['empty'] is True and d['confidence_sets']['posterior_inclusion_probabilities'] == {}" \
  bma --data "$HSB" --response read --predictors write,math,science --bounds 0,100 --epsilon 0.001 --confidence 0.9 --simulations 50 --ridge-draws 300 --seed 2
grep -q "confidence set is empty" "$TMP/err" && pass || fail "empty confidence set not noted"
# magnitudes no double can hold: refused up front, in terms of the options ("l1_sensitivity is inf", "regularize: matrix is nan")
expect_error "--bounds: widths u - l up to 1.9999999999999999e+200 make the Gram matrix" bma --data "$HSB" --response read --predictors write --bounds -1e200,1e200 --epsilon 1
expect_error "--epsilon is 9.9998886718268301e-321, but must be at least 1e-12" bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1e-320 --seed 1
expect_error "with these --bounds gives noise of magnitude inf" bma --data "$HSB" --response read --predictors write --bounds 0,1e140 --epsilon 1e-12 --mechanism wishart --delta 1e-6 --seed 1
# CSV separators
tr ',' ';' <"$HSB" >"$TMP/semi.csv"
json_check "all(abs(d['posterior_inclusion_probabilities'][k]-v)<1e-15 for k,v in json.load(open('$TMP/np.json'))['posterior_inclusion_probabilities'].items())" \
  bma --data "$TMP/semi.csv" --response read --predictors write,math,science --non-private
json_check "d['private'] is True" bma --data "$TMP/semi.csv" --sep semicolon --response read --predictors write --bounds 0,100 --epsilon 1 --ridge-draws 300
expect_error "no column 'write'; columns are id;female" bma --data "$TMP/semi.csv" --sep comma --response read --predictors write --non-private

# --- coefficients (docs/bma.md "Coefficients"): SDs, intercept = mean of read, intervals around the means
json_check "all(d['non_private']['posterior_sds'][k] > 0 for k in ['write','math']) and abs(d['non_private']['intercept']['posterior_mean'] - 52.23) < 1e-9 and d['non_private']['intercept']['posterior_sd'] > 0 and all(d['non_private']['credible_intervals']['intervals'][k][0] < d['non_private']['posterior_means'][k] < d['non_private']['credible_intervals']['intervals'][k][1] for k in ['write','math']) and d['non_private']['credible_intervals']['level'] == 0.9 and d['non_private']['best_predictive_model'] == ['write','math','female'] and abs(d['non_private']['predictor_means']['write'] - 52.775) < 1e-9" \
  bma --data "$HSB" --response read --predictors write,math,female --non-private --prior g-prior --credible-level 0.9
# a release prints SDs and intervals of G* (released) but no intercept mean (the means are not released)
json_check "d['non_thresholded']['intercept']['posterior_mean'] is None and 'credible_interval' not in d['non_thresholded']['intercept'] and all(v is not None and v > 0 for v in d['non_thresholded']['posterior_sds'].values()) and 'predictor_means' not in json.dumps(d)" \
  bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --epsilon 1 --ridge-draws 300 --seed 3
# p > n: MCMC over the estimable models
head -9 "$HSB" >"$TMP/small.csv"
json_check "d['settings']['search'] == 'mcmc' and all(len(m['predictors']) + 1 < 8 for m in d['non_private']['top_models'])" \
  bma --data "$TMP/small.csv" --response read --predictors $HP --non-private --seed 4
grep -q "not estimable" "$TMP/err" && pass || fail "p > n not noted: $(cat "$TMP/err")"
# --- bounded model searches (docs/bma.md "Cost of the model search") ---
# 40 predictors, 300 rows: MCMC with a stated iteration bound; --mcmc-max-models caps the table of
# stored models (the chain goes on, re-evaluating the models it cannot store).
"$PY" - "$TMP/p40.csv" <<'EOF_PY'
import random, sys
random.seed(3)
p = 40
with open(sys.argv[1], "w") as f:
    f.write(",".join([f"x{j}" for j in range(p)] + ["y"]) + "\n")
    for i in range(300):
        x = [random.gauss(0, 1) for _ in range(p)]
        y = 0.4 * x[0] + 0.3 * x[1] + random.gauss(0, 1)
        f.write(",".join(f"{v:.6f}" for v in x + [y]) + "\n")
EOF_PY
P40=$(seq -s, 0 39 | sed 's/\([0-9][0-9]*\)/x\1/g')
P20=$(seq -s, 0 19 | sed 's/\([0-9][0-9]*\)/x\1/g')
json_check "d['settings']['search']=='mcmc' and d['non_private']['mcmc']['max_iterations']==20000 and d['non_private']['mcmc']['iterations']<=20000 and d['non_private']['mcmc']['models_visited']<=500 and d['non_private']['mcmc']['evaluations_unstored']>0 and d['non_private']['highest_posterior_model'][:2]==['x0','x1']" \
  bma --data "$TMP/p40.csv" --response y --predictors $P40 --non-private --seed 1 --mcmc-max-iterations 20000 --mcmc-max-models 500
# bounds whose memory this machine lacks are refused before any work, naming the option
expect_error "--mcmc-max-models 1000000000000000 (the MCMC table" \
  bma --data "$TMP/p40.csv" --response y --predictors $P40 --non-private --mcmc-max-models 1000000000000000
expect_error "--mcmc-max-models is 0" bma --data "$TMP/p40.csv" --response y --predictors $P40 --non-private --mcmc-max-models 0
# a search longer than 2 s shows a progress line with an ETA on stderr (--progress: also when stderr
# is not a terminal); standard output stays the JSON alone (json_check parses it)
json_check "d['settings']['search']=='enumeration'" \
  bma --data "$TMP/p40.csv" --response y --predictors $P20 --non-private --progress
if grep -q "dpmu bma: models enumerated [0-9]*/1048576 .*ETA" "$TMP/err"; then pass; else
  fail "--progress printed no progress line for a 2^20 enumeration: $(cat "$TMP/err")"; fi
# without --progress and with stderr a file: no progress line
json_check "True" bma --data "$TMP/p40.csv" --response y --predictors $P20 --non-private
if grep -q "models enumerated" "$TMP/err"; then fail "progress line without --progress on a non-terminal"; else pass; fi

# the limits are in --help
if "$DPMU" bma --help | tr -s ' \n' ' ' | grep -q "at most 63"; then pass; else fail "--help does not state the 63-predictor limit"; fi
# the model-space image (python3 + matplotlib)
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  json_check "True" bma --data "$HSB" --response read --predictors $HP --non-private --plot "$TMP/models.png"
  if [ "$(head -c 4 "$TMP/models.png" | od -An -c | tr -d ' ')" = "211PNG" ]; then pass; else fail "--plot wrote no PNG"; fi
else
  echo "SKIP: --plot (python3 matplotlib is not installed)"
fi

# --- count options read in 64 bits and bounded up front (issue round 4: B2, W6, B6) ---
# --noise-aware-draws >= 21474837 overflowed 100*draws in an int and fell back to the plug-in
# analysis; 2^31 wrapped to a negative; --bins 2e9 grew to 21 GB before the kernel killed it.
PRIV=(bma --data "$HSB" --response read --predictors math,science --bounds 0,100 --epsilon 1 --seed 1)
expect_error "--noise-aware-draws must be a whole number in [20, 100000], got 21474837" "${PRIV[@]}" --uncertainty noise-aware --noise-aware-draws 21474837
expect_error "--noise-aware-draws must be a whole number in [20, 100000], got 2147483648" "${PRIV[@]}" --uncertainty noise-aware --noise-aware-draws 2147483648
expect_error "--noise-aware-draws must be a whole number in [20, 100000], got 4294967316" "${PRIV[@]}" --uncertainty noise-aware --noise-aware-draws 4294967316
expect_error "--bins must be a whole number in [1, 100000], got 2000000000" "${PRIV[@]}" --confidence 0.9 --bins 2000000000
expect_error "--simulations must be a whole number in [1, 100000000], got 4294967396" "${PRIV[@]}" --confidence 0.9 --simulations 4294967396
expect_error "--ridge-draws must be a whole number in [100, 100000000], got 4294967396" "${PRIV[@]}" --ridge-draws 4294967396
expect_error "--top-models must be a whole number in [0, 100000], got 4294967306" "${PRIV[@]}" --top-models 4294967306

# --- a private release whose JSON holds a non-UTF-8 byte (B1): before, it was charged and then lost to
# json type_error.316; now the byte becomes U+FFFD, the output is delivered and charged once ---
printf 'gr\xf6\xdfe,read\n' >"$TMP/latin1.csv"
for i in $(seq 1 60); do echo "$((i % 7)),$((40 + i % 13))"; done >>"$TMP/latin1.csv"
"$DPMU" ledger init "$TMP/latin1.jsonl" --budget 10 >/dev/null 2>&1
if "$DPMU" bma --data "$TMP/latin1.csv" --response read --predictors "$(printf 'gr\xf6\xdfe')" --bounds 0,100 --epsilon 1 \
     --ledger "$TMP/latin1.jsonl" >"$TMP/out" 2>"$TMP/err" &&
   "$PY" -c "import json,sys; d=json.load(open(sys.argv[1], encoding='utf-8')); sys.exit(0 if 'gr\ufffd\ufffde' in d['posterior_inclusion_probabilities'] else 1)" "$TMP/out" &&
   [ "$("$DPMU" ledger "$TMP/latin1.jsonl" | "$PY" -c "import json,sys; print(json.load(sys.stdin)['spent']['releases'])")" = 1 ]; then
  pass
else
  fail "Latin-1 column name in a private release: exit/output/ledger wrong: $(head -c 600 "$TMP/err")"
fi

echo "bma e2e: $passes passed, $failures failed"
[ $failures -eq 0 ]
