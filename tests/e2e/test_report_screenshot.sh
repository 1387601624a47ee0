# test_report_screenshot.sh: report.html as a browser draws it (issue #25, items 1 and 6). Headless
# Chromium screenshots two reports, kept as test artifacts in build/test-logs/ (not in git):
#  report-failed.png: a failed run (its title, the red verdict and failures section);
#  report-passed.png: a passing run with a 1-rank and a 2-rank training (both ranks' lines drawn);
# and a two-node run on loopback, whose every node's report draws both nodes' ranks.
# Each must be the requested size and not blank (png_check.py); the charts' layout is checked in
# the HTML itself (svg_layout.py: texts inside their chart and not overlapping, 1-2-5 ticks, a loss
# line per rank).
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_report.sh"
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome) ||
    skip "chromium is not installed (scripts/install-deps.sh installs it)"
PY=python3
$PY -c 'import PIL' 2> /dev/null || PY=/usr/bin/python3
$PY -c 'import PIL' 2> /dev/null || skip "Pillow is not installed (scripts/install-deps.sh installs python3-pil)"
ART="$ROOT/build/test-logs"
mkdir -p "$ART"
make_root

# shot HTML PNG W H: a headless Chromium screenshot of the page, W x H pixels
shot() {
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
        --user-data-dir="$TMPDIR/chrome" --window-size="$3,$4" --screenshot="$2" "file://$PWD/$1" > chrome.log 2>&1
    [ -s "$2" ] || fail "chromium wrote no screenshot of $1: $(tail -5 chrome.log)"
}

# a failed run: the failures section
tiny_config -1 1
sed 's#^norm_train:train -c configs/m/tiny.yaml#& -o Optimizer.momentum=abc#' configs/m/tiny.txt > configs/m/bad.txt
"$TIPC" run configs/m/bad.txt lite_train_lite_infer --no-prepare --output failed > /dev/null 2>&1
[ -s failed/tipc/report.html ] || fail "no report of the failed run"
shot failed/tipc/report.html "$ART/report-failed.png" 1100 900
$PY "$ROOT/tests/e2e/png_check.py" "$ART/report-failed.png" 1100 900 region=0,0,1100,120 region=0,150,1100,450 \
    rgb=#c62828 || fail "report-failed.png"

# a passing run with a 2-rank training: the charts
tiny_config '-1|0,1' 2
sed -i 's/^--use-gpu:True|False$/--use-gpu:False/' configs/m/tiny.txt   # CPU inference only
"$TIPC" run configs/m/tiny.txt lite_train_lite_infer --no-prepare --output passed > /dev/null 2>&1 ||
    fail "the passing run failed"
python3 "$ROOT/tests/e2e/svg_layout.py" passed/tipc/report.html || fail "chart layout"
python3 "$ROOT/tests/e2e/svg_layout.py" failed/tipc/report.html || fail "chart layout (failed run)"
shot passed/tipc/report.html "$ART/report-passed.png" 1100 3200
$PY "$ROOT/tests/e2e/png_check.py" "$ART/report-passed.png" 1100 3200 region=0,0,1100,120 region=0,2400,800,3000 \
    rgb=#1f77b4 rgb=#d62728 rgb=#2ca02c || fail "report-passed.png"
# two nodes on loopback (one rank each): each node's report draws both ranks, not only its own
sed -e 's/^gpu_list:.*/gpu_list:127.0.0.1,127.0.0.2;0/' configs/m/tiny.txt > configs/m/two.txt
TIPC="$TIPC" bash "$ROOT/scripts/multinode/loopback.sh" configs/m/two.txt lite_train_lite_infer --no-prepare > two.out 2>&1 ||
    fail "the two-node run failed: $(tail -n 20 two.out)"
for n in 0 1; do
    page=logs/mobilenet_v3_small/lite_train_lite_infer/node$n/tipc/report.html
    grep -q '; 2 ranks, ' "$page" || fail "node $n's report does not summarise both ranks"
    python3 "$ROOT/tests/e2e/svg_layout.py" "$page" || fail "node $n's charts"
done
echo "ok (screenshots: $ART/report-failed.png, $ART/report-passed.png)"
