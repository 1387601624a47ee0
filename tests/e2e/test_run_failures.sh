# test_run_failures.sh: a failing stage is reported `Run failed`, the later stages that do not
# need its output still run, those that do are skipped (with the reason), the summary counts both
# and tipc exits 1; bad input exits 2 with one `file:line:` line and runs nothing;
# --dry-run runs nothing; JUnit is valid XML; SIGTERM stops the run and its child.
. "$ROOT/tests/e2e/lib.sh"
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
make_root
export STUB_LOG="$PWD/calls.log"

# 1. export fails (stub exits 1 when its arguments contain export_model.py): the inference on the
#    model it should have written is skipped; the next gpu_list item's chain runs
STUB_FAIL=export_model.py "$TIPC" run "$CFG" lite_train_lite_infer --junit junit.xml > out.txt 2> err.txt
assert_eq "$?" 1 "exit code with a failed stage"
log=test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/results_python.log
assert_eq "$(wc -l < "$log")" 6 "status lines (skipped stages did not run)"
assert_eq "$(grep -c '^Run failed with command - mobilenet_v3_small - python3.7 tools/export_model.py ' "$log")" 2 "failed exports"
assert_eq "$(grep -c '^Run successfully with command - ' "$log")" 4 "passed stages"
# line 3 failed; the first gpu_list item's inference was skipped, the second item's train ran
sed -n 3p "$log" | grep -q '^Run failed with command - mobilenet_v3_small - python3.7 tools/export_model.py --model=mobilenet_v3_small --pretrained=./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/norm_train_gpus_0_autocast_False_nodes_1.log/latest.pdparams --save-inference-dir=./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/norm_train_gpus_0_autocast_False_nodes_1.log > ./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/norm_train_gpus_0_autocast_False_nodes_1_export.log 2>&1 !$' || fail "line 3 of the log: $(sed -n 3p "$log")"
sed -n 4p "$log" | grep -q '^Run successfully with command - mobilenet_v3_small - python3.7 -m paddle.distributed.launch --gpus=0,1 train.py ' || fail "line 4: $(sed -n 4p "$log")"
assert_eq "$(tail -n 1 out.txt)" "4 passed, 2 failed, 4 skipped" "summary"
grep -q '^\[4/10\] infer norm_train gpus=0 autocast=False use_gpu=True bs=1: skipped (export\[norm_train gpus=0 autocast=False\] failed)$' err.txt ||
    fail "skip line: $(grep '^\[4/10\]' err.txt)"
assert_eq "$(wc -l < calls.log)" 6 "stub calls"
# CUDA_VISIBLE_DEVICES as the original's eval $env / unset leave it (first column of calls.log)
assert_eq "$(cut -f1 calls.log | tr '\n' ' ')" "<unset> 0 0 <unset> 0 0 " "CUDA_VISIBLE_DEVICES per call"
python3 - junit.xml <<'PY' || fail "junit"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert s.get("tests") == "10" and s.get("failures") == "2" and s.get("skipped") == "4", s.attrib
assert sum(1 for c in s.iter("testcase") if c.find("failure") is not None) == 2
sk = [c for c in s.iter("testcase") if c.find("skipped") is not None]
assert len(sk) == 4 and all(c.get("classname").endswith(".infer") for c in sk), [c.get("name") for c in sk]
PY
# a rerun appends to the results log, as the original's tee -a
STUB_FAIL=export_model.py "$TIPC" run "$CFG" lite_train_lite_infer > /dev/null 2>&1
assert_eq "$(wc -l < "$log")" 12 "results log appended"

# 2. training fails: what needs its weights (eval, export, inference) is skipped, not failed
rm -rf test_tipc calls.log
STUB_FAIL=train.py "$TIPC" run "$CFG" lite_train_whole_infer > out.txt 2>&1
assert_eq "$?" 1 "exit code"
assert_eq "$(tail -n 1 out.txt)" "0 passed, 2 failed, 8 skipped" "a failed train skips its chain"
assert_eq "$(wc -l < calls.log)" 2 "only the two trainings ran"

# 3. bad input: one line on stderr, exit 2, nothing run, no output dir
rm -rf test_tipc calls.log
check_bad() { # expected-prefix args...
    want=$1; shift
    "$TIPC" run "$@" > out.txt 2> err.txt
    assert_eq "$?" 2 "exit code for $*"
    assert_eq "$(wc -l < err.txt)" 1 "stderr lines for $*"
    case "$(cat err.txt)" in "$want"*) ;; *) fail "stderr for $*: $(cat err.txt)";; esac
    [ ! -e calls.log ] || fail "something ran for $*"
    [ ! -e test_tipc ] || fail "output dir made for $*"
}
check_bad "missing.txt: cannot open config: No such file or directory" missing.txt lite_train_lite_infer
check_bad "$CFG: unknown mode 'lite'" "$CFG" lite
sed '4s/.*/gpu_list:0|x/' "$CFG" > bad_gpu.txt
check_bad "bad_gpu.txt:4: malformed gpu_list item 'x'" bad_gpu.txt lite_train_lite_infer
sed '13s/.*/trainer:norm_trian/' "$CFG" > bad_trainer.txt
check_bad "bad_trainer.txt:13: unknown trainer 'norm_trian'" bad_trainer.txt lite_train_lite_infer
sed '17s/.*/eval:train.py --test-only; rm -rf \//' "$CFG" > bad_shell.txt
check_bad "bad_shell.txt:17: shell syntax ';' is not supported" bad_shell.txt lite_train_lite_infer
head -n 20 "$CFG" > short.txt
check_bad "short.txt:20: too few lines" short.txt lite_train_lite_infer
"$TIPC" run "$CFG" > out.txt 2> err.txt; assert_eq "$?" 2 "missing MODE"
"$TIPC" run "$CFG" lite_train_lite_infer --bogus > out.txt 2> err.txt; assert_eq "$?" 2 "unknown option"

# 4. --dry-run runs nothing and lists the 10 commands
"$TIPC" run "$CFG" lite_train_lite_infer --dry-run > out.txt 2>&1
assert_eq "$?" 0 "dry run"
[ ! -e calls.log ] || fail "dry run ran something"
assert_eq "$(grep -c ' line ' out.txt)" 10 "dry-run commands"

# 5. SIGTERM to tipc while a stage runs: the child is stopped too and tipc exits 130
STUB_SLEEP=31.7 "$TIPC" run "$CFG" lite_train_lite_infer > out.txt 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s calls.log ] && break; sleep 0.1; done
kill -TERM "$pid"
wait "$pid"
assert_eq "$?" 130 "exit code after SIGTERM"
sleep 0.2
if pgrep -f "sleep 31.7" > /dev/null; then pkill -f "sleep 31.7"; fail "a process of the stage survived SIGTERM"; fi
assert_eq "$(wc -l < calls.log)" 1 "no stage started after SIGTERM"
echo ok
