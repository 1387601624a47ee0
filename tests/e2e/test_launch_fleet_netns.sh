#!/usr/bin/env bash
# The fleet chain across two network namespaces joined by a veth pair the test creates: each node is
# `tipc run train_fleet_infer.txt lite_train_lite_infer` in its own namespace and folder, with the
# config's gpu_list pointing at the veth addresses; no --node_ip: each node finds itself by interface
# address. Every stage passes on both nodes and the two trained models are identical.
. "$(dirname "$0")/lib_launch.sh"
T=${TIPC_REL:-$TIPC}
CFG=configs/mobilenet_v3_small/train_fleet_infer.txt
[ -f "$ROOT/$CFG" ] || { echo "SKIP $CFG not in this tree"; exit 77; }
command -v ip >/dev/null || { echo "SKIP no 'ip' command (iproute2)"; exit 77; }
NS0=tipf$$a NS1=tipf$$b V0=tf$$a V1=tf$$b
NET=10.234.$(( $$ % 250 ))
netns_cleanup() { cleanup; ip netns del "$NS0" 2>/dev/null; ip netns del "$NS1" 2>/dev/null; }
trap netns_cleanup EXIT
if ! ip netns add "$NS0" 2>err; then echo "SKIP network namespaces not permitted here: $(head -c 200 err)"; exit 77; fi
ip netns add "$NS1" || fail "second namespace"
ip link add "$V0" type veth peer name "$V1" 2>err || { echo "SKIP veth not permitted here: $(head -c 200 err)"; exit 77; }
ip link set "$V0" netns "$NS0" && ip link set "$V1" netns "$NS1" || fail "moving veth ends"
ip -n "$NS0" addr add "$NET.1/24" dev "$V0" && ip -n "$NS1" addr add "$NET.2/24" dev "$V1" || fail "addresses"
for n in "$NS0" "$NS1"; do ip -n "$n" link set lo up; done
ip -n "$NS0" link set "$V0" up && ip -n "$NS1" link set "$V1" up || fail "link up"

export TIPC_JOB_TOKEN=fleetns TIPC_JOB_ID=$JOB
for n in 0 1; do
    mkdir -p "$W/n$n" && cp -r "$ROOT/configs" "$ROOT/images" "$W/n$n/" || fail "copy"
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
MODEL=logs/mobilenet_v3_small/lite_train_lite_infer/fleet_train_gpus_0,1_autocast_False_nodes_2.log
for n in 0 1; do grep -q '^4 passed, 0 failed' n$n.out || fail "node $n: $(tail -n 5 n$n.out)"; done
cmp -s "n0/$MODEL/inference.tipc" "n1/$MODEL/inference.tipc" || fail "the nodes' trained models differ"
echo ok
