#!/usr/bin/env bash
# Restarts from `tipc run`: two `tipc run configs/mobilenet_v3_small/train_fleet_infer.txt
# lite_train_lite_infer --node_ip=...` on loopback (one working folder per node, its config trimmed
# to 3 epochs), node 0 with `--max-restarts 1`, node 1 with TIPC_MAX_RESTARTS=1 (the option's
# environment column). Rank 3 (node 1) is SIGKILLed once, after both nodes saved their epoch-1
# checkpoint (the fleet recipe saves at epoch ends only): the job re-forms, resumes from an epoch
# checkpoint, and every stage passes on both nodes (the training command is `tipc launch
# --max_restarts=1 ...`, the log names the restart and its cause), and the two nodes export the same
# model. The same kill without the option: `Run failed` for the training, both runs non-zero.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=fleet TIPC_JOB_ID=$JOB
[ -f "$ROOT/$FLEET_CFG" ] || { echo "SKIP $FLEET_CFG not in this tree"; exit 77; }
RES=$FLEET_RES
MODEL=$FLEET_MODEL
unset TIPC_MAX_RESTARTS

# --max-restarts reaches only trains that `tipc launch` runs (the plan records them): a config whose
# every train has one device says so on stderr; the fleet config, whose train is launched, does not.
(cd "$ROOT" && "$TIPC" run configs/mobilenet_v3_small/train_infer.txt whole_infer --dry-run --max-restarts 2 \
    --output "$TMPDIR/dry") >/dev/null 2>"$TMPDIR/dry1.err" || fail "dry run failed: $(cat "$TMPDIR/dry1.err")"
grep -q 'has no effect here: no training stage of this run goes through `tipc launch`' "$TMPDIR/dry1.err" ||
    fail "--max-restarts without a launched train not named: $(cat "$TMPDIR/dry1.err")"
(cd "$ROOT" && "$TIPC" run $FLEET_CFG lite_train_lite_infer --dry-run --max-restarts 2 --output "$TMPDIR/dry") \
    >"$TMPDIR/dry2.out" 2>"$TMPDIR/dry2.err" || fail "dry run failed: $(cat "$TMPDIR/dry2.err")"
grep -q 'tipc launch --max_restarts=2 ' "$TMPDIR/dry2.out" || fail "the launched train lacks --max_restarts: $(cat "$TMPDIR/dry2.out")"
grep -q 'has no effect' "$TMPDIR/dry2.err" && fail "a launched train said to ignore --max-restarts: $(cat "$TMPDIR/dry2.err")"

# fleet_dir2 NAME: a node's folder whose fleet config trains 3 epochs, not 5 (time)
fleet_dir2() {
    fleet_dir "$1"
    sed -i 's/^--epochs:lite_train_lite_infer=5|/--epochs:lite_train_lite_infer=3|/' "$W/$1/$FLEET_CFG"
    grep -q '^--epochs:lite_train_lite_infer=3|' "$W/$1/$FLEET_CFG" || fail "$1: cannot set the epochs"
}
# node NAME NODE_IP PORT [ARGS...]: `tipc run` in $W/NAME in the background, output $W/NAME.out
node() {
    local name=$1 ip=$2 port=$3; shift 3
    (cd "$W/$name" && TIPC_MASTER=127.0.0.1:$port exec "${TIPC_REL:-$TIPC}" run $FLEET_CFG lite_train_lite_infer \
        --node_ip "$ip" "$@") >"$W/$name.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${name}_pid=$!"
}
# kill_rank3 TAG: SIGKILL rank 3 once both nodes hold epoch_1.ckpt (and the job is still training)
kill_rank3() {
    local i v=""
    for i in $(seq 1200); do
        [ -e "$W/${1}0/$MODEL/epoch_1.ckpt" ] && [ -e "$W/${1}1/$MODEL/epoch_1.ckpt" ] && break
        sleep 0.05
    done
    [ -e "$W/${1}1/$MODEL/epoch_1.ckpt" ] || fail "$1: no epoch-1 checkpoint on both nodes in 60 s"
    v=$(rank_pid "$JOB" 3)
    [ -n "$v" ] || fail "$1: no rank 3 after epoch 1"
    kill -9 "$v" || fail "$1: rank 3 ended before the kill"
}

echo "# 1. --max-restarts 1 (node 0) / TIPC_MAX_RESTARTS=1 (node 1): one kill, every stage passes"
fleet_dir2 r0; fleet_dir2 r1
port=$(free_port)
t0=$(now)
TIPC_MAX_RESTARTS=1 node r1 127.0.0.2 "$port"
node r0 127.0.0.1 "$port" --max-restarts 1
kill_rank3 r
wait_rc rc0 "$r0_pid"; wait_rc rc1 "$r1_pid"
echo "run with a restart: $(elapsed "$t0") s"
[ "$rc0$rc1" = 00 ] || fail "tipc run exit codes $rc0 $rc1, want 0 0"
for n in r0 r1; do
    grep -q '^4 passed, 0 failed' $n.out || fail "$n: $(tail -n 5 $n.out)"
    grep -q "^Run successfully with command - mobilenet_v3_small - tipc launch --max_restarts=1 --ips=" \
        "$W/$n/$RES/results_python.log" || fail "$n: the training command is not tipc launch --max_restarts=1"
    grep -q "launch: node [01]: restart 1 of 1 (--max_restarts): rank 3 (node 1, 127.0.0.2, local rank 1, pid [0-9]*) was killed by signal 9" $n.out ||
        fail "$n does not name the restart and its cause"
    [ -s "$W/$n/$MODEL/inference.tipc" ] || fail "$n exported no model"
done
# the restart resumed from an epoch-end checkpoint (no step checkpoints: no ': K of N steps' part)
grep -q "restart 1 (tipc launch): resuming from the newest complete checkpoint" r0.out || fail "no automatic resume in node 0's log"
grep -Eq "resumed from '[^']*' \(epoch [1-9][0-9]*, step [0-9]+\)$" r0.out || fail "not resumed from an epoch checkpoint: $(grep resum r0.out)"
[ -z "$(ls "$W"/r0/$MODEL/step_*.ckpt 2>/dev/null)" ] || fail "step checkpoints without a save interval"
cmp -s "$W/r0/$MODEL/inference.tipc" "$W/r1/$MODEL/inference.tipc" || fail "the nodes' exported models differ"

echo "# 2. no restarts: the same kill fails the training on both nodes"
fleet_dir2 k0; fleet_dir2 k1
port=$(free_port)
node k1 127.0.0.2 "$port"
node k0 127.0.0.1 "$port"
kill_rank3 k
wait_rc rc0 "$k0_pid"; wait_rc rc1 "$k1_pid"
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] || fail "without restarts: tipc run exit codes $rc0 $rc1, want both non-zero"
for n in k0 k1; do
    grep -q '^Run failed with command - mobilenet_v3_small - tipc launch --ips=' "$W/$n/$RES/results_python.log" ||
        fail "$n: no 'Run failed' for the training command"
    grep -q "restart [0-9]* of" $n.out && fail "$n restarted without --max-restarts"
done
wait_gone "$JOB" 10 || fail "left behind: $(job_procs "$JOB")"
echo ok
