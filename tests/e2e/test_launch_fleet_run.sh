#!/usr/bin/env bash
# The fleet chain end to end: two `tipc run configs/mobilenet_v3_small/train_fleet_infer.txt
# lite_train_lite_infer --node_ip=...` on loopback (one working folder per node, as on two machines),
# each preparing the offline lite data, training 5 epochs data-parallel on 2 nodes x 2 ranks through
# `tipc launch`, then eval, export and infer: every stage passes on both nodes and the two nodes'
# exported models are identical (the failure case: test_launch_fleet_kill.sh).
. "$(dirname "$0")/lib_launch.sh"
T=${TIPC_REL:-$TIPC}
export TIPC_JOB_TOKEN=fleet TIPC_JOB_ID=$JOB
CFG=configs/mobilenet_v3_small/train_fleet_infer.txt
[ -f "$ROOT/$CFG" ] || { echo "SKIP $CFG not in this tree"; exit 77; }
node_dir() { rm -rf "$W/$1"; mkdir -p "$W/$1"; cp -r "$ROOT/configs" "$ROOT/images" "$W/$1/"; }
run_bg() {   # run_bg NAME NODE_IP [MASTER_PORT]: `tipc run` in $W/NAME
    (cd "$W/$1" && TIPC_MASTER=127.0.0.1:$3 exec "$T" run $CFG lite_train_lite_infer --node_ip "$2") >"$W/$1.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${1}_pid=$!"
}
RES=logs/mobilenet_v3_small/lite_train_lite_infer
MODEL=$RES/fleet_train_gpus_0,1_autocast_False_nodes_2.log

node_dir a0; node_dir a1
port=$(free_port)
t0=$(now)
run_bg a1 127.0.0.2 "$port"
run_bg a0 127.0.0.1 "$port"
wait_rc rc0 "$a0_pid"; wait_rc rc1 "$a1_pid"
echo "fleet run: $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "tipc run exit codes $rc0 $rc1"
for n in a0 a1; do
    grep -q '^4 passed, 0 failed' $n.out || fail "$n: $(tail -n 5 $n.out)"
    grep -q 'data parallel: 4 ranks (gloo)' $n.out || [ $n = a1 ] || fail "$n: not data parallel"
    [ -s "$W/$n/$MODEL/inference.tipc" ] || fail "$n exported no model"
done
cmp -s "$W/a0/$MODEL/inference.tipc" "$W/a1/$MODEL/inference.tipc" || fail "the nodes' trained models differ"
echo ok
