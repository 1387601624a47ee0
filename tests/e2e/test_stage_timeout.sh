# test_stage_timeout.sh: --stage-timeout / TIPC_STAGE_TIMEOUT stop a stage that never ends, with
# every process it started (SIGTERM, then SIGKILL for one that ignores it); the stage is `Run failed`
# with the reason on stderr (and in the end table), the later stages still run (those that need its
# output are skipped), nothing is left, and the run ends.
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_stage.sh"
log=test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/results_python.log

# 1. a stage that sleeps forever, with a background child
stub_train 'sleep $MARK & exec sleep $MARK'
start=$(date +%s)
"$TIPC" run "$CFG" lite_train_lite_infer --stage-timeout 1 > out.txt 2> err.txt
assert_eq "$?" 1 "exit code with a timed-out stage"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "the run took too long"
grep -q "config.txt:14: the train stage timed out after 1 (--stage-timeout)" err.txt || fail "no reason: $(cat err.txt)"
sed -n 1p "$log" | grep -q '^Run failed with command - mobilenet_v3_small - python3.7 train.py --output-dir=' || fail "status line: $(sed -n 1p "$log")"
grep -q "reason: timed out after 1 (--stage-timeout)" err.txt || fail "no reason in the end table: $(cat err.txt)"
# the stages that need its output are skipped; the next training chain (gpu_list's second item) runs
assert_eq "$(grep -c '^Run successfully' "$log")" 5 "later stages passed"
assert_eq "$(wc -l < calls.log)" 6 "stages run"
grep -q -- "--gpus=0,1 train.py" calls.log || fail "the next training did not run"
assert_no_survivors "after the timeout"

# 2. the environment default, a stage that ignores SIGTERM (killed after the 5 s grace)
rm -rf test_tipc calls.log first
stub_train 'trap "" TERM; sleep $MARK & while :; do sleep 0.1; done'
start=$(date +%s)
TIPC_STAGE_TIMEOUT=1s "$TIPC" run "$CFG" lite_train_lite_infer > out.txt 2> err.txt
assert_eq "$?" 1 "exit code (TIPC_STAGE_TIMEOUT)"
secs=$(( $(date +%s) - start ))
[ "$secs" -ge 5 ] && [ "$secs" -lt 30 ] || fail "SIGKILL after the grace period: took ${secs}s"
grep -q "timed out after 1s" err.txt || fail "no reason: $(cat err.txt)"
assert_eq "$(wc -l < calls.log)" 6 "stages run"
assert_no_survivors "after SIGKILL"

# 3. bad durations are usage errors, nothing runs
rm -rf test_tipc calls.log first
for bad in abc -5 10x 99999d; do
    "$TIPC" run "$CFG" lite_train_lite_infer --stage-timeout "$bad" > out.txt 2> err.txt
    assert_eq "$?" 2 "--stage-timeout $bad"
    grep -q "want a duration" err.txt || fail "message for $bad: $(cat err.txt)"
done
TIPC_STAGE_TIMEOUT=5 "$TIPC" run "$CFG" lite_train_lite_infer --stage-timeout junk > out.txt 2> err.txt
assert_eq "$?" 2 "the option wins over the environment"
[ ! -e calls.log ] || fail "something ran"
echo ok
