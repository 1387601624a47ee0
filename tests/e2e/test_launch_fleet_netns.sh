#!/usr/bin/env bash
# The fleet chain across two network namespaces joined by a veth pair the test creates: each node is
# `tipc run train_fleet_infer.txt lite_train_lite_infer` in its own namespace and folder, with the
# config's gpu_list pointing at the veth addresses; no --node_ip: each node finds itself by interface
# address. Every stage passes on both nodes and the two trained models are identical.
. "$(dirname "$0")/lib_launch.sh"
T=${TIPC_REL:-$TIPC}
CFG=$FLEET_CFG
[ -f "$ROOT/$CFG" ] || { echo "SKIP $CFG not in this tree"; exit 77; }
NET=10.234.$(( $$ % 250 ))
netns_pair tipf "$NET"

export TIPC_JOB_TOKEN=fleetns TIPC_JOB_ID=$JOB
for n in 0 1; do
    fleet_dir n$n
    sed -i "s/^gpu_list:.*/gpu_list:$NET.1,$NET.2;0,1/" "$W/n$n/$CFG"
done
t0=$(now)
(cd "$W/n1" && exec ip netns exec "$NS1" "$T" run $CFG lite_train_lite_infer) >"$W/n1.out" 2>&1 & p1=$!
(cd "$W/n0" && exec ip netns exec "$NS0" "$T" run $CFG lite_train_lite_infer) >"$W/n0.out" 2>&1 & p0=$!
LAUNCHERS+=($p0 $p1)
wait_rc rc0 "$p0"; wait_rc rc1 "$p1"
echo "fleet run across namespaces: $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "tipc run exit codes $rc0 $rc1"
grep -q "node 1/2 ($NET.2)" n1.out || fail "node 1 did not find itself: $(head -n 5 n1.out)"
MODEL=$FLEET_MODEL
for n in 0 1; do grep -q '^4 passed, 0 failed' n$n.out || fail "node $n: $(tail -n 5 n$n.out)"; done
cmp -s "n0/$MODEL/inference.tipc" "n1/$MODEL/inference.tipc" || fail "the nodes' trained models differ"
echo ok
