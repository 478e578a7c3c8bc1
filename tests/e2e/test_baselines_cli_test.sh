#!/usr/bin/env bash
# End-to-end tests of `dpmu test --method test-of-tests | dp-f` (docs/methods.md §11): the JSON of a
# seeded and of a secure release (private, settings, privacy, released fields, diagnostics only when
# seeded), the ledger charge with the method's guarantee, clear errors before any work, and the
# empirical audits of both mechanisms at worst-case neighbours (the lower bound on epsilon is
# consistent with the claim; fixed audit seed, so deterministic).
# Usage: test_baselines_cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
HSB="$SRC/experiments/data/hsb2.csv"

# Test of Tests: seeded (not private, diagnostics) and secure (private, none).
json_check "d['private'] is False and d['settings']['method'] == 'test-of-tests' and d['privacy']['delta'] == 0 and 0 < d['p_value'] <= 1 and 'count' in d['diagnostics'] and d['settings']['num_subsets'] >= 1 and d['settings']['tuning']['power_target'] == 0.9" \
  test --data "$HSB" --response math --common science --tested read --method test-of-tests --epsilon 1 --seed 3
json_check "d['private'] is True and 'diagnostics' not in d and len(d['decisions']) == 2" \
  test --data "$HSB" --response math --common science --tested read --method test-of-tests --epsilon 1
json_check "d['settings']['num_subsets'] == 10 and d['settings']['alpha0'] == 0.2 and d['settings']['tuning']['rule'].startswith('given')" \
  test --data "$HSB" --response math --tested read --method test-of-tests --epsilon 1 --groups 10 --alpha0 0.2 --seed 1
# DP F-test: rho from (epsilon, delta), K = 10/min(alpha), moments released.
json_check "d['private'] is False and d['privacy']['epsilon'] == 5 and d['privacy']['rho_zcdp'] > 0 and d['settings']['null_simulations'] == 1000 and len(d['moments']) == 4 and 'confidential_f_statistic' in d['diagnostics']" \
  test --data "$HSB" --response math --common science --tested read --method dp-f --epsilon 5 --delta 1e-6 --bounds 0,100 --seed 2
json_check "d['private'] is True and 'diagnostics' not in d and d['f_statistic_status'] in ('ok', 'noisy moment matrix not positive definite', 'noisy residual sum of squares <= 0')" \
  test --data "$HSB" --response math --common science --tested read --method dp-f --epsilon 5 --delta 1e-6 --bounds 0,100,0,100,0,100

# The ledger: each release charged once with its guarantee; past the budget, refused.
"$DPMU" ledger init "$TMP/l.jsonl" --budget 7,1e-5 >/dev/null 2>"$TMP/err" || fail "ledger init: $(cat "$TMP/err")"
json_check "d['settings']['ledger']['epsilon'] == 1 and d['settings']['ledger']['delta'] == 0" \
  test --data "$HSB" --response math --tested read --method test-of-tests --epsilon 1 --ledger "$TMP/l.jsonl"
json_check "d['settings']['ledger']['epsilon'] == 5 and d['settings']['ledger']['delta'] == 1e-6" \
  test --data "$HSB" --response math --tested read --method dp-f --epsilon 5 --delta 1e-6 --bounds 0,100 --ledger "$TMP/l.jsonl"
expect_error "budget" test --data "$HSB" --response math --tested read --method dp-f --epsilon 5 --delta 1e-6 --bounds 0,100 --ledger "$TMP/l.jsonl"

# Errors before any work.
expect_error "choose subsample-aggregate, test-of-tests or dp-f" test --data "$HSB" --response math --tested read --method foo --epsilon 1
expect_error "pure epsilon-DP" test --data "$HSB" --response math --tested read --method test-of-tests --epsilon 1 --delta 1e-6
expect_error "both --groups M and --alpha0" test --data "$HSB" --response math --tested read --method test-of-tests --epsilon 1 --groups 5
expect_error "public clipping bounds" test --data "$HSB" --response math --tested read --method dp-f --epsilon 1 --delta 1e-6
expect_error "--delta" test --data "$HSB" --response math --tested read --method dp-f --epsilon 1 --bounds 0,100
expect_error "--bounds is an option of --method dp-f" test --data "$HSB" --response math --tested read --epsilon 1 --groups 5 --bounds 0,100

# Empirical audits at worst-case neighbours.
C="d['consistent_with_claim'] is True and d['epsilon_lower_bound'] <= d['claimed']['epsilon'] and d['private'] is False"
json_check "$C and d['claimed']['delta'] == 0" \
  audit test --data "$HSB" --response math --tested read --method test-of-tests --epsilon 1 --groups 10 --alpha0 0.2 --audit-samples 2000
json_check "$C and d['claimed']['delta'] == 1e-06" \
  audit test --data "$HSB" --response math --tested read --method dp-f --epsilon 2 --delta 1e-6 --bounds 0,100 --audit-samples 2000

# AdaSSP as `dpmu bma --method adassp` (docs/methods.md §11.3): seeded and secure releases, the
# Gaussian-DP ledger record (4 releases at (1, 1e-7): basic composition refuses the 3rd against a budget of
# 2; the tight accountant takes all 4), clear errors before any work, and the audit at worst-case
# neighbours — at epsilon 1 consistent; at epsilon 50 the audit has power (a lower bound > 1) and stays
# below the claim.
ADA=(bma --data "$HSB" --response science --predictors read,write --bounds 20,80 --method adassp)
json_check "d['private'] is False and d['settings']['method'] == 'adassp' and d['privacy']['delta'] == 1e-06 and list(d['coefficients']) == ['(intercept)', 'read', 'write'] and 'lambda_min' in d['diagnostics'] and 'posterior_inclusion_probabilities' not in d" \
  "${ADA[@]}" --epsilon 1 --delta 1e-6 --seed 3
json_check "d['private'] is True and 'diagnostics' not in d and d['ridge'] >= 0 and len(d['released_gram']) == 3" \
  "${ADA[@]}" --epsilon 1 --delta 1e-6
for acc in basic tight; do
  "$DPMU" ledger init "$TMP/ada_$acc.jsonl" --budget 2,1e-5 --accountant $acc >/dev/null 2>"$TMP/err" || fail "ledger init: $(cat "$TMP/err")"
  ok=0
  for i in 1 2 3 4; do "$DPMU" "${ADA[@]}" --epsilon 1 --delta 1e-7 --ledger "$TMP/ada_$acc.jsonl" >/dev/null 2>&1 && ok=$((ok + 1)); done
  want=$([ $acc = basic ] && echo 2 || echo 4)
  [ $ok -eq $want ] && pass "adassp under the $acc accountant: $ok of 4 releases within (2, 1e-5)" || fail "adassp under the $acc accountant: $ok of 4 releases (want $want)"
done
expect_error "--delta in (0, 1)" "${ADA[@]}" --epsilon 1
expect_error "--prior does not apply to --method adassp" "${ADA[@]}" --epsilon 1 --delta 1e-6 --prior bic
expect_error "--non-private does not apply to --method adassp" "${ADA[@]}" --non-private
expect_error "--method must be ssp" bma --data "$HSB" --response science --predictors read --bounds 20,80 --epsilon 1 --method ada
expect_error "drop --seed" audit "${ADA[@]}" --epsilon 1 --delta 1e-6 --seed 3
expect_error "--bounds -1e+308,1e+308" bma --data "$HSB" --response science --predictors read --method adassp --epsilon 1 --delta 1e-6 --bounds -1e308,1e308
expect_error "--epsilon" "${ADA[@]}" --epsilon 1e20 --delta 1e-6
json_check "$C and d['claimed']['delta'] == 1e-06" \
  audit "${ADA[@]}" --epsilon 1 --delta 1e-6 --audit-samples 2000
json_check "$C and d['epsilon_lower_bound'] > 1" \
  audit "${ADA[@]}" --epsilon 50 --delta 1e-6 --audit-samples 4000

finish "test baselines e2e"
