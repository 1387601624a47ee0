#!/usr/bin/env bash
# 2 nodes x 2 ranks on loopback (two launchers, --node_ip 127.0.0.1 / 127.0.0.2), running real Gloo
# collectives (tests/unit/test_comm --worker collectives: exact sums over 4 ranks, two-level allreduce
# from the launcher's LOCAL_RANK/LOCAL_WORLD_SIZE/TIPC_NNODES); at the same time a
# second 2-node job on another port and a one-node job on an automatic port (two jobs on one host).
. "$(dirname "$0")/lib_launch.sh"
COMM=$ROOT/build/san/tests/test_comm
[ -x "$COMM" ] || { echo "SKIP $COMM not built (make test builds it)"; exit 77; }
export TIPC_COMM_TIMEOUT=30
pa=$(free_port); pb=$(free_port)
[ "$pa" != "$pb" ] || pb=$((pa + 1))
IPS=--ips=127.0.0.1,127.0.0.2
t0=$(now)
TIPC_COMM_HIERARCHICAL=1 TIPC_JOB_TOKEN=tokA launch_bg a1 $IPS --node_ip=127.0.0.2 --gpus=0,1 --master=127.0.0.1:$pa --log_dir=la --echo=all "$COMM" --worker collectives
TIPC_COMM_HIERARCHICAL=1 TIPC_JOB_TOKEN=tokA launch_bg a0 $IPS --node_ip=127.0.0.1 --gpus=0,1 --master=127.0.0.1:$pa --log_dir=la --echo=all "$COMM" --worker collectives
TIPC_JOB_TOKEN=tokB launch_bg b0 $IPS --node_ip=127.0.0.1 --nproc_per_node=1 --master=127.0.0.1:$pb --log_dir=lb "$COMM" --worker collectives
TIPC_JOB_TOKEN=tokB launch_bg b1 $IPS --node_ip=127.0.0.2 --nproc_per_node=1 --master=127.0.0.1:$pb --log_dir=lb "$COMM" --worker collectives
launch_bg c0 --nproc_per_node=2 --log_dir=lc "$COMM" --worker collectives
for n in a0 a1 b0 b1 c0; do
    eval "p=\$${n}_pid"
    wait_rc rc "$p"
    [ "$rc" = 0 ] || fail "launcher $n exited $rc"
done
echo "3 jobs in $(elapsed "$t0") s"
for r in 0 1 2 3; do grep -q "^rank $r of 4: collectives ok (backend gloo, hierarchical)$" la/workerlog.$r || fail "job a rank $r: $(cat la/workerlog.$r)"; done
for r in 0 1; do grep -q "^rank $r of 2: collectives ok" lb/workerlog.$r || fail "job b rank $r"; done
for r in 0 1; do grep -q "^rank $r of 2: collectives ok" lc/workerlog.$r || fail "job c rank $r"; done
grep -q '^\[1:3\] rank 3 of 4: collectives ok' a1.out || fail "node 1 console: $(cat a1.out)"
grep -q '^\[0:0\] rank 0 of 4' a0.out || fail "node 0 console"
wait_gone "$JOB" 5 || fail "processes left: $(job_procs "$JOB") $(alive_launchers)"
echo ok
