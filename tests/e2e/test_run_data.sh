# test_run_data.sh: which data a run used is recorded, and CI can demand real data (issue #25,
# item 4):
#  1. an offline run: prepare makes the synthetic default; junit.xml (property data.lite_data),
#     metrics.jsonl ("data" event; train_start's data_origin/data_synthetic) and report.html say so;
#  2. --real-data (TIPC_OFFLINE=1): the synthetic fallback is refused before anything runs (exit 3,
#     the manifest's line); `tipc prepare --real-data` the same; a folder that holds the synthetic
#     default from an earlier prepare is not accepted as real;
#  3. tipc train --real-data (TIPC_REAL_DATA) refuses synthetic data (in memory, or tipc prepare's
#     synthetic folder; exit 3, and tipc run shows that error line) and takes a folder of the user's;
#  4. with the real lite dataset served from a file:// URL, --real-data fetches it and the record
#     names the URL (skipped without ../shared/data/lite_data.tar).
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_report.sh"
command -v python3 > /dev/null || skip "python3 is needed to read the reports"
make_root
tiny_config -1 1
sed -i 's/^--use-gpu:True|False$/--use-gpu:False/' configs/m/tiny.txt   # CPU inference only

# 1. offline (tipc run's default): the synthetic default, recorded everywhere
"$TIPC" run configs/m/tiny.txt lite_train_lite_infer --output out > out.txt 2> err.txt
assert_eq "$?" 0 "offline run"
python3 - out/tipc/junit.xml out/tipc/metrics.jsonl <<'PY' || fail "data record"
import json, sys, xml.etree.ElementTree as ET
props = {p.get("name"): p.get("value") for p in ET.parse(sys.argv[1]).getroot().iter("property")}
v = props.get("data.lite_data", "")
assert v.startswith("data/lite_data: synthetic default (offline): synthetic classes=10"), props
ev = [json.loads(l) for l in open(sys.argv[2])]
data = [e for e in ev if e["event"] == "data"]
assert len(data) == 1 and data[0]["dest"] == "data/lite_data" and data[0]["synthetic"] is True, data
ts = [e for e in ev if e["event"] == "train_start"]
assert ts and all(e["data_synthetic"] is True for e in ts), ts
assert ts[0]["data_origin"].startswith("synthetic images made in memory"), ts[0]["data_origin"]
PY
grep -q 'data: <span class="warn">data/lite_data: synthetic default (offline)' out/tipc/report.html ||
    fail "report.html does not say the data was synthetic: $(grep -o 'data: [^<]*<[^>]*>[^<]*' out/tipc/report.html | head -3)"

# 2. --real-data, offline: refused before anything runs (the folder above holds the synthetic default)
rm -rf out
TIPC_OFFLINE=1 "$TIPC" run configs/m/tiny.txt lite_train_lite_infer --output out --real-data > out.txt 2> err.txt
assert_eq "$?" 3 "--real-data offline"
grep -q "datasets.yaml:[0-9]*: item 'lite_data' ('data/lite_data'): offline, and real data is required" err.txt ||
    fail "message: $(cat err.txt)"
[ ! -e out/results_python.log ] || fail "a stage ran: $(cat out/results_python.log)"
grep -q "holds the synthetic default; real data is required" out.txt || fail "the earlier synthetic folder was taken: $(cat out.txt)"
TIPC_REAL_DATA=1 "$TIPC" prepare configs/m/tiny.txt lite_train_lite_infer --offline > p.txt 2>&1
assert_eq "$?" 3 "tipc prepare with TIPC_REAL_DATA=1 offline"

# 3. tipc train refuses synthetic data with --real-data
"$TIPC" train -c configs/m/tiny.yaml --epochs 1 --output-dir t1 --real-data > t.txt 2>&1
assert_eq "$?" 3 "train --real-data on in-memory synthetic data"
grep -q 'the data is synthetic (synthetic images made in memory' t.txt || fail "train message: $(cat t.txt)"
TIPC_REAL_DATA=1 "$TIPC" train -c configs/m/tiny.yaml --data-path data/lite_data -o Arch.class_num=10 --epochs 1 \
    --output-dir t2 > t.txt 2>&1
assert_eq "$?" 3 "train with TIPC_REAL_DATA=1 on tipc prepare's synthetic folder"
grep -q "the data is synthetic (data/lite_data: tipc prepare's synthetic default" t.txt || fail "train message: $(cat t.txt)"
cp -r data/lite_data mine && rm mine/.tipc-prepared   # the same images as a folder of the user's
"$TIPC" train -c configs/m/tiny.yaml --data-path mine -o Arch.class_num=10 --epochs 1 --output-dir t3 --real-data > t.txt 2>&1 ||
    fail "train --real-data on a user's folder: $(tail -3 t.txt)"
# tipc run --real-data passes it to the stages: the train stage fails with that error line
mkdir -p srv && cp -r mine srv/lite_data
tar -C srv -cf lite.tar lite_data
sum=$(sha256sum lite.tar | cut -d' ' -f1)
sed -e "s#- https://.*#- file://$PWD/lite.tar#" -e "s/sha256: .*/sha256: $sum/" -e "s/size: .*/size: $(stat -c %s lite.tar)/" \
    configs/datasets.yaml > local.yaml
rm -rf out
TIPC_MANIFEST=local.yaml "$TIPC" run configs/m/tiny.txt lite_train_lite_infer --output out --real-data --junit r.xml > out.txt 2> err.txt
assert_eq "$?" 1 "--real-data run whose recipe trains on synthetic data"
grep -q "^        error:  the data is synthetic (synthetic images made in memory" err.txt || fail "table: $(grep -A2 FAILED err.txt)"
python3 - r.xml "$PWD/lite.tar" <<'PY' || fail "the fetched data's record"
import sys, xml.etree.ElementTree as ET
props = {p.get("name"): p.get("value") for p in ET.parse(sys.argv[1]).getroot().iter("property")}
assert props.get("data.lite_data") == f"data/lite_data: fetched file://{sys.argv[2]} (sha256 verified)", props
PY

# 4. the real lite dataset: --real-data fetches it and the report names it
lite_data_tar
rm -rf data out
sum=$(sha256sum "$TAR" | cut -d' ' -f1)
sed -e "s#- https://.*#- file://$TAR#" -e "s/sha256: .*/sha256: $sum/" -e "s/size: .*/size: $(stat -c %s "$TAR")/" \
    configs/datasets.yaml > real.yaml
TIPC_MANIFEST=real.yaml "$TIPC" prepare configs/m/tiny.txt lite_train_lite_infer --real-data > p.txt 2>&1 ||
    fail "prepare --real-data from a file:// URL: $(cat p.txt)"
grep -q "fetched file://$TAR (sha256 verified)" p.txt || fail "prepare: $(cat p.txt)"
echo ok
