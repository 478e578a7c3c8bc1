#!/usr/bin/env bash
# End-to-end tests of `dpmu audit`: every fixed release path (test with Laplace and Gaussian
# noise, bma with Laplace and Wishart, select with Algorithms 1 and 2) is audited on adversarial
# neighbours built from its bounds, and the lower bound on epsilon is consistent with the claim
# (exit 0); the report is marked not private; bad audit input ends in a clear message.
# A valid 95% lower bound exceeds a true epsilon with probability <= 0.05 per audit; seeds are
# fixed, so the runs are deterministic.
# Usage: audit_cli_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
HSB="$SRC/experiments/data/hsb2.csv"
PROS="$SRC/experiments/data/prostate.csv"

C="d['consistent_with_claim'] is True and d['epsilon_lower_bound'] <= d['claimed']['epsilon'] and d['private'] is False and d['samples_per_data_set'] == 2000"
json_check "$C and d['claimed']['l1_sensitivity'] > 0" \
  audit test --data "$HSB" --response math --tested female --epsilon 1 --groups 10 --audit-samples 2000
json_check "$C and d['claimed']['delta'] == 1e-05" \
  audit test --data "$HSB" --response math --common science --tested read --prior lr --censor 0,7 --epsilon 1 --delta 1e-5 --groups 10 --audit-samples 2000
# bma at epsilon = 1: the worst case from the bounds is chosen, and the audit has some power (> 0.1)
json_check "$C and d['epsilon_lower_bound'] > 0.1 and 'corner' in d['neighbour']['chosen']" \
  audit bma --data "$HSB" --response read --predictors female,write,math --bounds 0,1,0,100,0,100,0,100 --epsilon 1 --audit-samples 2000
json_check "$C" \
  audit bma --data "$HSB" --response read --predictors write,math --bounds 0,100 --epsilon 0.5 --mechanism wishart --delta 1e-5 --audit-samples 2000
json_check "$C" \
  audit select --data "$PROS" --response lpsa --predictors lcavol,lweight,age --epsilon 1 --radius 2 --penalty 1 --data-bound 3 --audit-samples 2000
json_check "$C and d['claimed']['epsilon'] == 2" \
  audit select --data "$PROS" --response lpsa --predictors lcavol,lweight --epsilon 1 --radius 2 --penalty 1 --data-bound 3 --algorithm 2 --delta 1e-5 --audit-samples 2000

expect_error "audits a private release: drop --non-private" audit bma --data "$HSB" --response read --predictors write --non-private
expect_error "audits a private test: give --epsilon" audit test --data "$HSB" --response math --tested female --non-private
expect_error "audits a private release: give a public --data-bound" audit select --data "$PROS" --response lpsa --predictors lcavol --epsilon 1 --radius 2 --penalty 1 --data-bound auto
expect_error "--audit-samples is 10, but must be >= 40" audit bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --audit-samples 10
expect_error "--audit-confidence is 1" audit bma --data "$HSB" --response read --predictors write --bounds 0,100 --epsilon 1 --audit-confidence 1

finish "audit e2e"
