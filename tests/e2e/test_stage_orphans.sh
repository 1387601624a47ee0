# test_stage_orphans.sh: nothing a stage starts outlives it: a background child, a `setsid` daemon,
# a double-forked grandchild and a child of a child that already exited are all stopped when the
# stage ends (tipc is their subreaper and sweeps the stage's descendants); the stage still passes,
# with a warning naming how many it left; and when tipc itself is SIGKILLed, they are stopped too.
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_stage.sh"
log=test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/results_python.log

stub_train 'sleep $MARK &
setsid sleep $MARK &
(sleep $MARK &)
sh -c "sleep $MARK & exit 0"
while [ "$(pgrep -c -f "sleep $MARK")" -lt 4 ]; do sleep 0.05; done
exit 0'
"$TIPC" run "$CFG" lite_train_lite_infer > out.txt 2> err.txt
assert_eq "$?" 0 "exit code"
assert_eq "$(grep -c '^Run successfully' "$log")" 10 "stages passed"
grep -q "config.txt:14: the train stage ended but left 4 processes running; stopped" err.txt || fail "warning: $(cat err.txt)"
assert_no_survivors "after the stage ended"

# SIGKILL of tipc mid-stage: nobody is left to sweep, so tipc's guard (a watcher that waits for
# tipc's end) stops every process carrying the run's environment mark: the stage's first process,
# its background child and a setsid daemon alike.
rm -rf test_tipc calls.log first
stub_train 'sleep $MARK &
setsid sleep $MARK &
while [ "$(pgrep -c -f "sleep $MARK")" -lt 2 ]; do sleep 0.05; done
exec sleep $MARK'
"$TIPC" run "$CFG" lite_train_lite_infer > out.txt 2> err.txt &
pid=$!
for _ in $(seq 100); do [ "$(pgrep -c -f "sleep $MARK")" -ge 3 ] && break; sleep 0.1; done
[ "$(pgrep -c -f "sleep $MARK")" -ge 3 ] || fail "the stage did not start its 3 processes"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 50); do [ -z "$(survivors)" ] && break; sleep 0.1; done
assert_no_survivors "5 s after SIGKILL of tipc"
echo ok
