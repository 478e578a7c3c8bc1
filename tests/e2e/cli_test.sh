#!/usr/bin/env bash
# End-to-end tests of the `dpmu` command: outputs against the HSB2 reference values and
# every bad input ending in a clear message with a non-zero exit.
# Usage: cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
HSB="$SRC/experiments/data/hsb2.csv"
FIX="$SRC/tests/fixtures"




# --- help and version
"$DPMU" --help >/dev/null && pass || fail "dpmu --help"
"$DPMU" test --help >/dev/null && pass || fail "dpmu test --help"
"$DPMU" --version | grep -q "dpmu 0" && pass || fail "dpmu --version"

# --- reference values, every prior, both HSB tests
REF="$SRC/tests/reference/hsb2_tests.json"
for prior in g-prior zellner-siow hyper-g hyper-g-n robust bic aic lr; do
  want1=$("$PY" -c "import json; print(json.load(open('$REF'))['tests'][0]['log_statistic']['$prior'])")
  want2=$("$PY" -c "import json; print(json.load(open('$REF'))['tests'][1]['log_statistic']['$prior'])")
  json_check "abs(d['log_statistic'] - ($want1)) < 1e-6 and d['p0'] == 1 and d['n'] == 200" \
    test --non-private --data "$HSB" --response math --tested female --prior "$prior"
  json_check "abs(d['log_statistic'] - ($want2)) < 1e-6 and d['p0'] == 2 and abs(d['two_log_likelihood_ratio'] - 42.92716022878533) < 1e-9" \
    test --non-private --data "$HSB" --response math --common science --tested read --prior "$prior"
done
json_check "abs(d['posterior_probability_h1'] - 0.0713) < 0.0005 and d['prior_parameters']['g'] == 200" \
  test --non-private --data "$HSB" --response math --tested female --prior g-prior
json_check "d['posterior_probability_h1'] > 0.99" \
  test --non-private --data "$HSB" --response math --common science --tested read
json_check "'posterior_probability_h1' not in d and d['statistic'] == 'log_information_criterion'" \
  test --non-private --data "$HSB" --response math --tested female --prior lr
json_check "abs(d['posterior_probability_h1'] - 1/(1 + 3*0.07133234071119672**-1*(1-0.07133234071119672))) < 1e-9" \
  test --non-private --data "$HSB" --response math --tested female --prior-h0 0.75
json_check "d['prior_parameters']['g'] == 50" \
  test --non-private --data "$HSB" --response math --tested female --g 50
json_check "len(d['tested']) == 2 and d['p'] == 2 and d['p0'] == 3" \
  test --non-private --data "$HSB" --response math --common science,socst --tested read,write --prior zellner-siow
json_check "d['common'] == [] and d['p0'] == 1" \
  test --non-private --data "$HSB" --response math --common "" --tested female

# --- bad input: clear message, non-zero exit, never a crash
expect_error "no column 'nosuch'" test --non-private --data "$HSB" --response math --tested nosuch
expect_error "unknown prior 'zelner'" test --non-private --data "$HSB" --response math --tested female --prior zelner
expect_error "a is 2, but must be finite and > 2" test --non-private --data "$HSB" --response math --tested female --prior hyper-g --a 2
expect_error "g is -1" test --non-private --data "$HSB" --response math --tested female --g -1
expect_error "--prior-h0 is 1.5" test --non-private --data "$HSB" --response math --tested female --prior-h0 1.5
expect_error "named twice" test --non-private --data "$HSB" --response math --tested math
expect_error "'five' is not a number" test --non-private --data "$FIX/non_numeric.csv" --response a --tested b
expect_error "not finite" test --non-private --data "$FIX/nan.csv" --response a --tested b
expect_error "empty cell" test --non-private --data "$FIX/empty_cell.csv" --response a --tested b
expect_error "File does not exist" test --non-private --data "$TMP/none.csv" --response a --tested b
expect_error "--tested is required" test --non-private --data "$HSB" --response math
printf 'y,x,z\n1,2,4\n2,3,6\n' > "$TMP/few.csv"
expect_error "at least p0 + p + 1" test --non-private --data "$TMP/few.csv" --response y --common x --tested z
# A subset whose statistic cannot be computed (here: the tested column is constant within most
# subsets) does not stop a private release: it contributes the public value failed_subset_value and
# the release goes on (whether an output exists must not depend on the data).
"$PY" -c "
import random
random.seed(3)
print('y,x')
for i in range(40):
    x = 1 if i in (5, 17) else 0
    print('%.6f,%d' % (random.gauss(0, 1) + x, x))
" >"$TMP/sparse.csv"
json_check "d['private'] is True and 'diagnostics' not in d and math.isfinite(d['log_statistic'])" \
  test --data "$TMP/sparse.csv" --response y --tested x --epsilon 1 --groups 10
json_check "d['private'] is False and d['diagnostics']['failed_subsets'] >= 8 and d['diagnostics']['subset_statistics'].count(d['settings']['failed_subset_value']) >= 8" \
  test --data "$TMP/sparse.csv" --response y --tested x --epsilon 1 --groups 10 --seed 1
json_check "d['private'] is True and math.isfinite(d['log_statistic'])" \
  test --data "$TMP/sparse.csv" --response y --tested x --prior lr --censor 0,7 --epsilon 1 --groups 10 --simulations 200
# Unsigned options refuse negative and out-of-range values (no silent wrap to 2^64 - 1)
expect_error "--seed: '-1' is not an unsigned integer" test --data "$HSB" --response math --tested female --epsilon 1 --groups 10 --seed -1
expect_error "--seed: '18446744073709551616' is not an unsigned integer" test --data "$HSB" --response math --tested female --epsilon 1 --groups 10 --seed 18446744073709551616
expect_error "--groups: '-3' is not an unsigned integer" test --data "$HSB" --response math --tested female --epsilon 1 --groups -3
expect_error "--simulations: '-1' is not an unsigned integer" bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --confidence 0.9 --simulations -1
expect_error "--seed: '-5' is not an unsigned integer" select --data "$SRC/experiments/data/prostate.csv" --response lpsa --predictors lcavol --epsilon 1 --radius 1 --penalty 1 --data-bound 3 --seed -5
printf 'y,x,z\n1,1,2\n2,2,4\n4,3,6\n3,4,8\n' > "$TMP/collinear.csv"
expect_error "'z' is collinear" test --non-private --data "$TMP/collinear.csv" --response y --common x --tested z
printf 'y,x\n1,1\n3,2\n5,3\n7,4\n' > "$TMP/exact.csv"
expect_error "R² = 1" test --non-private --data "$TMP/exact.csv" --response y --tested x

# --- differentially private tests
json_check "d['private'] is False and any('seed' in x for x in d['private_reason']) and d['settings']['seed'] == 7 and d['settings']['num_subsets'] == 10 and d['settings']['subset_sizes'] == [20]*10 and d['privacy']['mechanism'].startswith('Laplace') and abs(d['settings']['censoring_limits']['upper'] - 4.59511985013459) < 1e-9 and abs(d['privacy']['l1_sensitivity'] - 2*4.59511985013459/10) < 1e-12 and d['diagnostics']['failed_subsets'] == 0 and len(d['diagnostics']['subset_statistics']) == 10 and 0 <= d['posterior_probability_h1'] <= 1 and 'r_squared' not in d" \
  test --data "$HSB" --response math --tested female --epsilon 8 --groups 10 --seed 7
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --seed 11 > "$TMP/a.json"
"$DPMU" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --seed 11 > "$TMP/b.json"
cmp -s "$TMP/a.json" "$TMP/b.json" && pass || fail "same seed gave different output"
json_check "d['privacy']['mechanism'].startswith('analytic Gaussian') and d['privacy']['calibration'] == 'analytic-gaussian-exact' and abs(d['privacy']['l2_sensitivity'] - 0.7) < 1e-12 and len(d['critical_values']) == 2 and d['critical_values'][0]['uncorrected'] > 3.84 and d['settings']['statistic'] == 'two_log_likelihood_ratio' and 0 <= d['log_statistic'] <= 7" \
  test --data "$HSB" --response math --common science --tested read --prior lr --epsilon 1 --delta 0.25 --groups 10 --censor 0,7 --seed 3 --simulations 2000
json_check "d['privacy']['calibration'] == 'analytic-gaussian-paper-literal'" \
  test --data "$HSB" --response math --common science --tested read --prior lr --epsilon 1 --delta 0.25 --groups 10 --censor 0,7 --seed 3 --simulations 200 --gaussian-calibration paper-literal
json_check "d['private'] is True and d['private_reason'] == [] and 'diagnostics' not in d and d['settings']['seed'] is None and 'discrete Laplace' in d['privacy']['sampler'] and (d['noisy_statistic'] / d['privacy']['grid']).is_integer()" \
  test --data "$HSB" --response math --tested female --epsilon 1 --groups 10
json_check "'discrete Gaussian' in d['privacy']['sampler'] and d['private'] is True and d['critical_values'][0]['significance_level'] == 0.1" \
  test --data "$HSB" --response math --tested female --prior bic --epsilon 1 --delta 0.1 --groups 4 --alpha 0.1 --simulations 500
json_check "d['recommended']['num_subsets'] in (2, 5, 10) and len(d['settings']) == 6" \
  plan-test --n 200 --p 1 --p0 2 --prior lr --epsilon 1 --delta 0.25 --censor 0,7 --censor 0,10 --seed 1 --simulations 300
expect_error "largest admissible M is 50" test --data "$HSB" --response math --tested female --epsilon 1 --groups 70 --seed 1
expect_error "--epsilon is 0" test --data "$HSB" --response math --tested female --epsilon 0 --groups 5
expect_error "--epsilon is -1" test --data "$HSB" --response math --tested female --epsilon -1 --groups 5
expect_error "--delta is 1" test --data "$HSB" --response math --tested female --epsilon 1 --delta 1 --groups 5
expect_error "--delta is -0.1" test --data "$HSB" --response math --tested female --epsilon 1 --delta -0.1 --groups 5
expect_error "needs --groups" test --data "$HSB" --response math --tested female --epsilon 1
expect_error "choose one" test --non-private --data "$HSB" --response math --tested female --epsilon 1 --groups 5
expect_error "choose one" test --data "$HSB" --response math --tested female
expect_error "lower censoring limit is 3" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --censor 3,1
expect_error "--censor takes two numbers" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --censor 3
expect_error "needs --censor L,U" test --data "$HSB" --response math --tested female --prior lr --epsilon 1 --groups 5 --censor-probability 0.1,0.9
expect_error "smaller than the upper" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --censor-probability 0.9,0.1
expect_error "not both" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --censor 0,1 --censor-probability 0.1,0.9
expect_error "--alpha is 1.5" test --data "$HSB" --response math --tested female --epsilon 1 --groups 5 --alpha 1.5
expect_error "gaussian calibration 'fancy' is not one of exact, paper-literal" test --data "$HSB" --response math --tested female --epsilon 1 --delta 0.1 --groups 5 --gaussian-calibration fancy
expect_error "--epsilon is nan" test --data "$HSB" --response math --tested female --epsilon nan --groups 5
expect_error "largest admissible M is 40" plan-test --n 200 --p 1 --p0 2 --epsilon 1 --groups 60
expect_error "expected two numbers" plan-test --n 200 --epsilon 1 --censor a,b

# --- numerics, CSV input, statistics commands (docs/decisions.md): each case a clear message naming the
# input and a non-zero exit, or a documented answer
# Scale invariance: a predictor times 1e-160, columns times 1e300/1e160, the response times 1e300
# (R² changed in the 4th digit; "collinear (residual norm -nan)"; "constant").
"$PY" - "$HSB" "$TMP" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]
def write(name, scales, const=None):
    with open("%s/%s.csv" % (sys.argv[2], name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(h)
        for r in rows[1:]:
            r = list(r)
            for c, s in scales.items():
                r[h.index(c)] = repr(float(r[h.index(c)]) * s)
            if const:
                r[h.index(const)] = "4.5"
            w.writerow(r)
write("s160", {"write": 1e-160})
write("s300", {"write": 1e300, "read": 1e160})
write("y300", {"math": 1e300})
write("tiny", {"write": 1e-300, "read": 1e-300, "math": 1e-300})
write("constcol", {}, const="write")
PYEOF
R2=$("$DPMU" test --non-private --data "$HSB" --response math --common read --tested write | "$PY" -c "import json,sys; print(json.load(sys.stdin)['r_squared'])")
for f in s160 s300 y300 tiny; do
  json_check "abs(d['r_squared'] - $R2) < 1e-13 * $R2 and math.isfinite(d['log_statistic'])" \
    test --non-private --data "$TMP/$f.csv" --response math --common read --tested write
done
expect_error "'write' is constant (every value is 4.5)" test --non-private --data "$TMP/constcol.csv" --response math --common read --tested write
# hyper-g / hyper-g-n with a huge a: the limit log B = 0, P = 0.5 (was null with P = 1 or 0)
for a in 1e50 1e300; do
  for pr in hyper-g hyper-g-n; do
    json_check "abs(d['log_statistic']) < 1e-10 and abs(d['posterior_probability_h1'] - 0.5) < 1e-10 and 0 <= d['shrinkage'] < 1e-40" \
      test --non-private --data "$HSB" --response math --tested female --prior $pr --a $a
  done
done
json_check "math.isfinite(d['log_statistic']) and 0 <= d['posterior_probability_h1'] <= 1" \
  test --data "$HSB" --response math --tested female --prior hyper-g --a 1e300 --epsilon 1 --groups 5 --seed 1
# plan-test: p0 counts the intercept; n must leave room for a model
expect_error "--p0 is 0, but must be at least 1" plan-test --n 200 --p0 0 --epsilon 1 --simulations 20
expect_error "--n is 0, but a test of p = 1 predictors" plan-test --n 0 --epsilon 1
expect_error "--n: '-5' is not an unsigned integer" plan-test --n -5 --epsilon 1
# an epsilon so small that no noise can be drawn ("log_statistic is -nan" for 1e-320)
expect_error "--epsilon is 9.9998886718268301e-321, but must be at least 1e-12" test --data "$HSB" --response math --tested female --epsilon 1e-320 --groups 5
expect_error "but must be at least 1e-12" test --data "$HSB" --response math --tested female --epsilon 1e-320 --groups 5 --seed 1
expect_error "but must be at least 1e-12" test --data "$HSB" --response math --tested female --epsilon 1e-100 --groups 5
expect_error "but must be at least 1e-12" plan-test --n 200 --epsilon 1e-320
expect_error "but must be at least 1e-12" select --data "$SRC/experiments/data/prostate.csv" --response lpsa --predictors lcavol --epsilon 1e-320 --radius 1 --penalty 1 --data-bound 3
# public bounds whose objectives or noise overflow a double ("constrained_rss: singular_ridge is inf")
expect_error "--data-bound 9.9999999999999997e+199 with --radius 1 and n = 97 rows makes the objectives" select --data "$SRC/experiments/data/prostate.csv" --response lpsa --predictors lcavol --epsilon 1 --radius 1 --penalty 1 --data-bound 1e200
expect_error "with --radius 9.9999999999999997e+199" select --data "$SRC/experiments/data/prostate.csv" --response lpsa --predictors lcavol --epsilon 1 --radius 1e200 --penalty 1 --data-bound 3 --seed 1
# CSV: semicolon and tab files are detected from the header (and said so); --sep chooses
tr ',' ';' <"$HSB" >"$TMP/semi.csv"
tr ',' '\t' <"$HSB" >"$TMP/tab.csv"
R2F=$("$DPMU" test --non-private --data "$HSB" --response math --tested female | "$PY" -c "import json,sys; print(json.load(sys.stdin)['r_squared'])")
for f in semi tab; do
  json_check "d['r_squared'] == $R2F" test --non-private --data "$TMP/$f.csv" --response math --tested female
  grep -q "fields separated by .* (detected from the header" "$TMP/err" && pass || fail "no note on the detected separator of $f.csv"
done
json_check "d['r_squared'] == $R2F" test --non-private --data "$TMP/semi.csv" --sep ';' --response math --tested female
json_check "d['r_squared'] == $R2F" test --non-private --data "$TMP/tab.csv" --sep tab --response math --tested female
expect_error "no column 'female'; columns are id;female;race" test --non-private --data "$TMP/semi.csv" --sep , --response math --tested female
expect_error "(fields separated by ',' (comma); choose another with --sep" test --non-private --data "$TMP/semi.csv" --sep , --response math --tested female
expect_error "'|' is not a separator" test --non-private --data "$TMP/semi.csv" --sep '|' --response math --tested female
printf 'y;x\tz\n1;2\t3\n' >"$TMP/both.csv"
expect_error "both ';' and tabs" test --non-private --data "$TMP/both.csv" --response y --tested x
printf 'y;x\n1;2,5\n2;3\n4;5,5\n' >"$TMP/decimal_comma.csv"
expect_error "'2,5' is not a number (decimal commas are not read" test --non-private --data "$TMP/decimal_comma.csv" --response y --tested x
tr ',' ';' <"$SRC/experiments/data/prostate.csv" >"$TMP/prostate_semi.csv"
json_check "d['private'] is False and 'selected_model' in d" \
  select --data "$TMP/prostate_semi.csv" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 1 --penalty 1 --data-bound 3 --seed 5
# a NUL byte no longer cuts the message short; control characters are escaped
printf 'y,x\n1,2\0003\n2,3\n4,5\n' >"$TMP/nul.csv"
expect_error "line 2, column 'x': '2\\03' is not a number (it contains a NUL byte: is this a text CSV file?)" test --non-private --data "$TMP/nul.csv" --response y --tested x
printf 'y,x\033[31m\n1,2\n2,3\n4,5\n' >"$TMP/ctrl.csv"
expect_error "columns are y, x\\x1b[31m" test --non-private --data "$TMP/ctrl.csv" --response y --tested x
if grep -q $'\x1b' "$TMP/err"; then fail "a control character of a header was echoed raw"; else pass; fi
# /dev/zero or a file without line ends is refused at 1 MiB, not read until memory runs out
expect_error "/dev/zero: line 1 is longer than 1 MiB" test --non-private --data /dev/zero --response y --tested x
head -c 1100000 /dev/zero | tr '\0' 'a' >"$TMP/long.csv"
expect_error "long.csv: line 1 is longer than 1 MiB" bma --non-private --data "$TMP/long.csv" --response y --predictors x
expect_error "line 1 is longer than 1 MiB" select --data /dev/zero --response y --predictors x --epsilon 1 --radius 1 --penalty 1 --data-bound 3

echo "cli_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
