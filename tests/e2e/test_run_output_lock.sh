#!/usr/bin/env bash
# One run per output folder (#23 class 10): a second `tipc run` on an output folder that a running
# one uses is refused at once (exit 2, nothing run), naming the first (pid, host, config, mode); the
# first runs to its end, its results log holds only its own lines. Once the first has ended, or was
# killed (kill -9), the folder is free again. Real runs of a 32-line config (stub interpreter).
. "$ROOT/tests/e2e/lib.sh"
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
make_root
STUB_SLEEP=0.5 "$TIPC" run "$CFG" lite_train_lite_infer --output shared >out1.txt 2>err1.txt &
pid=$!
for _ in $(seq 100); do grep -q '^\[1/' err1.txt && break; sleep 0.1; done
grep -q '^\[1/' err1.txt || fail "the first run did not start: $(cat err1.txt)"
rc=0; "$TIPC" run "$CFG" lite_train_lite_infer --output shared >out2.txt 2>err2.txt || rc=$?
wait $pid; rc1=$?
[ "$rc1" = 0 ] || fail "the first run: exit $rc1: $(tail -5 err1.txt)"
[ "$rc" = 2 ] || fail "a second run on a busy output folder: exit $rc, want 2: $(tail -5 err2.txt)"
grep -q "output folder 'shared' is in use by another tipc run: pid $pid on $(hostname)" err2.txt &&
    grep -q "$CFG lite_train_lite_infer" err2.txt || fail "the refusal does not name the first run: $(cat err2.txt)"
[ ! -s out2.txt ] || fail "the refused run printed status lines: $(cat out2.txt)"
assert_eq "$(wc -l < shared/results_python.log)" 10 "lines in the results log (only the first run's)"
# free again: after the end, and after a kill -9
"$TIPC" run "$CFG" lite_train_lite_infer --output shared >out3.txt 2>err3.txt || fail "after the first ended: $(tail -5 err3.txt)"
STUB_SLEEP=30 "$TIPC" run "$CFG" lite_train_lite_infer --output shared >out4.txt 2>err4.txt &
pid=$!
for _ in $(seq 100); do grep -q '^\[1/' err4.txt && break; sleep 0.1; done
kill -9 $pid; wait $pid 2>/dev/null
"$TIPC" run "$CFG" lite_train_lite_infer --output shared >out5.txt 2>err5.txt || fail "after a kill -9: $(tail -5 err5.txt)"
echo PASS
