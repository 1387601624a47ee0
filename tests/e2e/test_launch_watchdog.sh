#!/usr/bin/env bash
# The job's watchdog (#11 item 8): a rank that stops (SIGSTOP) or hangs outside the collectives is
# named, with what it was last doing and who waits in what, on every node, within --watchdog + 5 s
# (here 3 s; default 120, before the collectives' own 300 s timeout), and the whole job stops.
. "$(dirname "$0")/lib_launch.sh"
COMM=$ROOT/build/san/tests/test_comm
[ -x "$COMM" ] || { echo "SKIP $COMM not built (make test builds it)"; exit 77; }
IPS=--ips=127.0.0.1,127.0.0.2
WD=3

# 1. SIGSTOP of rank 1 (node 1) mid-run
port=$(free_port)
launch_bg s0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --watchdog=$WD --log_dir=ls "$COMM" --worker loop
launch_bg s1 $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --watchdog=$WD --log_dir=ls "$COMM" --worker loop
wait_line s0.out 'rank 0: looping' 60
sleep 1.5   # heartbeats flowing
pid1=$(rank_pid "$JOB" 1)
[ -n "$pid1" ] || fail "rank 1 not found"
t0=$(now)
kill -STOP "$pid1"
wait_rc rc0 "$s0_pid"; wait_rc rc1 "$s1_pid"
secs=$(elapsed "$t0")
echo "SIGSTOP: both launchers ended $secs s after the stop (watchdog $WD s): exit $rc0 $rc1"
[ "$rc0$rc1" = 44 ] || fail "SIGSTOP: exit $rc0 $rc1, want 4 4"
awk -v s="$secs" -v w=$WD 'BEGIN { exit !(s < w + 8) }' || fail "SIGSTOP: took $secs s, bound $WD + 5 s (+ grace)"
for f in s0.out s1.out; do
    # which rule speaks first depends on timing (comm_verdict.c): its heartbeats stopped, or it is the
    # rank the others wait for in a collective; either way rank 1 is named, as a stopped process
    grep -Eq "watchdog \($WD s\): stuck: rank 1 \(node 1, pid $pid1\) (sent no heartbeat for [0-9]+ s|has not reached collective #[0-9]+)[:,] process stopped \(SIGSTOP" $f ||
        fail "$f does not name rank 1 as stopped: $(cat $f)"
    grep -q "rank 1 .*last seen \(in allreduce #[0-9]* at step [0-9]*\|computing at step [0-9]*\)" $f || fail "$f: what rank 1 did: $(cat $f)"
    grep -q "waiting: rank 0 in allreduce #[0-9]* (step [0-9]*)" $f || fail "$f: who waits: $(cat $f)"
done
wait_gone "$JOB" 5 || fail "survivors after the watchdog: $(job_procs "$JOB")"

# 2. rank 1 hangs outside the collectives at step 5 (alive, heartbeating): it is named as the one
#    that has not reached the collective rank 0 waits in
port=$(free_port)
launch_bg h0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --watchdog=$WD --log_dir=lh "$COMM" --worker hang
launch_bg h1 $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --watchdog=$WD --echo=all --log_dir=lh "$COMM" --worker hang
wait_line h1.out 'rank 1: hanging at step 5' 60
t0=$(now)
wait_rc rc0 "$h0_pid"; wait_rc rc1 "$h1_pid"
secs=$(elapsed "$t0")
echo "hang: both launchers ended $secs s after the hang began: exit $rc0 $rc1"
[ "$rc0$rc1" = 44 ] || fail "hang: exit $rc0 $rc1"
awk -v s="$secs" -v w=$WD 'BEGIN { exit !(s < w + 8) }' || fail "hang: took $secs s"
for f in h0.out h1.out; do
    grep -q "stuck: rank 1 (node 1, pid [0-9]*) has not reached collective #[0-9]*: process running, last seen computing at step 5" $f ||
        fail "$f does not name the hung rank: $(cat $f)"
done
wait_gone "$JOB" 5 || fail "survivors after the hang: $(job_procs "$JOB")"
echo PASS
