#!/usr/bin/env bash
# Two nodes in two network namespaces joined by a veth pair the test creates (10.231.N.1 / .2): the
# nodes find themselves by interface address (no --node_ip), meet through node 0's store, and run
# real Gloo collectives over the veth; then a rank is killed and both nodes stop; then the link is
# cut mid-run (anchors #14): collectives time out naming the collective and step, and everything stops.
. "$(dirname "$0")/lib_launch.sh"
COMM=$ROOT/build/san/tests/test_comm
[ -x "$COMM" ] || { echo "SKIP $COMM not built (make test builds it)"; exit 77; }
NET=10.231.$(( $$ % 250 ))
netns_pair tipc "$NET"

export TIPC_JOB_TOKEN=ns TIPC_COMM_TIMEOUT=30
ARGS="--ips=$NET.1,$NET.2 --gpus=0,1 --log_dir=l"
nsl() { local name=$1 ns=$2; shift 2; ip netns exec "$ns" "$TIPC" launch --job_id="$JOB" "$@" >"$W/$name.out" 2>&1 & LAUNCHERS+=($!); eval "${name}_pid=$!"; }
nsl a1 "$NS1" $ARGS "$COMM" --worker collectives
nsl a0 "$NS0" $ARGS "$COMM" --worker collectives
wait_rc rc0 "$a0_pid"; wait_rc rc1 "$a1_pid"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "collectives across namespaces: exit $rc0 $rc1"
grep -q "node 1/2 ($NET.2)" a1.out || fail "node 1 did not find itself by address: $(cat a1.out)"
for r in 0 1 2 3; do grep -q "^rank $r of 4: collectives ok (backend gloo)" l/workerlog.$r || fail "rank $r"; done

LAUNCHERS=()
nsl b1 "$NS1" $ARGS --log_dir=lb "$COMM" --worker loop
nsl b0 "$NS0" $ARGS --log_dir=lb "$COMM" --worker loop
wait_line lb/workerlog.2 looping
victim=$(rank_pid "$JOB" 2)
[ -n "$victim" ] || fail "no rank 2"
kill_expect_gone 9 "$victim" 10 "kill -9 of rank 2 across namespaces"
wait_rc rc0 "$b0_pid"; wait_rc rc1 "$b1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 137 ] || fail "exit codes $rc0 $rc1, want 4 and 137"
grep -q "rank 2 (node 1, $NET.2" b0.out || fail "node 0 does not name rank 2 on node 1"

# node 1 listed under an address only it has (on its lo, no route from node 0: a wrong NIC, anchors
# #6): the probe before the ranks start says which node cannot reach which address; no rank starts
LAUNCHERS=()
UNR=10.233.$(( $$ % 250 )).2
ip -n "$NS1" addr add "$UNR/32" dev lo || fail "extra address"
nsl u1 "$NS1" --ips=$NET.1,$UNR --gpus=0 --log_dir=lu --join_timeout=8 sleep 60
nsl u0 "$NS0" --ips=$NET.1,$UNR --gpus=0 --log_dir=lu --join_timeout=8 sleep 60
wait_rc rc0 "$u0_pid"; wait_rc rc1 "$u1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 4 ] || fail "unreachable node: exit codes $rc0 $rc1, want 4 4"
for f in u0.out u1.out; do
    grep -q "node 0 ($NET.1) cannot open a TCP connection to node 1 at $UNR:[0-9]*: Network is unreachable" $f || fail "$f: $(cat $f)"
done
[ ! -e lu/workerlog.0 ] || fail "ranks started although node 1 is unreachable"

LAUNCHERS=()
export TIPC_COMM_TIMEOUT=3
nsl c1 "$NS1" $ARGS --log_dir=lc "$COMM" --worker loop
nsl c0 "$NS0" $ARGS --log_dir=lc "$COMM" --worker loop
wait_line lc/workerlog.3 looping
t0=$(now)
ip -n "$NS1" link set "$V1" down
wait_gone "$JOB" 15 || fail "survivors 15 s after the link went down: $(job_procs "$JOB")"
echo "link down: all gone in $(elapsed "$t0") s"
wait_rc rc0 "$c0_pid"; wait_rc rc1 "$c1_pid"
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] || fail "link down: exit codes $rc0 $rc1, want both non-zero"
grep -q 'allreduce #[0-9]* (16384 bytes) at step [0-9]* failed' lc/workerlog.0 || fail "rank 0 does not name the collective: $(tail -n 3 lc/workerlog.0)"
# node 1 stops either because its store is gone or because its own ranks' collectives timed out
grep -Eq 'lost the rendezvous server|rank [23] \(node 1.* exited with code 4' c1.out || fail "node 1: $(cat c1.out)"
echo ok
