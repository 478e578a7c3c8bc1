#!/usr/bin/env bash
# End-to-end tests of `dpmu plan-bma` (docs/bma.md "Planning a release: dpmu plan-bma"): the JSON
# has the coverage, Brier, PIP and P(true model) summaries of both analyses with their Monte Carlo
# SEs and "private": false; the same seed gives the same output; at epsilon = 10^6 the plug-in
# coverage equals the noise-aware one within Monte Carlo error and is >= 0.8; bad options are
# refused naming the option; no ledger (nor any other file) is written, even with DPMU_LEDGER set.
# An assumed design (--coefficients, --sigma, --bounds): reported as given; at epsilon = 10^6 the
# plug-in 95 % intervals of the non-zero coefficients cover at the nominal rate within Monte Carlo
# error (a wrong scale of the predictors or of beta would not), the null ones at least at it; the
# true model gets most of the posterior; the options are checked before any work.
# Usage: plan_bma_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"  # absolute: the test runs in its own folder
SRC="$2"
. "$(dirname "$0")/lib.sh"

WORK="$TMP/work"
mkdir -p "$WORK" "$TMP/home"
cd "$WORK" || exit 1
export HOME="$TMP/home"
export DPMU_LEDGER="$TMP/home/ledger.json"
BASE=(plan-bma --n 2000 --p 3 --true-model-size 1 --replicates 20 --seed 7)

# The fields, each with its Monte Carlo SE, for both analyses.
json_check 'd["private"] is False and d["command"] == "plan-bma" and d["simulation"]["replicates"] == 20
  and all(len(d[m]["coverage95"]["mean"]) == 3 and len(d[m]["coverage95"]["mc_se"]) == 3
          and len(d[m]["pip"]["mean"]) == 3 and len(d[m]["pip"]["mc_se"]) == 3
          and 0 <= d[m]["brier"]["mean"] <= 1 and d[m]["brier"]["mc_se"] >= 0
          and 0 <= d[m]["prob_true_model"]["mean"] <= 1 and d[m]["prob_true_model"]["mc_se"] >= 0
          and all(0 <= c <= 1 for c in d[m]["coverage95"]["mean"])
          for m in ("plug_in", "noise_aware"))
  and d["truth"]["beta"][1] == 0 and d["truth"]["beta"][0] > 0' "${BASE[@]}" --epsilon 1

# Same seed: identical output; another seed: another simulation.
"$DPMU" "${BASE[@]}" --epsilon 1 >"$TMP/a.json" 2>"$TMP/err" || fail "run a: $(cat "$TMP/err")"
"$DPMU" "${BASE[@]}" --epsilon 1 >"$TMP/b.json" 2>"$TMP/err" || fail "run b: $(cat "$TMP/err")"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then pass; else fail "same seed, different output"; fi
"$DPMU" plan-bma --n 2000 --p 3 --true-model-size 1 --replicates 20 --seed 8 --epsilon 1 >"$TMP/c.json" 2>"$TMP/err" ||
  fail "run c: $(cat "$TMP/err")"
if cmp -s "$TMP/a.json" "$TMP/c.json"; then fail "seeds 7 and 8 gave the same output"; else pass; fi

# Huge epsilon: the noise is negligible, so the two analyses agree and cover.
json_check 'all(abs(d["plug_in"]["coverage95"]["mean"][j] - d["noise_aware"]["coverage95"]["mean"][j])
               <= 3 * math.hypot(d["plug_in"]["coverage95"]["mc_se"][j], d["noise_aware"]["coverage95"]["mc_se"][j]) + 0.02
               and d["plug_in"]["coverage95"]["mean"][j] >= 0.8 for j in range(3))' \
  plan-bma --n 2000 --p 3 --true-model-size 1 --replicates 100 --seed 3 --epsilon 1e6
# Wishart at epsilon < 1 runs; delta = 1/n is reported.
json_check 'd["settings"]["mechanism"] == "wishart" and abs(d["settings"]["delta"] - 1/2000) < 1e-15' \
  "${BASE[@]}" --mechanism wishart --epsilon 0.5

# An assumed design: beta of mixed signs, predictors on ranges of different widths and offsets,
# loose response bounds.
DESIGN=(plan-bma --n 2000 --coefficients 0.5,0,-0.3 --sigma 1 --bounds -1,2,0,5,-3,3,-20,20)
json_check 'd["settings"]["p"] == 3 and d["settings"]["bounds"] == [[-1, 2], [0, 5], [-3, 3], [-20, 20]]
  and d["truth"]["beta"] == [0.5, 0, -0.3] and d["truth"]["sigma"] == 1 and d["truth"]["true_model"] == [1, 3]
  and d["truth"]["true_model_size"] == 2 and "signal_z" not in d["truth"] and d["private"] is False
  and len(d["noise_aware"]["pip"]["mean"]) == 3' "${DESIGN[@]}" --epsilon 1 --replicates 10 --seed 1
json_check 'all(abs(d["plug_in"]["coverage95"]["mean"][j] - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 200) + 0.01
               for j in (0, 2))
  and d["plug_in"]["coverage95"]["mean"][1] >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 200)
  and d["plug_in"]["pip"]["mean"][0] > 0.99 and d["plug_in"]["pip"]["mean"][2] > 0.99
  and d["plug_in"]["prob_true_model"]["mean"] > 0.5 and "noise_aware" not in d' \
  "${DESIGN[@]}" --epsilon 1e6 --replicates 200 --seed 11 --uncertainty plug-in
# --simulations is --replicates; the same seed, the same numbers.
"$DPMU" "${DESIGN[@]}" --epsilon 1 --replicates 10 --seed 4 >"$TMP/d1.json" 2>"$TMP/err" || fail "d1: $(cat "$TMP/err")"
"$DPMU" "${DESIGN[@]}" --epsilon 1 --simulations 10 --seed 4 >"$TMP/d2.json" 2>"$TMP/err" || fail "d2: $(cat "$TMP/err")"
if cmp -s "$TMP/d1.json" "$TMP/d2.json"; then pass; else fail "--simulations and --replicates differ"; fi
# Wishart with a given delta.
json_check 'd["settings"]["delta"] == 1e-5' "${DESIGN[@]}" --mechanism wishart --epsilon 0.5 --delta 1e-5 --replicates 10

# Bad options: non-zero exit, the option named, before any work.
OK=(plan-bma --n 2000 --p 3)
expect_error "--replicates" "${OK[@]}" --epsilon 1 --replicates 5
expect_error "--replicates" "${OK[@]}" --epsilon 1 --replicates 100001
expect_error "--n" plan-bma --n 5 --p 3 --epsilon 1
expect_error "--epsilon" "${OK[@]}" --epsilon 0
expect_error "--epsilon" "${OK[@]}" --epsilon -1
expect_error "--epsilon" "${OK[@]}" --epsilon inf
expect_error "--epsilon: must be at least 1e-12" "${OK[@]}" --epsilon 1e-320
expect_error "--n: at most 2^31" plan-bma --n 100000000000 --p 3 --epsilon 1
expect_error "--epsilon: wishart needs epsilon < 1" "${OK[@]}" --mechanism wishart --epsilon 2
expect_error "--mechanism" "${OK[@]}" --mechanism gaussian --epsilon 1
expect_error "--p" plan-bma --n 2000 --p 13 --epsilon 1
expect_error "--p" plan-bma --n 2000 --p 0 --epsilon 1
expect_error "--true-model-size" "${OK[@]}" --epsilon 1 --true-model-size 4
expect_error "--prior" "${OK[@]}" --epsilon 1 --prior bogus
expect_error "--model-prior" "${OK[@]}" --epsilon 1 --model-prior bogus
expect_error "--n: must be >= p + 3" plan-bma --n 12 --p 12 --epsilon 1
expect_error "--signal-z" "${OK[@]}" --epsilon 1 --signal-z 0
expect_error "--noise-aware-draws" "${OK[@]}" --epsilon 1 --noise-aware-draws 0
expect_error "--seed" "${OK[@]}" --epsilon 1 --seed -1
expect_error "--epsilon" plan-bma --n 2000 --p 3
D=(plan-bma --n 2000 --epsilon 1)
expect_error "--coefficients: 2 given but --p is 3" "${D[@]}" --p 3 --coefficients 1,0
expect_error "--coefficients: entry 2 is nan" "${D[@]}" --coefficients 1,nan
expect_error "--coefficients: entry 1 is inf" "${D[@]}" --coefficients inf,0
expect_error "--coefficients: 13 given" "${D[@]}" --coefficients 1,0,0,0,0,0,0,0,0,0,0,0,0
expect_error "--sigma" "${D[@]}" --coefficients 1,0 --sigma 0
expect_error "--sigma" "${D[@]}" --coefficients 1,0 --sigma -1
expect_error "--sigma" "${D[@]}" --coefficients 1,0 --sigma inf
expect_error "--bounds: 4 numbers given" "${D[@]}" --coefficients 1,0 --bounds -1,1,-1,1
expect_error "--bounds for column 3: need finite l < u" "${D[@]}" --coefficients 1,0 --bounds -1,1,-1,1,2,2
expect_error "--bounds for every column: need finite l < u" "${D[@]}" --coefficients 1,0 --bounds -1,inf
expect_error "--true-model-size: set by --coefficients" "${D[@]}" --coefficients 1,0 --true-model-size 1
expect_error "--signal-z" "${D[@]}" --coefficients 1,0 --signal-z 7
expect_error "--delta: only the wishart mechanism" "${D[@]}" --coefficients 1,0 --delta 0.01
expect_error "--delta" plan-bma --n 2000 --epsilon 0.5 --mechanism wishart --coefficients 1,0 --delta 1
expect_error "--uncertainty" "${D[@]}" --coefficients 1,0 --uncertainty exact
expect_error "--p: give the number of predictors" "${D[@]}"
# B3: 4294967316 = 2^32 + 20 was planned as 20 draws and reported as 4294967316.
expect_error "--noise-aware-draws must be a whole number in [20, 100000], got 4294967316" "${D[@]}" --coefficients 1,0 --noise-aware-draws 4294967316

# Nothing written: no ledger, no file in the working folder or HOME.
left=$(find "$WORK" "$TMP/home" -mindepth 1 | head -5)
if [ -z "$left" ]; then pass; else fail "plan-bma wrote files: $left"; fi
finish plan_bma_test
