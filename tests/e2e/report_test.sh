#!/usr/bin/env bash
# End to end: smoke runs → plotting/claims.py (claims.json) → plotting/report.py (one HTML page)
# → headless Chromium: the page renders (screenshot not blank), every embedded figure loads, the page
# fits a 1 400 px window (with a negative control) and every verdict links to its evidence;
# report --compare shows no change between a results folder and itself and flags the changes
# after a re-run with another seed. Exit 77 (skipped) only if Chromium is missing or cannot run.
# Usage: report_test.sh /path/to/dpmu /path/to/source-tree
set -u
DPMU="$1"
SRC="$2"
. "$(dirname "$0")/lib.sh"
cd "$SRC"

CHROMIUM=""
for c in chromium chromium-browser; do
  if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$(command -v "$c"); break; fi
done
if [ -z "$CHROMIUM" ]; then echo "SKIP: chromium not installed (scripts/setup-deps.sh installs it)"; exit 77; fi
chrome() {  # headless Chromium with a private profile; root needs --no-sandbox
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$TMP/profile" "$@" 2>>"$TMP/chromium.log"
}
echo '<html><body style="background:#000"></body></html>' > "$TMP/probe.html"
if ! chrome --screenshot="$TMP/probe.png" --window-size=200,200 "file://$TMP/probe.html" >/dev/null || [ ! -s "$TMP/probe.png" ]; then
  echo "SKIP: chromium cannot run here: $(tail -3 "$TMP/chromium.log")"; exit 77
fi

# the statistics of plotting/claims.py against independent values
if "$PY" - <<'PYEOF'
import math, sys
import numpy as np
sys.path.insert(0, "plotting")
import claims as c
# bootstrap SE of the median of n normal values: sqrt(pi/2)/sqrt(n) (asymptotic), within 10%
x = np.random.default_rng(1).standard_normal(4000)
m, se = c.bootstrap(x, c.q_stat(0.5))
assert abs(se / (math.sqrt(math.pi / 2) / math.sqrt(4000)) - 1) < 0.1, se
# MC SE of a mean: sd/sqrt(n)
m, se = c.mean_se(x)
assert abs(se - x.std(ddof=1) / math.sqrt(4000)) < 1e-15
# the claims' tests and verdicts go through plotting/verdict_rules.py (tested on its own in
# tests/python/test_verdict_rules.py): one-sided p-values, TOST, Holm
o = c.sign_outcome(1.0, 0.4, +1)
assert o["test"] == "> 0" and abs(o["p_support"] - 0.5 * math.erfc(2.5 / math.sqrt(2))) < 1e-12
assert c.sign_outcome(-1.0, 0.4, -1)["p_support"] < 0.05 and c.sign_outcome(1.0, 0.7, +1)["p_support"] > 0.05
assert c.approx_outcome(0.2552, 0.0005, 0.25, 0.0125)["p_support"] < 1e-10
assert c.interval_outcome(0.675, 0.001, 0.695, 0.705)["p_contradict"] < 1e-10
s = lambda *o: [dict(x) for x in o]  # noqa: E731
sup, unr, con = c.sign_outcome(1.0, 0.1, +1), c.sign_outcome(0.1, 0.4, +1), c.sign_outcome(-1.0, 0.1, +1)
assert c.verdict(s(sup, sup)) == ("holds", 1.0)
assert c.verdict(s(sup, sup, unr))[0] == "holds within MC error"
assert c.verdict(s(sup, unr)) == ("undecided", 0.5)  # half supported is no majority
assert c.verdict(s(con, unr))[0] == "does not hold" and c.verdict(s(sup, con))[0] == "partly"
assert c.verdict(s(*[sup] * 20, con, con), "most")[0] == "holds"
assert c.verdict([])[0] == "not run"
PYEOF
then pass; else fail "claims.py statistics"; fi

mkdir -p "$TMP/run"
for config in fig1_hsb_posterior fig2_hsb_likelihood_ratio fig7_hsb_lr_censoring fig5_cps; do
  if "$DPMU" run "configs/smoke/$config.yaml" --out "$TMP/run/$config.h5" --quiet 2>"$TMP/err"; then pass; else
    fail "dpmu run configs/smoke/$config.yaml: $(cat "$TMP/err")"; fi
done
if "$PY" plotting/report.py "$TMP/run" --out "$TMP/report.html" > "$TMP/out" 2>"$TMP/err"; then pass; else
  fail "report.py: $(cat "$TMP/err")"; fi

# claims.json: every claim of plotting/claims.py, a computed verdict for those whose results exist
if "$PY" - "$TMP/run/claims.json" <<'PYEOF'
import json, sys
sys.path.insert(0, "plotting")
import claims as c
d = json.load(open(sys.argv[1]))["claims"]
ids = {e["id"] for e in d}
assert ids == {cl.id for cl in c.CLAIMS}, ids ^ {cl.id for cl in c.CLAIMS}
ok = {"holds", "holds within MC error", "undecided", "partly", "does not hold", "figure comparison", "not run"}
for e in d:
    assert e["verdict"] in ok, e
    assert "margin" in e and "replicates" in e and e["setting"] in c.SETTINGS, e["id"]
    if e["verdict"] != "not run":
        self_contained = not e["files"]  # its own seeded simulation (PB-4.3-splitting-example)
        assert e["n_settings"] == len(e["settings"]) > 0, e["id"]
        assert self_contained or e["command"].startswith("build/engine/dpmu run"), e["id"]
        assert sum(e["counts"].values()) == e["n_settings"]
        assert abs(e["fraction"] - e["counts"]["supported"] / e["n_settings"]) < 1e-4
        assert all(f["replicates"] > 0 for f in e["files"])
        assert e["replicates"] == {f["config"]: f["replicates"] for f in e["files"]}
        assert all(0 <= st["p_support"] <= 1 and 0 <= st["p_contradict"] <= 1 for st in e["settings"])
    else:
        assert e["reason"] and e["command"], e["id"]
run = {e["id"] for e in d if e["verdict"] != "not run"}
for need in ("PB-4.4-fig1-M10-H12", "PB-4.4-fig2-H11-below", "PB-B-fig7-power", "PB-5.2.2-axes"):
    assert need in run, need
assert any(e["verdict"] == "not run" and e["id"].startswith("PB-5.2.1") for e in d)  # no ssp results here
assert any(e["verdict"] == "not run" and e["id"].startswith("LCSSF") for e in d)
PYEOF
then pass; else fail "claims.json contents"; fi

# render in Chromium: a copy of the page that records, after load, how many <img> decoded
n_img=$(grep -o '<img ' "$TMP/report.html" | wc -l)
[ "$n_img" -ge 5 ] && pass || fail "report has only $n_img figures"
sed 's#</body>#<script>window.addEventListener("load",function(){var i=Array.from(document.images);document.body.setAttribute("data-images",i.length+"/"+i.filter(function(x){return x.complete\&\&x.naturalWidth>0;}).length);});</script></body>#' \
  "$TMP/report.html" > "$TMP/check.html"
chrome --dump-dom --virtual-time-budget=20000 "file://$TMP/check.html" > "$TMP/dom.html"
if grep -q "data-images=\"$n_img/$n_img\"" "$TMP/dom.html"; then pass; else
  fail "not every figure loaded in Chromium (want $n_img/$n_img): $(grep -o 'data-images="[^"]*"' "$TMP/dom.html")"; fi
chrome --screenshot="$TMP/shot.png" --window-size=1280,3000 "file://$TMP/report.html" >/dev/null
if "$PY" - "$TMP/shot.png" <<'PYEOF'
import sys
import matplotlib.image as mpimg
import numpy as np
a = mpimg.imread(sys.argv[1])[..., :3]
assert a.shape[0] >= 2000 and a.shape[1] >= 1000, a.shape
dark = (a.mean(-1) < 0.8).mean()       # text, axes, data
assert dark > 0.01, dark                # not a blank page
assert a.std() > 0.05, a.std()
PYEOF
then pass; else fail "the screenshot of the report is blank or too small"; fi

# The page fits a 1 400 px window: Chromium lays it out at 1400x900 and a script writes the page's
# scrollWidth into the title (read back with --dump-dom). Negative control: the same check on a copy
# with one unbreakable 250-character setting key in a non-wrapping cell must fail. The screenshot at
# 1 400 px is kept in the test's temp folder and copied to $ARTIFACTS (printed) for a look.
page_width() {  # page_width FILE.html -> the page's width in CSS px at a 1 400 px window
  sed 's#</body>#<script>window.addEventListener("load",function(){document.title="W="+Math.max(document.documentElement.scrollWidth,document.body.scrollWidth);});</script></body>#' \
    "$1" > "$TMP/width.html"
  chrome --window-size=1400,900 --run-all-compositor-stages-before-draw --virtual-time-budget=20000 --dump-dom \
    "file://$TMP/width.html" | grep -o '<title>W=[0-9]*' | head -1 | sed 's/.*W=//'
}
w=$(page_width "$TMP/report.html")
if [ -n "$w" ] && [ "$w" -le 1400 ]; then pass; else fail "the report is ${w:-?} px wide at a 1 400 px window"; fi
key=$(printf 'censor_lower=0;censor_upper=3;censoring_scale=log;%.0s' 1 2 3 4 5)
sed "s#</body>#<table><tr><td style='white-space:nowrap'>$key</td></tr></table></body>#" "$TMP/report.html" > "$TMP/wide.html"
w_wide=$(page_width "$TMP/wide.html")
if [ -n "$w_wide" ] && [ "$w_wide" -gt 1400 ]; then pass; else
  fail "negative control: a page with a 250-character unbreakable cell measured ${w_wide:-?} px (the check cannot fail)"; fi
chrome --screenshot="$TMP/report_1400.png" --window-size=1400,900 "file://$TMP/report.html" >/dev/null
if [ -s "$TMP/report_1400.png" ]; then pass; else fail "no screenshot at 1 400 px"; fi
ARTIFACTS="${DPMU_TEST_ARTIFACTS:-${TMPDIR:-/tmp}/dpmu-report-test}"
mkdir -p "$ARTIFACTS" && cp "$TMP/report_1400.png" "$ARTIFACTS/report_1400.png" && echo "screenshot: $ARTIFACTS/report_1400.png (page width $w px; control $w_wide px)"

# the claims table: settings as short lists (no long unbreakable key), every verdict links to its
# evidence block, every in-page link has its target, the evidence names the figure where the page has it
if "$PY" - "$TMP/report.html" <<'PYEOF'
import html, re, sys
s = open(sys.argv[1]).read()
table = s[s.index("<table class='claims'>"):]
table = table[:table.index("</table>")]
text = html.unescape(re.sub(r"<[^>]+>", " ", table))
longest = max(text.split(), key=len)
assert len(longest) <= 60, longest
rows = re.findall(r"<tr id='claim-([a-z]+-\d+)'>(.*?)</tr>", table, re.S)
assert rows, "no claim rows"
for k, row in rows:
    assert f"href='#ev-{k}'" in row, f"claim row {k}: the verdict does not link to its evidence"
ids = set(re.findall(r"id='([^']+)'", s)) | set(re.findall(r'id="([^"]+)"', s))
targets = set(re.findall(r"href='#([^']+)'", s))
assert targets and targets <= ids, targets - ids
for k, _ in rows:
    block = s[s.index(f"id='ev-{k}'"):]
    block = block[:block.index("</div>")]
    assert "Evidence" in block, k
# the page opens with the generated summary; it names the command for the claims this run
# cannot judge, and no claim row says "not run" without the command that runs it
assert s.index("class='summary'") < s.index("id='figures'")
summary = s[s.index("class='summary'"):]
summary = summary[:summary.index("</div>")]
assert "bash scripts/reproduce.sh" in summary, summary
for row in re.findall(r"<tr id='claim-[^']+'>(.*?)</tr>", s, re.S):
    if ">not run" in row:
        assert "reproduce.sh" in row or "dpmu run" in row, row[:200]
fig_links = re.findall(r"Figure: (<a href='#[^']+'>[^<]+</a>)", s)
assert any("#PB1'" in x for x in fig_links), "no evidence block links to Figure 1"
PYEOF
then pass; else fail "claims table: settings, evidence links"; fi

# --compare (on Figure 1 alone, to keep the test short): a folder against itself changes nothing;
# a re-run with another seed changes the claims' numbers and the figure
mkdir -p "$TMP/one" "$TMP/two"
cp "$TMP/run/fig1_hsb_posterior.h5" "$TMP/one/"
if "$PY" plotting/report.py --compare "$TMP/one" "$TMP/one" --out "$TMP/same.html" >/dev/null 2>"$TMP/err" \
   && grep -q "<p>0 claim entries changed" "$TMP/same.html" && grep -q "identical image" "$TMP/same.html"; then pass
else fail "compare of a folder with itself: $(cat "$TMP/err")"; fi
sed 's/^master_seed: .*/master_seed: 7/' configs/smoke/fig1_hsb_posterior.yaml > "$TMP/fig1_hsb_posterior.yaml"
"$DPMU" run "$TMP/fig1_hsb_posterior.yaml" --out "$TMP/two/fig1_hsb_posterior.h5" --quiet 2>"$TMP/err" || fail "re-run"
if "$PY" plotting/report.py --compare "$TMP/one" "$TMP/two" --out "$TMP/diff.html" >/dev/null 2>"$TMP/err" \
   && grep -q "the image changed" "$TMP/diff.html" && ! grep -q "<p>0 claim entries changed" "$TMP/diff.html"; then pass
else fail "compare after a re-run with another seed: $(cat "$TMP/err")"; fi
# bad input: a clear message, exit 2
"$PY" plotting/report.py "$TMP/nonexistent" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "no such folder" "$TMP/err" && pass || fail "report.py on a missing folder"

echo "report_test: $passes passed, $failures failed"
[ $failures -eq 0 ]
