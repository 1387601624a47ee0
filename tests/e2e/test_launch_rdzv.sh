#!/usr/bin/env bash
# Rendezvous failures, each must end fast with exit 4 and a message that names the culprit:
# a node that never starts (timeout names it), node 0 that never starts, a wrong token, a port in
# use, a world-size mismatch (anchors #1, #2, #5).
. "$(dirname "$0")/lib_launch.sh"
IPS=--ips=127.0.0.1,127.0.0.2

# node 1 never starts: node 0 gives up after --join_timeout and names node 1
port=$(free_port); t0=$(now)
rc=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --join_timeout=2 sleep 60 2>err || rc=$?
[ "$rc" = 4 ] || fail "missing node: exit $rc, want 4"
grep -q 'node 1 (127.0.0.2, rank 1) never joined within 2 s (world size 2)' err || fail "missing node not named: $(cat err)"

# 3 nodes x 2 ranks, node 2 never starts: both others name node 2 and its ranks
port=$(free_port)
IPS3=--ips=127.0.0.1,127.0.0.2,127.0.0.3
launch_bg g1 $IPS3 --node_ip=127.0.0.2 --master=127.0.0.1:$port --gpus=0,1 --join_timeout=2 sleep 60
rc=0; "$TIPC" launch --job_id="$JOB" $IPS3 --node_ip=127.0.0.1 --master=127.0.0.1:$port --gpus=0,1 --join_timeout=2 sleep 60 2>err || rc=$?
wait_rc rc1 "$g1_pid"
[ "$rc" = 4 ] && [ "$rc1" = 4 ] || fail "3 nodes, one missing: exit $rc $rc1"
grep -q 'node 2 (127.0.0.3, ranks 4-5) never joined within 2 s (world size 6)' err || fail "node 0: $(cat err)"
grep -q 'node 2 (127.0.0.3, ranks 4-5) never joined' g1.out || fail "node 1: $(cat g1.out)"
grep -q 'cannot reach' g1.out && fail "node 0 stopped its store before node 1 had left: $(cat g1.out)"
[ "$(elapsed "$t0" | cut -d. -f1)" -lt 12 ] || fail "join timeout took $(elapsed "$t0") s"   # 2 x 2 s timeouts + start-up under load
[ -z "$(job_procs "$JOB")" ] || fail "ranks were started without a full job"

# node 0 never starts: node 1 says the rendezvous server did not answer (master from env TIPC_MASTER,
# node from env POD_IP: how `tipc run` passes them down)
port=$(free_port)
rc=0; TIPC_MASTER=127.0.0.1:$port POD_IP=127.0.0.2 "$TIPC" launch --job_id="$JOB" $IPS --join_timeout=2 sleep 60 2>err || rc=$?
[ "$rc" = 4 ] && grep -q "rendezvous server 127.0.0.1:$port (node 0) did not answer within 2 s" err || fail "no master: rc=$rc $(cat err)"

# wrong token on node 1: 403, said clearly on node 1; node 0 then names node 1 as missing
port=$(free_port)
TIPC_JOB_TOKEN=right launch_bg t0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --join_timeout=4 sleep 60
sleep 0.5
rc=0; TIPC_JOB_TOKEN=wrong "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port sleep 60 2>err || rc=$?
[ "$rc" = 4 ] || fail "wrong token: exit $rc"
grep -q "node 1: the rendezvous server at http://127.0.0.1:$port/kv/$JOB/ refused the job token (HTTP 403)" err || fail "403 message: $(cat err)"
grep -q 'hint: set the same TIPC_JOB_TOKEN on every node' err || fail "no hint: $(cat err)"
wait_rc rc "$t0_pid"
[ "$rc" = 4 ] && grep -q 'node 1 (127.0.0.2, rank 1) never joined' t0.out || fail "node 0 after wrong token: rc=$rc $(cat t0.out)"
grep -q 'hint: the store refused [1-9][0-9]* connections\? for a wrong token (the last from 127.0.0.1)' t0.out || fail "node 0 does not say it refused a token: $(cat t0.out)"

# port in use: a first job holds the port; a second job on it says so with a hint
port=$(free_port)
export TIPC_JOB_TOKEN=p
launch_bg h0 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=lh sleep 60
for _ in $(seq 50); do grep -q 'ranks' h0.out 2>/dev/null && break; sleep 0.1; done
rc=0; "$TIPC" launch --job_id="${JOB}b" --master=127.0.0.1:$port true 2>err || rc=$?
[ "$rc" = 4 ] && grep -q "port $port in use on 127.0.0.1" err && grep -q 'hint: .*--master=HOST:PORT' err || fail "port in use: rc=$rc $(cat err)"
kill -TERM "$h0_pid"; wait_rc rc "$h0_pid"
[ "$rc" = 130 ] || fail "SIGTERM to the holder: exit $rc, want 130"

# world size mismatch: node 0 has 2 ranks, node 1 only 1; both say so within seconds
port=$(free_port); t0=$(now)
launch_bg w0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --gpus=0,1 sleep 60
launch_bg w1 $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --gpus=0 sleep 60
wait_rc rc0 "$w0_pid"; wait_rc rc1 "$w1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 4 ] || fail "mismatch: exit $rc0 $rc1"
for f in w0.out w1.out; do
    grep -q 'world size mismatch: node [01] (127.0.0.[12]) has nnodes=2 nproc_per_node=[12] (world [24]) but node [01]' $f || fail "$f: $(cat $f)"
done
[ "$(elapsed "$t0" | cut -d. -f1)" -lt 8 ] || fail "mismatch took $(elapsed "$t0") s"
wait_gone "$JOB" 5 || fail "left over: $(job_procs "$JOB")"
echo ok
