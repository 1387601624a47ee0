#!/usr/bin/env bash
# A local user trickling requests cannot keep a job's nodes out (#23 class 6): 200 connections from
# 127.0.0.1, the address every node on this host comes from too, each sending a request line and then
# one header line every 4 s (so an idle timeout that restarts on every byte never fires), re-opened
# as the server closes them. Node 1 must still join and both nodes end 0; the server must close
# every trickling connection once its headers are late (RDZV_HEADER_DEADLINE_S, 5 s), not keep it.
# Node 1 gets 8 s to join (it needs well under 1 s).
. "$(dirname "$0")/lib_launch.sh"
port=$(free_port)
IPS=--ips=127.0.0.1,127.0.0.2
launch_bg n0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --join_timeout=30 --log_dir=l sleep 3
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.1; done
python3 "$ROOT/tests/e2e/flood.py" "$port" 127.0.0.1 200 12 --lines 4 >flood.out 2>&1 &
flood_pid=$!
sleep 3   # the trickle is in place: 200 connections from 127.0.0.1
t0=$(now)
rc1=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 \
    --join_timeout=8 --log_dir=l sleep 3 >n1.out 2>&1 || rc1=$?
echo "node 1 joined and finished in $(elapsed "$t0") s under the trickle"
wait_rc rc0 "$n0_pid"
wait "$flood_pid"
cat flood.out
[ "$rc0$rc1" = 00 ] || fail "under 200 trickling connections from 127.0.0.1: exit codes $rc0 $rc1, want 0 0"
read -r _ opened _ closed _ held _ life < flood.out
# the server ended the trickling connections (the flooder re-opened them), each within the deadline
[ "$closed" -ge 200 ] || fail "the server closed only $closed of $opened trickling connections"
awk -v l="$life" 'BEGIN { exit !(l <= 7.5) }' || fail "a trickling connection lived $life s (header deadline 5 s)"
echo "trickle: opened $opened, server closed $closed, longest life $life s"
echo PASS
