#!/usr/bin/env bash
# The fleet chain end to end: two `tipc run configs/mobilenet_v3_small/train_fleet_infer.txt
# lite_train_lite_infer --node_ip=...` on loopback (one working folder per node, as on two machines),
# each preparing the offline lite data, training 5 epochs data-parallel on 2 nodes x 2 ranks through
# `tipc launch`, then eval, export and infer: every stage passes on both nodes and the two nodes'
# exported models are identical (the failure case: test_launch_fleet_kill.sh).
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=fleet TIPC_JOB_ID=$JOB
[ -f "$ROOT/$FLEET_CFG" ] || { echo "SKIP $FLEET_CFG not in this tree"; exit 77; }
RES=$FLEET_RES
MODEL=$FLEET_MODEL

fleet_dir a0; fleet_dir a1
port=$(free_port)
t0=$(now)
fleet_run a1 127.0.0.2 "$port"
fleet_run a0 127.0.0.1 "$port"
wait_rc rc0 "$a0_pid"; wait_rc rc1 "$a1_pid"
echo "fleet run: $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "tipc run exit codes $rc0 $rc1"
for n in a0 a1; do
    grep -q '^4 passed, 0 failed' $n.out || fail "$n: $(tail -n 5 $n.out)"
    grep -q 'data parallel: 4 ranks (gloo over [a-z ]*)' $n.out || [ $n = a1 ] || fail "$n: not data parallel"
    [ -s "$W/$n/$MODEL/inference.tipc" ] || fail "$n exported no model"
done
cmp -s "$W/a0/$MODEL/inference.tipc" "$W/a1/$MODEL/inference.tipc" || fail "the nodes' trained models differ"
echo ok
