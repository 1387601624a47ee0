# test_stage_orphans.sh: nothing a stage starts outlives it: a background child, a `setsid` daemon,
# a double-forked grandchild and a child of a child that already exited are all stopped when the
# stage ends (tipc is their subreaper and sweeps the stage's descendants); the stage still passes,
# with a warning naming how many it left. SIGKILL of tipc itself: see the second part.
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

# SIGKILL of tipc mid-stage: what is guaranteed is that the stage's first process is told (SIGTERM
# through PR_SET_PDEATHSIG) and ends; the processes it started itself are the stage's to stop (a
# `tipc launch` stage stops its ranks; docs/reliability.md says what may survive).
rm -rf test_tipc calls.log first
stub_train 'exec sleep $MARK'
"$TIPC" run "$CFG" lite_train_lite_infer > out.txt 2> err.txt &
pid=$!
for _ in $(seq 100); do [ -n "$(survivors)" ] && break; sleep 0.1; done
[ -n "$(survivors)" ] || fail "the stage did not start"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 30); do [ -z "$(survivors)" ] && break; sleep 0.1; done
assert_no_survivors "3 s after SIGKILL of tipc"
echo ok
