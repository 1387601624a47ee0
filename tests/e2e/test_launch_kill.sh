#!/usr/bin/env bash
# Kill one rank mid-run (SIGKILL to rank 3 on node 1, ranks in a Gloo allreduce loop): every process on
# both nodes is gone within 10 s, both launchers exit non-zero, and the messages name rank and node.
# Then the same with a rank that exits 1 on node 0 (anchors #9, #10).
. "$(dirname "$0")/lib_launch.sh"
COMM=$ROOT/build/san/tests/test_comm
[ -x "$COMM" ] || { echo "SKIP $COMM not built (make test builds it)"; exit 77; }
export TIPC_JOB_TOKEN=k TIPC_COMM_TIMEOUT=60
port=$(free_port)
IPS="--ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --gpus=0,1"
launch_bg n0 $IPS --node_ip=127.0.0.1 --log_dir=l "$COMM" --worker loop
launch_bg n1 $IPS --node_ip=127.0.0.2 --log_dir=l "$COMM" --worker loop
wait_line l/workerlog.3 looping
victim=$(rank_pid "$JOB" 3)
[ -n "$victim" ] || fail "no rank 3 process"
kill_expect_gone 9 "$victim" 10 "kill -9 of rank 3"
wait_rc rc0 "$n0_pid"; wait_rc rc1 "$n1_pid"
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] || fail "exit codes $rc0 $rc1, want both non-zero"
[ "$rc1" = 137 ] || fail "node 1 exit $rc1, want 137 (its rank 3 was SIGKILLed)"
grep -q 'rank 3 (node 1, 127.0.0.2, local rank 1, pid [0-9]*) was killed by signal 9' n1.out || fail "node 1 message"
grep -q 'node 0: stopping local ranks: rank 3 (node 1, 127.0.0.2' n0.out || fail "node 0 does not name rank 3 on node 1"

# a rank exiting 1 on node 0 (bash stand-ins: no collectives, so only the launchers can stop them)
LAUNCHERS=()
port=$(free_port)
IPS="--ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --gpus=0,1"
CMD='[ $RANK = 1 ] && { sleep 1; echo "bad batch" >&2; exit 1; }; sleep 60'   # one command: the job's fingerprint
launch_bg m1 $IPS --node_ip=127.0.0.2 --log_dir=m bash -c "$CMD"
launch_bg m0 $IPS --node_ip=127.0.0.1 --log_dir=m bash -c "$CMD"
t0=$(now)
wait_gone "$JOB" 12 || fail "exit(1) on rank 1: still alive: $(job_procs "$JOB") $(alive_launchers)"
echo "exit(1): all gone in $(elapsed "$t0") s (including the 1 s sleep)"
wait_rc rc0 "$m0_pid"; wait_rc rc1 "$m1_pid"
[ "$rc0" = 1 ] && [ "$rc1" = 4 ] || fail "exit codes node0=$rc0 node1=$rc1, want 1 and 4"
grep -q 'rank 1 (node 0, 127.0.0.1, local rank 1, pid [0-9]*) exited with code 1' m1.out || fail "node 1 message: $(cat m1.out)"
grep -q 'bad batch' m0.out || fail "the failing rank's last lines are not shown"
echo ok
