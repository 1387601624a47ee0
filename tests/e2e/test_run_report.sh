# test_run_report.sh: what `tipc run` reports for CI, with real runs (stub interpreter):
#  1. a failing stage whose log holds hostile bytes (random bytes, invalid UTF-8, NUL, colour codes,
#     a multibyte character at the tail cut) still gives JUnit that validates against the Jenkins
#     schema (xmllint --schema) and parses with Python's ElementTree; the stage's exit code 4 is
#     kept (failure type, table);
#  2. a failed train: its output is kept in OUTPUT/tipc/NN_train.log, passed through to stdout,
#     and is the JUnit failure body; eval/export/infer are skipped with the reason, exit 1;
#  3. test names are short and the same for two output dirs;
#  4. colour: none in a pipe, none with NO_COLOR on a terminal, green/red on a terminal (a pty);
#  5. a real rendezvous failure (the master port is taken) of the fleet config's training: its exit
#     code 4 and meaning in the table and JUnit, its error line in the table and the JUnit message,
#     its message in the failure body, the rest skipped.
. "$ROOT/tests/e2e/lib.sh"
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
XSD="$ROOT/tests/fixtures/jenkins-junit.xsd"
[ -f "$CFG" ] || skip "no golden fixtures"
command -v xmllint > /dev/null || skip "xmllint not installed (scripts/install-deps.sh installs libxml2-utils)"
make_root
OUT=test_tipc/output/mobilenet_v3_small/lite_train_lite_infer

# 1. hostile bytes in a failing export's log; exit code 4
python3 - hostile.bin <<'PY'
import random, sys
random.seed(7)
tail = bytearray()
tail += bytes(random.getrandbits(8) for _ in range(3000))            # random bytes
tail += b"\xc3\x28 \xa0\xa1 \xe2\x28\xa1 \xf0\x28\x8c\xbc \xed\xa0\x80 \xef\xbf\xbe"  # invalid UTF-8
tail += b"NUL:\x00 ESC:\x1b[31mred\x1b[0m BEL:\x07 FF:\x0c ]]> <&> '\"\n"
tail += "PaddleOCR 日志: 训练失败\n".encode() * 40
# the JUnit body keeps the last 8192 bytes: the cut falls after the first byte of a 3-byte character
pad = 8192 - 2 - len(tail)
assert pad > 512  # no newline near the cut: the character rule, not the line rule, must apply
data = b"head line\n" * 50 + "中".encode() + b"x" * pad + bytes(tail)
assert data[-8192:-8190] == "中".encode()[1:]
open(sys.argv[1], "wb").write(data)
PY
STUB_FAIL=export_model.py STUB_CAT="$PWD/hostile.bin" STUB_RC=4 "$TIPC" run "$CFG" lite_train_lite_infer \
    --junit junit.xml > out.txt 2> err.txt
assert_eq "$?" 1 "exit code"
xmllint --noout --schema "$XSD" junit.xml 2> xsd.err || fail "schema: $(head -5 xsd.err)"
xmllint --noout --schema "$XSD" "$OUT/tipc/junit.xml" 2> xsd.err || fail "schema (OUTPUT/tipc/junit.xml): $(head -5 xsd.err)"
python3 - junit.xml <<'PY' || fail "ElementTree"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
s = root.find("testsuite")
assert s.get("failures") == "2" and s.get("skipped") == "4" and s.get("tests") == "10", s.attrib
assert s.get("hostname") and s.get("timestamp"), s.attrib
fails = [c for c in s.iter("testcase") if c.find("failure") is not None]
assert len(fails) == 2
for c in fails:
    f = c.find("failure")
    assert f.get("message") == "exit status 4" and f.get("type") == "exit 4", f.attrib
    body = f.text
    assert "训练失败" in body and "\\x00" in body and "red" in body and "\x1b" not in body, body[-300:]
    assert "\ufffd" in body  # invalid bytes replaced
    assert c.find("system-out").text.startswith("command: python3.7 tools/export_model.py "), c.find("system-out").text
    assert float(c.get("time")) >= 0
PY
grep -q 'FAILED(4)' err.txt || fail "table does not show exit code 4: $(grep -i failed err.txt)"
grep -q 'reason: exit status 4' err.txt || fail "table reason"

# 2. a failed train: output kept, passed through, in the failure body; its chain skipped
rm -rf test_tipc
printf 'epoch 1 loss 2.30\n\rtrain [#...]  10%%\rtrain [####] 100%%\nTraceback: CUDA out of memory\n' > trainout.txt
# the log keeps what a terminal finally shows: a line redrawn with \r only in its last state
printf 'epoch 1 loss 2.30\ntrain [####] 100%%\nTraceback: CUDA out of memory\n' > trainlog.want
STUB_FAIL=train.py STUB_CAT="$PWD/trainout.txt" "$TIPC" run "$CFG" lite_train_lite_infer --junit junit2.xml > out.txt 2> err.txt
assert_eq "$?" 1 "exit code after a failed train"
assert_eq "$(tail -n 1 out.txt)" "0 passed, 2 failed, 8 skipped" "summary"
grep -q '^Traceback: CUDA out of memory$' out.txt || fail "training output not passed through to stdout"
cmp -s trainlog.want "$OUT/tipc/01_train.log" || fail "training output not kept in $OUT/tipc/01_train.log: $(cat -A "$OUT/tipc/01_train.log")"
grep -q $'\rtrain \[#...\]  10%\rtrain' out.txt || fail "stdout is not passed through byte for byte"
grep -q '^\[1/10\] train norm_train gpus=0 autocast=False$' err.txt || fail "no [1/10] line: $(head -3 err.txt)"
grep -q '^\[2/10\] eval norm_train gpus=0 autocast=False: skipped (train\[norm_train gpus=0 autocast=False\] failed)$' err.txt ||
    fail "skip line: $(grep '^\[2/10\]' err.txt)"
python3 - junit2.xml <<'PY' || fail "train failure body"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
c = s.find("testcase")
assert c.get("classname").endswith(".train"), c.attrib
assert "Traceback: CUDA out of memory" in c.find("failure").text, c.find("failure").text
sk = [c for c in s.iter("testcase") if c.find("skipped") is not None]
assert len(sk) == 8 and all("train[norm_train" in c.find("skipped").get("message") for c in sk)
PY
xmllint --noout --schema "$XSD" junit2.xml 2> xsd.err || fail "schema: $(head -5 xsd.err)"

# the environment a stage gets: its report name, and PYTHONUNBUFFERED=1 when its output is piped
mkdir -p envstub
printf '#!/bin/sh\necho "PYTHONUNBUFFERED=${PYTHONUNBUFFERED-unset} TIPC_STAGE=${TIPC_STAGE-unset}"\n' > envstub/python3.7
chmod +x envstub/python3.7
rm -rf test_tipc
(unset PYTHONUNBUFFERED; PATH="$PWD/envstub:$PATH" "$TIPC" run "$CFG" lite_train_lite_infer > env.out 2>&1) || fail "env run"
grep -qx 'PYTHONUNBUFFERED=1 TIPC_STAGE=mobilenet_v3_small.lite_train_lite_infer.train\[norm_train gpus=0 autocast=False\]' \
    "$OUT/tipc/01_train.log" || fail "train stage env: $(cat "$OUT/tipc/01_train.log")"
grep -q '^PYTHONUNBUFFERED=unset TIPC_STAGE=mobilenet_v3_small.lite_train_lite_infer.export\[' \
    "$OUT/norm_train_gpus_0_autocast_False_nodes_1_export.log" || fail "export stage env"

# 3. names: short, no paths, the same for two output dirs
"$TIPC" run "$CFG" lite_train_lite_infer --output a --junit a.xml > /dev/null 2>&1 || fail "run a"
"$TIPC" run "$CFG" lite_train_lite_infer --output "$PWD/b/deeper/dir" --junit b.xml > /dev/null 2>&1 || fail "run b"
python3 - a.xml b.xml <<'PY' || fail "names"
import sys, xml.etree.ElementTree as ET
def names(p):
    return [(c.get("classname"), c.get("name")) for c in ET.parse(p).getroot().iter("testcase")]
a, b = names(sys.argv[1]), names(sys.argv[2])
assert a == b, (a, b)
assert len(set(a)) == len(a), "duplicate names"
for cls, n in a:
    assert "/" not in n and len(n) < 128, n
    assert n.startswith(cls + "["), (cls, n)
assert a[0][1] == "mobilenet_v3_small.lite_train_lite_infer.train[norm_train gpus=0 autocast=False]", a[0]
assert a[3][1] == "mobilenet_v3_small.lite_train_lite_infer.infer[norm_train gpus=0 autocast=False use_gpu=True bs=1]", a[3]
PY

# 4. colour only on a terminal, never with NO_COLOR
for f in out.txt err.txt; do ! grep -q $'\033\[' "$f" || fail "escape codes in a pipe ($f)"; done
cat > pty_run.py <<'PY'
import os, pty, sys
out = bytearray()
def read(fd):
    data = os.read(fd, 65536)
    out.extend(data)
    return data
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
while True:
    try:
        if not read(fd): break
    except OSError:
        break
os.waitpid(pid, 0)
open(sys.argv[1], "wb").write(bytes(out))
PY
rm -rf test_tipc
STUB_FAIL=export_model.py python3 pty_run.py tty.txt "$TIPC" run "$CFG" lite_train_lite_infer
grep -q $'\033\[32m Run successfully with command' tty.txt || fail "no green status line on a terminal"
grep -q $'\033\[31m Run failed with command' tty.txt || fail "no red status line on a terminal"
grep -q $'\033\[31mFAILED(1)' tty.txt || fail "no red FAILED in the table on a terminal"
rm -rf test_tipc
NO_COLOR=1 STUB_FAIL=export_model.py python3 pty_run.py tty2.txt "$TIPC" run "$CFG" lite_train_lite_infer
grep -q 'Run failed with command' tty2.txt || fail "pty run printed nothing"
! grep -q $'\033\[' tty2.txt || fail "escape codes with NO_COLOR=1"

# 5. a real rendezvous failure: `tipc launch` cannot bind the master port (held by this listener)
rm -rf test_tipc logs
ln -s "$ROOT/configs" configs
ln -s "$ROOT/images" images
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open("port.txt", "w").write(str(s.getsockname()[1])); time.sleep(60)' &
holder=$!
for _ in $(seq 50); do [ -s port.txt ] && break; sleep 0.1; done
port=$(cat port.txt)
TIPC_MASTER=127.0.0.1:$port "$TIPC" run configs/mobilenet_v3_small/train_fleet_infer.txt lite_train_lite_infer \
    --node_ip 127.0.0.1 --no-prepare --junit rdzv.xml > out.txt 2> err.txt
rc=$?
kill "$holder" 2>/dev/null
assert_eq "$rc" 1 "exit code after a rendezvous failure"
grep -q 'FAILED(4)' err.txt || fail "table: $(grep -A1 ' 1  train' err.txt)"
grep -q 'reason: exit status 4 (tipc: distributed)' err.txt || fail "table reason: $(grep reason err.txt)"
grep -q "error:  rendezvous: port $port in use on 127.0.0.1" err.txt || fail "table error line: $(grep -A1 reason err.txt)"
assert_eq "$(tail -n 1 out.txt)" "0 passed, 1 failed, 3 skipped" "summary after a rendezvous failure"
python3 - rdzv.xml "$port" <<'PY' || fail "rendezvous failure in JUnit"
import sys, xml.etree.ElementTree as ET
c = ET.parse(sys.argv[1]).getroot().find("testsuite").find("testcase")
f = c.find("failure")
# the message is the exit code's meaning and the error line itself (the launcher's, from the stage's error log)
assert f.get("type") == "exit 4" and f.get("message") == f"exit status 4 (tipc: distributed): rendezvous: port {sys.argv[2]} in use on 127.0.0.1", f.attrib
assert f"port {sys.argv[2]} in use" in f.text, f.text
PY
xmllint --noout --schema "$XSD" rdzv.xml 2> xsd.err || fail "schema: $(head -5 xsd.err)"
echo ok
