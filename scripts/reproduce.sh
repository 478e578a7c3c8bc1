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
# Resumable: a study whose results file is finished at the config's size is skipped; one that was
# interrupted (its FILE.journal exists) is continued with `dpmu run --resume`; one finished at
# another size (e.g. a reduced run) is run again. Interrupt at any time and run the command again.
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
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --replicates) REPLICATES="$2"; shift 2 ;;
    --plan) PLAN=1; shift ;;
    --only) ONLY=",$2,"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reproduce: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

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
  "fig3_4_zellner_siow         941 PB Figures 3, 4, 8, 9; PB-5.2.1-*, PB-5.2-zs-bic, PB-C-*, PB-5.3-*"
)
if [ -n "$ONLY" ]; then
  kept=()
  for row in "${STUDIES[@]}"; do read -r stem _ <<<"$row"; [[ "$ONLY" == *",$stem,"* ]] && kept+=("$row"); done
  [ ${#kept[@]} -gt 0 ] || { echo "reproduce: --only names no study of the list" >&2; exit 2; }
  STUDIES=("${kept[@]}")
fi
# Not run: configs/fig8_9_bic.yaml (its cells equal the BIC cells of fig3_4_zellner_siow bit for bit,
# from which Figures 8 and 9 are drawn), configs/fig3_4_zellner_siow_shared.yaml (the same study,
# another joint law across cells), configs/fig3_4_zellner_siow_pruned.yaml (the same study and draws,
# ZS models below 1e-17 of the posterior skipped: docs/performance.md), configs/lei_real_data.yaml (no figure or claim: LCSSF gives no
# numbers for its data examples), configs/linear_design_example.yaml, configs/normal_mean.yaml.

status() {  # status STEM FILE -> run | resume | done (finished at the wanted size) | redo (another size)
  local stem="$1" file="$2"
  if [ -f "$file.journal" ]; then echo resume; return; fi
  if [ ! -f "$file" ]; then echo run; return; fi
  /usr/bin/python3 - "$file" "configs/$stem.yaml" "$REPLICATES" <<'PYEOF'
import re, sys
import h5py
path, config, override = sys.argv[1:]
want = int(override) if override else int(re.search(r"^replicates:\s*(\d+)", open(config).read(), re.M).group(1))
try:
    with h5py.File(path, "r") as f:
        done = bool(f.attrs["complete"]) and int(f.attrs["replicates"]) == want
except Exception:
    done = False
print("done" if done else "redo")
PYEOF
}

fmt() { local s=$1; if [ "$s" -ge 3600 ]; then printf '%dh%02dm' $((s / 3600)) $((s % 3600 / 60));
        elif [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi; }

total=0; todo=0; n=${#STUDIES[@]}
declare -A STATE
for row in "${STUDIES[@]}"; do
  read -r stem secs _ <<<"$row"
  STATE[$stem]=$(status "$stem" "$OUT/$stem.h5")
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
done
if [ "$PLAN" = 1 ]; then exit 0; fi

if [ -z "${DPMU:-}" ]; then
  bash scripts/build.sh dpmu   # only the command (the tests are built by scripts/test.sh)
  DPMU=./build/engine/dpmu
fi
mkdir -p "$OUT"
left=$todo; start=$(date +%s); k=0
for row in "${STUDIES[@]}"; do
  read -r stem secs _ <<<"$row"
  k=$((k + 1))
  file="$OUT/$stem.h5"
  state=${STATE[$stem]}
  if [ "$state" = done ]; then echo "reproduce: [$k/$n] $stem: finished earlier, skipped"; continue; fi
  echo "reproduce: [$k/$n] $stem ($state): projected $(fmt "$secs"), about $(fmt "$left") left in all," \
       "$(fmt $(( $(date +%s) - start ))) elapsed"
  args=(run "configs/$stem.yaml" --out "$file")
  [ -n "$REPLICATES" ] && args+=(--replicates "$REPLICATES")
  case "$state" in
    resume) args+=(--resume) ;;
    redo) rm -f "$file" ;;
  esac
  "$DPMU" "${args[@]}"
  left=$((left - secs)); [ "$left" -lt 0 ] && left=0
done
echo "reproduce: studies done in $(fmt $(( $(date +%s) - start ))); figures, claims and report"
/usr/bin/python3 plotting/report.py "$OUT" --out "$OUT/report.html" --figures "$OUT/figures"
echo "reproduce: figures in $OUT/figures/, claims in $OUT/claims.json and $OUT/claims.md, report in $OUT/report.html"
