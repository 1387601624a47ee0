#!/usr/bin/env bash
# SIGINT to one launcher of a 2-node job (ranks that spawn children of their own): no process of the
# job survives on either node, node 1 exits 130, node 0 non-zero (anchors #11). Then SIGKILL to the
# node-0 launcher itself: its ranks die with it (PR_SET_PDEATHSIG) and node 1 notices the lost store.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=s
port=$(free_port)
IPS="--ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=2"
RANKPROG='sleep 60 & sleep 60 & echo up; wait'   # a rank with grandchildren
launch_bg n0 $IPS --node_ip=127.0.0.1 --log_dir=l bash -c "$RANKPROG"
launch_bg n1 $IPS --node_ip=127.0.0.2 --log_dir=l bash -c "$RANKPROG"
for _ in $(seq 100); do [ "$(job_procs "$JOB" | wc -l)" -ge 12 ] && break; sleep 0.1; done
[ "$(job_procs "$JOB" | wc -l)" -ge 12 ] || fail "expected 4 ranks x 3 processes, got $(job_procs "$JOB" | wc -l)"
kill_expect_gone INT "$n1_pid" 10 "SIGINT to node 1's launcher"
wait_rc rc0 "$n0_pid"; wait_rc rc1 "$n1_pid"
[ "$rc1" = 130 ] && [ "$rc0" = 4 ] || fail "exit codes node0=$rc0 node1=$rc1, want 4 and 130"
grep -q 'node 1 (127.0.0.2) was interrupted by SIGINT' n0.out || fail "node 0 does not say why: $(cat n0.out)"

LAUNCHERS=()
port=$(free_port)
IPS="--ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=2"
launch_bg k0 $IPS --node_ip=127.0.0.1 --log_dir=k bash -c 'exec sleep 60'
launch_bg k1 $IPS --node_ip=127.0.0.2 --log_dir=k bash -c 'exec sleep 60'
for _ in $(seq 100); do [ "$(job_procs "$JOB" | wc -l)" -ge 4 ] && break; sleep 0.1; done
kill_expect_gone 9 "$k0_pid" 10 "SIGKILL to node 0's launcher"
wait_rc rc1 "$k1_pid"
[ "$rc1" = 4 ] && grep -q 'lost the rendezvous server' k1.out || fail "node 1: rc=$rc1 $(cat k1.out)"

# SIGINT while node 0 still waits for node 1 to join: out within a second or two, not at the timeout
LAUNCHERS=()
port=$(free_port)
launch_bg j0 --ips=127.0.0.1,127.0.0.2 --node_ip=127.0.0.1 --master=127.0.0.1:$port --join_timeout=60 sleep 60
for _ in $(seq 50); do ss -ltn 2>/dev/null | grep -q ":$port " && break; sleep 0.1; done
sleep 0.5
t0=$(now)
kill -INT "$j0_pid"
wait_rc rc "$j0_pid"
[ "$rc" = 130 ] || fail "SIGINT while joining: exit $rc, want 130"
[ "$(elapsed "$t0" | cut -d. -f1)" -lt 3 ] || fail "SIGINT while joining took $(elapsed "$t0") s"
grep -q 'node 0 (127.0.0.1) was interrupted while joining' j0.out || fail "join interrupt message: $(cat j0.out)"
echo ok
