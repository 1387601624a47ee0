#!/usr/bin/env bash
# tipc launch --max_restarts on loopback: 2 nodes x 1 rank train a tiny model on synthetic data with a
# checkpoint every 2 steps (3 epochs of 8 steps).
#  1. rank 1 (node 1) is SIGKILLed once after its step-2 checkpoint, --max_restarts 1: both launchers
#     exit 0, both name the restart and its cause, the ranks resume from the newest complete
#     checkpoint, and the final checkpoint equals, byte for byte, both an uninterrupted run and a run
#     resumed by hand from the checkpoint the restart resumed from.
#  2. the same kill with --max_restarts 0: non-zero (137 on node 1, 4 on node 0), as without the flag.
#  3. two kills (one in each round) with --max_restarts 1: non-zero.
#  4. SIGINT to node 1's launcher with --max_restarts 1: the job ends (130 there), no restart.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=k TIPC_COMM_TIMEOUT=60
TRAIN=(train --data-path "$W/none" -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32
       -o DataLoader.synthetic_size=64 -o Arch.dropout=0.2 --batch-size 4 --threads 1 --print-freq 4 --seed 7
       --epochs 3 --save-steps 2)

# pair TAG EXTRA...: one launcher per node (ranks 0 and 1), output $W/TAG{0,1}.out, checkpoints TAG/n{0,1}
pair() {
    local tag=$1 port; shift
    port=$(free_port)
    for n in 0 1; do
        launch_bg "$tag$n" --ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --node_ip=127.0.0.$((n + 1)) --gpus=0 \
            --log_dir="$tag/log$n" "$@" "${TRAIN[@]}" --output-dir "$tag/n$n"
    done
}
# kill_rank1 TAG ROUND: SIGKILL node 1's rank (a child of its launcher; cheap to find under load) once
# node 1 has a step checkpoint (round 0), or once it runs again after the restart (round 1)
kill_rank1() {
    local l i v="" lp; eval "lp=\$${1}1_pid"
    [ "$2" = 0 ] || wait_line "${1}1.out" "restart $2 of" 60
    for i in $(seq 600); do
        v=$(pgrep -P "$lp" | grep -vx "${OLD:-x}" | head -1)
        [ -n "$v" ] && break; sleep 0.1
    done
    [ -n "$v" ] || fail "$1: no rank on node 1 in round $2"
    if [ "$2" = 0 ]; then
        for i in $(seq 1200); do [ -e "$1/n1/step_2.ckpt" ] && break; sleep 0.05; done
        [ -e "$1/n1/step_2.ckpt" ] || fail "$1: node 1 wrote no step-2 checkpoint in 60 s"
    fi
    kill -9 "$v" || fail "$1: rank 1 of round $2 had ended before the kill"
    OLD=$v
}

# the uninterrupted run
pair s
wait_rc rc0 "$s0_pid"; wait_rc rc1 "$s1_pid"
[ "$rc0$rc1" = 00 ] || fail "uninterrupted run: exit codes $rc0 $rc1"
# the nodes' files differ in their writer's RNG state only
python3 "$ROOT/tests/e2e/ckpt_diff.py" s/n0/latest.ckpt s/n1/latest.ckpt params 0 || fail "the two nodes' parameters differ"

echo "# 1. one kill, --max_restarts 1"
TIPC_METRICS=$W/r.jsonl pair r --max_restarts 1
kill_rank1 r 0
wait_rc rc0 "$r0_pid"; wait_rc rc1 "$r1_pid"
[ "$rc0$rc1" = 00 ] || fail "restarted run: exit codes $rc0 $rc1, want 0 0"
for n in 0 1; do
    grep -q "launch: node $n: restart 1 of 1 (--max_restarts): rank 1 (node 1, 127.0.0.2, local rank 0, pid [0-9]*) was killed by signal 9" "r$n.out" ||
        fail "node $n does not name the restart and its cause"
done
grep -q "==== tipc launch: restart 1 of 1: rank 1 (node 1" r/log1/workerlog.1 || fail "the rank's log does not mark the restart"
[ "$(grep '"event":"restart"' r.jsonl | grep -c '"cause":"rank 1 (node 1, 127.0.0.2, local rank 0, pid [0-9]*) was killed by signal 9')" = 2 ] ||
    fail "not one restart record per node in the metrics: $(grep restart r.jsonl)"
[ "$(grep '"event":"train_start"' r.jsonl | grep -c '"restart":1,"start_step":[1-9]')" = 2 ] ||
    fail "the resumed ranks' train_start records do not say restart 1 from a checkpoint"
line=$(grep -o "resumed from '[^']*' (epoch [0-9]*, step [0-9]*" r/log0/workerlog.0) || fail "no resume in rank 0's log"
step=${line##* }
echo "resumed at global step $step: $line"
[ "$step" -ge 2 ] || fail "resumed at step $step, before the step-2 checkpoint"
python3 "$ROOT/tests/e2e/ckpt_diff.py" s/n0/latest.ckpt r/n0/latest.ckpt same || fail "the restarted run's final checkpoint differs from the uninterrupted run's"
python3 "$ROOT/tests/e2e/ckpt_diff.py" s/n1/latest.ckpt r/n1/latest.ckpt same || fail "node 1's final checkpoint differs from the uninterrupted run's"
# the checkpoint that restart resumed from, resumed by hand (no kill)
src=r/n0/step_$step.ckpt
[ -e "$src" ] || src=$(ls r/n0/epoch_*.ckpt | while read -r f; do python3 - "$f" "$step" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
if struct.unpack_from("<q", b, 8 + 8 + 48)[0] == int(sys.argv[2]): print(sys.argv[1])
PY
done | head -1)
[ -n "$src" ] || fail "no checkpoint of step $step kept"
mkdir -p m && cp "$src" m/start.ckpt
port=$(free_port)
for n in 0 1; do
    launch_bg "m$n" --ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --node_ip=127.0.0.$((n + 1)) --gpus=0 \
        --log_dir="m/log$n" "${TRAIN[@]}" --output-dir "m/n$n" --resume m/start.ckpt
done
wait_rc rc0 "$m0_pid"; wait_rc rc1 "$m1_pid"
[ "$rc0$rc1" = 00 ] || fail "manual resume: exit codes $rc0 $rc1"
python3 "$ROOT/tests/e2e/ckpt_diff.py" m/n0/latest.ckpt r/n0/latest.ckpt same || fail "the restarted run differs from a run resumed by hand from $src"

echo "# 2. one kill, --max_restarts 0"
pair z --max_restarts 0
kill_rank1 z 0
wait_rc rc0 "$z0_pid"; wait_rc rc1 "$z1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 137 ] || fail "--max_restarts 0: exit codes $rc0 $rc1, want 4 and 137"
grep -q "restart [0-9]* of" z0.out z1.out && fail "--max_restarts 0 restarted"

echo "# 3. two kills, --max_restarts 1"
pair t --max_restarts 1
kill_rank1 t 0
kill_rank1 t 1
wait_rc rc0 "$t0_pid"; wait_rc rc1 "$t1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 137 ] || fail "two failures, --max_restarts 1: exit codes $rc0 $rc1, want 4 and 137"
grep -q "restart 1 of 1" t1.out || fail "the first failure was not restarted"
grep -q "restart 2" t0.out t1.out && fail "restarted a second time"

echo "# 4. SIGINT to a launcher, --max_restarts 1: the job ends, no restart"
pair i --max_restarts 1
for _ in $(seq 600); do [ -e i/n1/step_2.ckpt ] && break; sleep 0.05; done
kill -INT "$i1_pid"
wait_rc rc0 "$i0_pid"; wait_rc rc1 "$i1_pid"
[ "$rc1" = 130 ] && [ "$rc0" != 0 ] || fail "SIGINT with restarts left: exit codes $rc0 $rc1, want non-zero and 130"
grep -q "restart [0-9]* of" i0.out i1.out && fail "restarted after an interrupt"
wait_gone "$JOB" 10 || fail "left behind: $(job_procs "$JOB")"
echo ok
