# test_run_metrics.sh: a real `tipc run` of a python:tipc config (tiny model, synthetic data): one
# training in one process and one with `tipc launch` over 2 ranks, then eval, export, inference:
#  - OUTPUT/tipc/metrics.jsonl: every line is JSON; the run's environment, each stage's outcome and
#    times, per-rank train_step lines (loss, lr, top1, img/s), epoch and eval lines, the summary;
#  - OUTPUT/tipc/report.html parses, every element is closed, and it holds an <svg> with a loss
#    curve per rank;
#  - progress: `progress: epoch e/E step ... ETA` lines in a pipe, kept in the training's log too;
#    a bar redrawn with '\r' on a terminal (a pty).
. "$ROOT/tests/e2e/lib.sh"
W=$(mktemp -d "$TMPDIR/metrics.XXXXXX")
cd "$W" || fail "cd"
ln -s "$ROOT/images" images
mkdir -p cfg
tiny_recipe 2 > cfg/tiny.yaml
sed -e 's|^gpu_list:.*|gpu_list:-1\|0,1|' -e 's|^--epochs:.*|--epochs:lite_train_lite_infer=2|' \
    -e 's|configs/mobilenet_v3_small/mobilenet_v3_small.yaml|cfg/tiny.yaml|' \
    -e '/^inference:/,$ s|^--use-gpu:.*|--use-gpu:False|' \
    "$ROOT/configs/mobilenet_v3_small/train_infer.txt" > cfg/tiny.txt
OUT=./logs/mobilenet_v3_small/lite_train_lite_infer
"$TIPC" run cfg/tiny.txt lite_train_lite_infer --no-prepare > out.txt 2> err.txt
rc=$?
[ "$rc" -eq 0 ] || { tail -n 40 out.txt err.txt; fail "tipc run exit $rc"; }
assert_eq "$(tail -n 1 out.txt)" "8 passed, 0 failed, 0 skipped" "summary"
M=$OUT/tipc/metrics.jsonl
[ -s "$M" ] || fail "no $M"
python3 - "$M" <<'PY' || fail "metrics file"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]  # every line is one JSON object
ev = lambda e: [l for l in lines if l["event"] == e]
assert all("t" in l for l in lines)
run = ev("run")[0]
for k in ("model", "mode", "config", "host", "os", "cpus", "tipc_version", "started"):
    assert k in run, k
st = ev("stage")
assert [s["kind"] for s in st] == ["train", "eval", "export", "infer"] * 2, [s["kind"] for s in st]
for s in st:
    for k in ("k", "name", "outcome", "status", "started", "seconds", "log", "command"):
        assert k in s, (k, s)
    assert s["outcome"] == "passed" and s["status"] == 0 and s["seconds"] >= 0
train1, train2 = st[0]["name"], st[4]["name"]
assert train1 == "mobilenet_v3_small.lite_train_lite_infer.train[norm_train gpus=-1 autocast=False]", train1
steps = ev("train_step")
for s in steps:
    for k in ("stage", "rank", "world", "epoch", "iter", "step", "loss", "lr", "top1", "ips"):
        assert k in s, (k, s)
r1 = {s["rank"] for s in steps if s["stage"] == train1}
r2 = {s["rank"] for s in steps if s["stage"] == train2}
assert r1 == {0} and r2 == {0, 1}, (r1, r2)
assert {s["epoch"] for s in steps if s["stage"] == train1} == {0, 1}
assert all(s["ips"] > 0 and s["loss"] > 0 and 0 <= s["top1"] <= 100 for s in steps)
assert all(abs(l["t"] - run["started"]) < 3600 for l in lines)  # full-precision times
assert len([e for e in ev("epoch") if e["stage"] == train2]) == 4  # 2 epochs x 2 ranks
evals = ev("eval")
assert any(e["stage"] == train1 for e in evals) and any(e["stage"] == st[1]["name"] for e in evals), evals
assert all(0 <= e["top1"] <= 100 for e in evals)
summ = ev("summary")[-1]
assert (summ["passed"], summ["failed"], summ["skipped"]) == (8, 0, 0), summ
PY
python3 - "$OUT/tipc/report.html" <<'PY' || fail "HTML report"
import sys
from html.parser import HTMLParser
VOID = {"meta", "br", "img", "hr", "input", "link"}
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.svgs, self.loss_lines, self.errors = [], [], 0, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg": self.svgs.append(a.get("class"))
        if tag == "polyline" and a.get("class") == "loss": self.loss_lines += 1
        if tag not in VOID: self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID: self.stack.pop()
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag: self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
        else: self.stack.pop()
text = open(sys.argv[1], encoding="utf-8").read()
assert text.startswith("<!DOCTYPE html>")
assert "http://" not in text.replace("http://www.w3.org/2000/svg", ""), "a network reference"
p = P(); p.feed(text); p.close()
assert not p.errors and not p.stack, (p.errors, p.stack)
assert "loss" in p.svgs and "timeline" in p.svgs and "throughput" in p.svgs and "accuracy" in p.svgs, p.svgs
assert p.loss_lines == 3, p.loss_lines  # 1 rank + 2 ranks
assert "8 passed, 0 failed, 0 skipped" in text
assert "loss fell from" in text or "loss did not fall" in text
PY
grep -Eq '^progress: epoch 2/2 step 4/4 \(100%\) loss [0-9.]+ lr [0-9.]+ [0-9.]+ img/s ETA 0:00:00$' err.txt ||
    fail "no progress line in a pipe: $(grep -m3 progress err.txt)"
grep -q '^progress: epoch 1/2 ' "$OUT/tipc/01_train.log" || fail "progress not kept in the training log"
grep -q '^\[Epoch 1, iter: 3\] top1: ' "$OUT/tipc/01_train.log" || fail "training output not kept in its log"

# a metrics file that cannot be written is an error (exit 5), not a warning
TIPC_METRICS=/dev/full "$TIPC" train -c cfg/tiny.yaml --output-dir "$W/fullout" > full.out 2> full.err
assert_eq "$?" 5 "exit code when the metrics file is full"
grep -q '^/dev/full: cannot append to metrics file: No space left on device$' full.err ||
    fail "metrics ENOSPC message: $(cat full.err)"

# a terminal: the bar, redrawn in place
python3 - bar.txt "$TIPC" train -c cfg/tiny.yaml --output-dir "$W/barout" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.environ.pop("TIPC_PROGRESS", None)
    os.execvp(sys.argv[2], sys.argv[2:])
out = bytearray()
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d: break
    out += d
_, status = os.waitpid(pid, 0)
open(sys.argv[1], "wb").write(bytes(out))
sys.exit(os.waitstatus_to_exitcode(status))
PY
[ $? -eq 0 ] || fail "tipc train on a pty"
grep -aq $'\rtrain \[#' bar.txt || fail "no progress bar on a terminal"
grep -aq 'epoch 2/2 step 4/4 loss' bar.txt || fail "bar does not reach the end"
echo ok
