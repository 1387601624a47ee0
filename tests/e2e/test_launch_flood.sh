#!/usr/bin/env bash
# Slowloris against the rendezvous store (#11 item 16): 1000 idle connections from one address
# (127.0.0.66) while a 3-node job joins and runs. Nodes 0 and 1 join first, the flood starts, node 2
# joins during it, the ranks run under it: every node must exit 0. The server must also close the
# idle connections it accepted (idle timeout), so the flooder sees far more closed than it holds.
# The launchers run with `ulimit -n 1024`, where the old server ran out of descriptors.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=flood-test-secret-$$
port=$(free_port)
IPS=--ips=127.0.0.1,127.0.0.2,127.0.0.3
ulimit -n 1024
launch_bg n0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --join_timeout=40 --log_dir=l sleep 4
launch_bg n1 $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --join_timeout=40 --log_dir=l sleep 4
sleep 1
python3 "$ROOT/tests/e2e/flood.py" "$port" 127.0.0.66 1000 14 >flood.out 2>&1 &
flood_pid=$!
sleep 3   # the flood is in place
t0=$(now)
rc2=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.3 --master=127.0.0.1:$port --nproc_per_node=1 \
    --join_timeout=20 --log_dir=l sleep 4 >n2.out 2>&1 || rc2=$?
echo "node 2 joined and finished in $(elapsed "$t0") s under the flood"
wait_rc rc0 "$n0_pid"; wait_rc rc1 "$n1_pid"
wait "$flood_pid"
cat flood.out
[ "$rc0$rc1$rc2" = 000 ] || fail "under the flood: exit codes $rc0 $rc1 $rc2, want 0 0 0"
read -r _ opened _ closed _ held _ < flood.out
[ "$held" -le 100 ] || fail "the server let one address hold $held connections"
# every connection the flooder opened beyond what it may hold was closed by the server
[ "$closed" -ge $((opened - held - 5)) ] && [ "$opened" -gt 1000 ] || fail "server closed $closed of $opened idle connections"
echo "flood: opened $opened, server closed $closed, at most $held held at once"

# a slow drip (one header byte every 3 s) is no better than silence: a fresh 2-node job forms
port=$(free_port)
IPS=--ips=127.0.0.1,127.0.0.2
launch_bg d0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --join_timeout=30 --log_dir=l true
sleep 0.5
python3 "$ROOT/tests/e2e/flood.py" "$port" 127.0.0.67 500 6 --drip >drip.out 2>&1 &
drip_pid=$!
sleep 2
rc1=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 \
    --join_timeout=20 --log_dir=l true >d1.out 2>&1 || rc1=$?
wait_rc rc0 "$d0_pid"
wait "$drip_pid"
[ "$rc0$rc1" = 00 ] || fail "under a slow drip: exit codes $rc0 $rc1"
echo "drip: $(cat drip.out)"
echo PASS
