#!/usr/bin/env bash
# The fleet chain with a failure: two `tipc run configs/mobilenet_v3_small/train_fleet_infer.txt
# lite_train_lite_infer --node_ip=...` on loopback (one working folder per node), rank 3 killed
# mid-epoch: every rank on both nodes is gone within 10 s, both runs exit non-zero and both results
# logs say `Run failed` for the training command, naming rank 3 on node 1.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=fleet TIPC_JOB_ID=$JOB
[ -f "$ROOT/$FLEET_CFG" ] || { echo "SKIP $FLEET_CFG not in this tree"; exit 77; }
RES=$FLEET_RES

# rank 3 killed mid-epoch
fleet_dir k0; fleet_dir k1
port=$(free_port)
fleet_run k1 127.0.0.2 "$port"
fleet_run k0 127.0.0.1 "$port"
wait_line k0.out 'Epoch 0, iter: ' 90
victim=$(rank_pid "$JOB" 3)
[ -n "$victim" ] || fail "no rank 3"
t0=$(now)
kill -9 "$victim"
while [ -n "$(rank_procs "$JOB")" ] && [ "$(elapsed "$t0" | cut -d. -f1)" -lt 10 ]; do sleep 0.2; done
[ -z "$(rank_procs "$JOB")" ] || fail "ranks alive 10 s after the kill: $(rank_procs "$JOB")"
echo "kill -9 of rank 3: every rank gone in $(elapsed "$t0") s"
wait_rc rc0 "$k0_pid"; wait_rc rc1 "$k1_pid"
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] || fail "tipc run exit codes $rc0 $rc1, want both non-zero"
for n in k0 k1; do
    grep -q '^Run failed with command - mobilenet_v3_small - tipc launch ' "$W/$n/$RES/results_python.log" 2>/dev/null ||
        grep -q '^Run failed with command - mobilenet_v3_small - tipc launch ' $n.out || fail "$n: no 'Run failed' for the training command"
done
grep -q 'rank 3 (node 1, 127.0.0.2' k0.out || fail "node 0 does not name rank 3 on node 1"
echo ok
