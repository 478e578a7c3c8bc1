#!/usr/bin/env bash
# One command for everything: build `dpmu`, run every study behind a figure or a claim of both
# papers at its config's full size, then draw the figures, check the claims and write the report.
#
#   bash scripts/reproduce.sh                 # results/, results/figures/, results/claims.json, results/report.html
#   bash scripts/reproduce.sh --plan          # print what would run (skip / resume / run) and the projected time
#   bash scripts/reproduce.sh --out DIR --replicates N   # a quick pass at N replicates per cell (reduced:
#                                             # claims.json and the report say so); not a reproduction
#   bash scripts/reproduce.sh --only fig1_hsb_posterior,fig6_hsb_censoring   # some of the studies
#
# Resumable: a study whose results file is finished at the config's size, and reads back with its
# SHA-256 intact, is skipped; one that was interrupted (its FILE.journal exists) is continued with
# `dpmu run --resume`; one finished at another size (e.g. a reduced run) is run again; a damaged one
# (its checksum fails, or it cannot be read) is moved aside to FILE.damaged and run again, saying
# why. Interrupt at any time and run the command again. Options are checked before any work.
# Progress: the study in hand, its projected time, the projected time left, and dpmu's own progress
# line (with its ETA) on stderr. DPMU=/path/to/dpmu uses that binary instead of building.
#
# The projected times (seconds on 2 free cores) are CPU seconds measured on this 2-core machine
# divided by 2: from two small runs per config (fixed cost + cost per replicate, extrapolated to the
# config's replicates; 2026-12-03) and, for fig3_4_zellner_siow, its measured full-size run (1 882
# CPU-s). Projected, not measured end to end: docs/performance.md, "One command".
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=results
REPLICATES=""
PLAN=0
ONLY=""
usage_error() { echo "reproduce: $*" >&2; exit 2; }
# value OPTION WHAT ARGS...: the option's value, refused if missing, empty or another option
value() {
  local opt="$1" what="$2"; shift 2
  if [ $# -lt 2 ] || [ -z "$2" ] || [[ "$2" == --* ]]; then usage_error "$opt needs a value ($what; see --help)"; fi
  printf '%s' "$2"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT=$(value --out "a folder for the results" "$@") || exit 2; shift 2 ;;
    --replicates) REPLICATES=$(value --replicates "replicates per cell, 1 to 1000000000" "$@") || exit 2; shift 2 ;;
    --plan) PLAN=1; shift ;;
    --only) ONLY=",$(value --only "study names separated by commas" "$@"),"  || exit 2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1' (see --help)" ;;
  esac
done
# The limits of `dpmu run --replicates` (1 to 10^9), checked here before anything is built or run.
if [ -n "$REPLICATES" ]; then
  if ! [[ "$REPLICATES" =~ ^[1-9][0-9]{0,9}$ ]] || [ "$REPLICATES" -gt 1000000000 ]; then
    usage_error "--replicates must be a whole number from 1 to 1000000000 (replicates per cell), not '$REPLICATES'"
  fi
fi
if [ -e "$OUT" ] && [ ! -d "$OUT" ]; then usage_error "--out $OUT: exists and is not a folder (give a folder for the results)"; fi

# config stem, projected seconds at full size on 2 cores, what it is behind
STUDIES=(
  "fig1_hsb_posterior          4     PB Figure 1; PB-4.4-fig1-*, PB-4.3-*"
  "fig2_hsb_likelihood_ratio   8    PB Figure 2; PB-4.4-fig2-*, PB-4.3-*"
  "fig6_hsb_censoring          9    PB Figure 6; PB-B-fig6-*, PB-4.3-*"
  "fig6_hsb_censoring_h11      8    PB App. B for H11; PB-B-H11-similar"
  "fig7_hsb_lr_censoring       17   PB Figure 7; PB-B-fig7-*, PB-4.5-U-twice, PB-4.4-sensitivity-tradeoff"
  "fig7_hsb_lr_censoring_h11   20   PB App. B for H11; PB-B-H11-similar"
  "type1_calibration           25  PB §4.3 type-I error; PB-4.3-type1"
  "fig5_cps                    46   PB Figure 5; PB-5.2.2-*, PB-5.1-support-coverage"
  "fig5_cps_centred_age        97   PB Figure 5 (centred-age reading); PB-5.2.2-*"
  "fig5_cps_public_bounds      59   PB Figure 5 (public bounds); PB-5.2.2-*"
  "lei_simulation              3    LCSSF Figures 1, 2; LCSSF-5-*"
  "selection_head_to_head      47  our LCSSF vs SSP figure (report)"
  "head_to_head                1000 our DP tests head to head (report); OWN-h2h-*"
  "head_to_head_hsb            760  our DP tests head to head on the HSB design (report); OWN-h2h-hsb-*"
  "head_to_head_pb_m           30   PB's test at M = 2, 5, 20 on the head-to-head data sets; OWN-h2h-pb-best-m"
  "head_to_head_pmse           50   our PMSE head to head, SSP-BMA vs AdaSSP (report); OWN-h2h-pmse"
  "calibration_augmented       1900 our data-augmentation calibration; OWN-calibration-augmented"
  "fig3_4_zellner_siow         941 PB Figures 3, 4, 8, 9; PB-5.2.1-*, PB-5.2-zs-bic, PB-C-*, PB-5.3-*"
)
if [ -n "$ONLY" ]; then
  kept=(); known=","
  for row in "${STUDIES[@]}"; do read -r stem _ <<<"$row"; known+="$stem,"; [[ "$ONLY" == *",$stem,"* ]] && kept+=("$row"); done
  IFS=, read -r -a asked <<<"${ONLY#,}"
  for name in "${asked[@]}"; do
    [ -z "$name" ] || [[ "$known" == *",$name,"* ]] || usage_error "--only: '$name' is not a study of the list (see --plan)"
  done
  [ ${#kept[@]} -gt 0 ] || usage_error "--only names no study of the list (see --plan)"
  STUDIES=("${kept[@]}")
fi
# Not run: configs/fig8_9_bic.yaml (its cells equal the BIC cells of fig3_4_zellner_siow bit for bit,
# from which Figures 8 and 9 are drawn), configs/fig3_4_zellner_siow_shared.yaml (the same study,
# another joint law across cells), configs/fig3_4_zellner_siow_pruned.yaml (the same study and draws,
# ZS models below 1e-17 of the posterior skipped: docs/performance.md), configs/lei_real_data.yaml (no figure or claim: LCSSF gives no
# numbers for its data examples), configs/linear_design_example.yaml, configs/normal_mean.yaml.

# status STEM FILE -> run | resume | done (finished at the wanted size, checksum verified) |
# redo (finished at another size, or unfinished without its journal) | damaged<TAB>why
# A finished file is read with plotting/dpmu_h5.py, the reader of the report: it checks the SHA-256
# that dpmu stores in the file's first 512 bytes (docs/results-schema.md, "Checksums") before HDF5
# parses anything, then reads the attributes, cells and summaries. So a file is skipped only if the
# report can read it.
status() {
  local stem="$1" file="$2"
  if [ -f "$file.journal" ]; then echo resume; return; fi   # dpmu run --resume rebuilds FILE from the journal
  if [ ! -e "$file" ]; then echo run; return; fi
  /usr/bin/python3 - "$file" "configs/$stem.yaml" "$REPLICATES" <<'PYEOF'
import re, sys
sys.path.insert(0, "plotting")
from dpmu_h5 import DamagedFile, Results
path, config, override = sys.argv[1:]
want = int(override) if override else int(re.search(r"^replicates:\s*(\d+)", open(config).read(), re.M).group(1))
try:
    res = Results(path)
except DamagedFile as exc:
    print(f"damaged\t{exc}")
except Exception as exc:  # not HDF5, unreadable, not a dpmu results file, a newer schema
    print(f"damaged\t{path}: not a readable dpmu results file ({type(exc).__name__}: {exc})".replace("\n", " "))
else:
    print("done" if res.complete and res.replicates == want else "redo")
PYEOF
}

fmt() { local s=$1; if [ "$s" -ge 3600 ]; then printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60));
        elif [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi; }

total=0; todo=0; n=${#STUDIES[@]}
declare -A STATE WHY
for row in "${STUDIES[@]}"; do
  read -r stem secs _ <<<"$row"
  st=$(status "$stem" "$OUT/$stem.h5")
  STATE[$stem]=${st%%$'\t'*}
  if [ "${STATE[$stem]}" = damaged ]; then WHY[$stem]=${st#*$'\t'}; fi
  total=$((total + secs))
  [ "${STATE[$stem]}" = done ] || todo=$((todo + secs))
done
scale=""
[ -n "$REPLICATES" ] && scale=" (projections are for the configs' full size; --replicates $REPLICATES is a quick pass)"
echo "reproduce: $n studies into $OUT/; projected $(fmt "$total") on 2 free cores in all, $(fmt "$todo") still to run$scale"
k=0
for row in "${STUDIES[@]}"; do
  read -r stem secs what <<<"$row"
  k=$((k + 1))
  printf '  [%2d/%d] %-28s %-7s projected %6s  %s\n' "$k" "$n" "$stem" "${STATE[$stem]}" "$(fmt "$secs")" "$what"
  if [ "${STATE[$stem]}" = damaged ]; then
    echo "          ${WHY[$stem]}: it will be moved to $OUT/$stem.h5.damaged and run again"
  fi
done
if [ "$PLAN" = 1 ]; then exit 0; fi

mkdir -p "$OUT" 2>/dev/null && [ -w "$OUT" ] || usage_error "--out $OUT: cannot create or write in this folder"
if [ -z "${DPMU:-}" ]; then
  bash scripts/build.sh dpmu   # only the command (the tests are built by scripts/test.sh)
  DPMU=./build/engine/dpmu
fi
left=$todo; start=$(date +%s); k=0
for row in "${STUDIES[@]}"; do
  read -r stem secs _ <<<"$row"
  k=$((k + 1))
  file="$OUT/$stem.h5"
  state=${STATE[$stem]}
  if [ "$state" = done ]; then echo "reproduce: [$k/$n] $stem: finished earlier, skipped (read back intact: checksum and contents)"; continue; fi
  echo "reproduce: [$k/$n] $stem ($state): projected $(fmt "$secs"), about $(fmt "$left") left in all," \
       "$(fmt $(( $(date +%s) - start ))) elapsed"
  args=(run "configs/$stem.yaml" --out "$file")
  [ -n "$REPLICATES" ] && args+=(--replicates "$REPLICATES")
  case "$state" in
    resume) args+=(--resume) ;;
    redo) rm -f "$file" ;;
    damaged) mv -f "$file" "$file.damaged"
             echo "reproduce: [$k/$n] $stem: ${WHY[$stem]}; moved to $file.damaged, running it again" ;;
  esac
  "$DPMU" "${args[@]}"
  left=$((left - secs)); [ "$left" -lt 0 ] && left=0
done
echo "reproduce: studies done in $(fmt $(( $(date +%s) - start ))); figures, claims and report"
if ! /usr/bin/python3 plotting/report.py "$OUT" --out "$OUT/report.html" --figures "$OUT/figures"; then
  echo "reproduce: the report could not use every results file in $OUT/ (named above and in $OUT/report.html)" >&2
  exit 1
fi
echo "reproduce: figures in $OUT/figures/, claims in $OUT/claims.json and $OUT/claims.md, report in $OUT/report.html"
