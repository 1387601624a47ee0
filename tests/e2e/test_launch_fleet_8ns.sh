#!/usr/bin/env bash
# Eight nodes in eight network namespaces the test creates (a hub namespace holding a bridge, one
# veth link per node, 10.235.X.1..8): each node is `tipc run train_fleet_infer.txt
# lite_train_lite_infer` in its own namespace and folder, the config's gpu_list naming the eight
# addresses with one device each (8 ranks, one per node). Kept tiny: synthetic data (64 images per
# split), 64 px, 10 classes, 2 epochs. Every node passes every stage (train, eval, export, infer)
# and the eight exported models are byte-identical.
. "$(dirname "$0")/lib_launch.sh"
T=${TIPC_REL:-$TIPC}
CFG=$FLEET_CFG
[ -f "$ROOT/$CFG" ] || { echo "SKIP $CFG not in this tree"; exit 77; }
command -v ip >/dev/null || { echo "SKIP no 'ip' command (iproute2)"; exit 77; }
N=8
NET=10.235.$(( $$ % 250 ))
HUB=tip8$$h
NS=()
for i in $(seq 0 $((N - 1))); do NS+=("tip8$$n$i"); done
trap 'cleanup; for ns in "${NS[@]}" "$HUB"; do ip netns del "$ns" 2>/dev/null; done' EXIT
ip netns add "$HUB" 2>"$W/err" || { echo "SKIP network namespaces not permitted here: $(head -c 200 "$W/err")"; exit 77; }
ip -n "$HUB" link add br0 type bridge 2>"$W/err" || { echo "SKIP bridge not permitted here: $(head -c 200 "$W/err")"; exit 77; }
ip -n "$HUB" link set br0 up || fail "bridge up"
IPS=
for i in $(seq 0 $((N - 1))); do
    ip netns add "${NS[$i]}" || fail "namespace $i"
    ip -n "$HUB" link add "h$i" type veth peer name eth0 netns "${NS[$i]}" 2>"$W/err" \
        || { echo "SKIP veth not permitted here: $(head -c 200 "$W/err")"; exit 77; }
    ip -n "$HUB" link set "h$i" master br0 up && ip -n "${NS[$i]}" addr add "$NET.$((i + 1))/24" dev eth0 &&
        ip -n "${NS[$i]}" link set eth0 up && ip -n "${NS[$i]}" link set lo up || fail "link of node $i"
    IPS=${IPS:+$IPS,}$NET.$((i + 1))
done

export TIPC_JOB_TOKEN=fleet8ns TIPC_JOB_ID=$JOB
Y=configs/mobilenet_v3_small/mobilenet_v3_small.yaml
for i in $(seq 0 $((N - 1))); do
    fleet_dir n$i
    sed -i -e "s/^gpu_list:.*/gpu_list:$IPS;0/" -e 's/^--epochs:lite_train_lite_infer=5/--epochs:lite_train_lite_infer=2/' "$W/n$i/$CFG"
    sed -i -e 's/^  image_size: 224\b/  image_size: 64/' -e 's/^  resize_size: 256\b/  resize_size: 73/' \
        -e 's/^  class_num: 1000\b/  class_num: 10/' -e 's/^  num_workers: 2\b/  num_workers: 1/' "$W/n$i/$Y"
    grep -q '^  image_size: 64\b' "$W/n$i/$Y" && grep -q '^  class_num: 10$' "$W/n$i/$Y" || fail "the recipe's layout changed: $Y"
done
t0=$(now)
PIDS=()
for i in $(seq $((N - 1)) -1 0); do
    (cd "$W/n$i" && exec ip netns exec "${NS[$i]}" "$T" run $CFG lite_train_lite_infer) >"$W/n$i.out" 2>&1 &
    PIDS[$i]=$!
    LAUNCHERS+=($!)
done
for i in $(seq 0 $((N - 1))); do
    wait_rc rc "${PIDS[$i]}"
    [ "$rc" = 0 ] || fail "node $i: tipc run exit $rc"
done
echo "fleet run on $N nodes in $N namespaces: $(elapsed "$t0") s"
MODEL=$FLEET_RES/fleet_train_gpus_0_autocast_False_nodes_$N.log
for i in $(seq 0 $((N - 1))); do
    grep -q '^4 passed, 0 failed' n$i.out || fail "node $i: $(tail -n 5 n$i.out)"
    grep -q "node $i/$N ($NET.$((i + 1)))" n$i.out || fail "node $i did not find itself: $(grep -m1 'node ' n$i.out)"
    [ -s "n$i/$MODEL/inference.tipc" ] || fail "node $i: no exported model $MODEL/inference.tipc"
    cmp "n0/$MODEL/inference.tipc" "n$i/$MODEL/inference.tipc" || fail "node $i's exported model differs from node 0's"
done
grep -q 'data parallel: 8 ranks (gloo over [a-z ]*)' "n0/$MODEL/log/workerlog.0" n0.out || fail "rank 0 did not train with 8 ranks"
echo "the $N exported models are identical ($(stat -c %s "n0/$MODEL/inference.tipc") bytes)"
echo ok
