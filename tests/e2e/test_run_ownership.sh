#!/usr/bin/env bash
# test_run_ownership.sh: a run's checkpoints are its own (engine/model/train_ckpt.h, resume.h; the
# run id in every checkpoint, version 4). Tiny model, synthetic data, real `tipc launch`.
#  1. run A trains into OUT; run B (another learning rate) starts in the same OUT under
#     `tipc launch --max_restarts 1`: A's checkpoints go to OUT/previous_run/ untouched, B's rank
#     is killed after B's first step checkpoint and a copy of A's final checkpoint is planted as
#     OUT/epoch_9.ckpt; the restart passes over it ("another run's checkpoint"), resumes from B's
#     own newest, and B ends equal to a straight run of B, not to A;
#  2. fresh trainings in one folder: each moves the one before into previous_run/ (one generation
#     kept, a user's file there left alone);
#  3. the explicit ways still continue another run: --resume auto adopts its newest checkpoint, and
#     --resume of a version 2 (fp32) or 3 (bf16) file written the old way (binfile.py old) loads and
#     trains on exactly like the version 4 file it came from.
. "$ROOT/tests/e2e/lib.sh"
. "$(dirname "$0")/lib_launch.sh"   # after lib.sh: its fail() shows the launchers' output
export TIPC_COMM_TIMEOUT=60
# 64 px and 3 epochs of 16 steps: slow enough (about a second) to kill the rank between its first
# step checkpoint and its end
TRAIN=(train --data-path "$W/none" -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=64
       -o DataLoader.resize_size=73 -o DataLoader.synthetic_size=64 --batch-size 4 --threads 1 --print-freq 4
       --seed 7 --epochs 3 --save-steps 2)

echo "# 1. a restart in a reused folder"
run_expect 0 a.log "$TIPC" "${TRAIN[@]}" --lr 0.1 --output-dir out
cp out/latest.ckpt a-final.ckpt
run_expect 0 bs.log "$TIPC" "${TRAIN[@]}" --lr 0.05 --output-dir b-straight
launch_bg b --gpus=0 --max_restarts 1 --log_dir=blog "${TRAIN[@]}" --lr 0.05 --output-dir out
wait_line blog/workerlog.0 "moved [0-9]* checkpoints of an earlier run" 60
for i in $(seq 1200); do ls out/step_*.ckpt > /dev/null 2>&1 && break; sleep 0.05; done
ls out/step_*.ckpt > /dev/null 2>&1 || fail "run B wrote no step checkpoint in 60 s"
cp a-final.ckpt out/epoch_9.ckpt   # another run's file, newer than anything of B's
rank=""
for i in $(seq 100); do rank=$(pgrep -P "$b_pid" | head -1); [ -n "$rank" ] && break; sleep 0.1; done
[ -n "$rank" ] || fail "no rank under the launcher"
kill -9 "$rank" || fail "B's rank ended before the kill"
wait_rc rc "$b_pid"
[ "$rc" = 0 ] || fail "run B under --max_restarts 1: exit $rc"
grep -q "restart 1 of 1" b.out || fail "the launcher did not restart"
cmp -s a-final.ckpt out/previous_run/latest.ckpt || fail "A's final checkpoint is not in previous_run/ as it was"
grep -q "out/epoch_9.ckpt' is another run's checkpoint" blog/workerlog.0 || fail "the restart did not pass over A's file"
line=$(grep -o "resuming from the newest complete checkpoint '[^']*'" blog/workerlog.0) || fail "the restart did not resume"
echo "restart: $line"
case "$line" in *epoch_9*) fail "the restart resumed from another run's checkpoint";; esac
ckpt_same out/latest.ckpt b-straight/latest.ckpt || fail "B's final checkpoint differs from a straight run of B"
ckpt_same out/latest.ckpt a-final.ckpt && fail "B ended with A's model"

echo "# 2. fresh trainings in one folder"
run_expect 0 c1.log "$TIPC" "${TRAIN[@]}" --epochs 1 --output-dir f
mkdir -p f/previous_run && echo mine > f/previous_run/notes.txt
cp f/latest.ckpt c1.ckpt
run_expect 0 c2.log "$TIPC" "${TRAIN[@]}" --epochs 1 --output-dir f
log_has c2.log "checkpoints of an earlier run"
cp f/latest.ckpt c2.ckpt
cmp -s f/previous_run/latest.ckpt c1.ckpt || fail "previous_run/ does not hold the first run's checkpoint"
run_expect 0 c3.log "$TIPC" "${TRAIN[@]}" --epochs 1 --seed 8 --output-dir f
cmp -s f/previous_run/latest.ckpt c2.ckpt || fail "previous_run/ does not hold the second run's checkpoint"
[ "$(cat f/previous_run/notes.txt)" = mine ] || fail "a user's file in previous_run/ was touched"
ls f/previous_run | grep -q 'tmp' && fail "temps left in previous_run/"

echo "# 3. --resume auto, and --resume of version 2 and 3 files"
mkdir -p g && cp b-straight/epoch_1.ckpt g/epoch_1.ckpt
run_expect 0 auto.log "$TIPC" "${TRAIN[@]}" --lr 0.05 --resume auto --output-dir g
log_has auto.log "resuming from the newest complete checkpoint 'g/epoch_1.ckpt'"
ckpt_same g/latest.ckpt b-straight/latest.ckpt || fail "--resume auto of another run's checkpoint did not continue it"
python3 "$ROOT/tests/e2e/binfile.py" old b-straight/epoch_1.ckpt v2.ckpt || fail "binfile.py old"
run_expect 0 v2.log "$TIPC" "${TRAIN[@]}" --lr 0.05 --resume v2.ckpt --output-dir from-v2
ckpt_same from-v2/latest.ckpt b-straight/latest.ckpt || fail "resuming the version 2 file differs"
run_expect 0 bf.log "$TIPC" "${TRAIN[@]}" --precision bf16 --output-dir bf
python3 "$ROOT/tests/e2e/binfile.py" old bf/epoch_1.ckpt v3.ckpt || fail "binfile.py old (bf16)"
[ "$(od -An -t u4 -j 8 -N 4 v3.ckpt | tr -d ' ')" = 3 ] || fail "binfile.py old did not write version 3"
run_expect 0 v3.log "$TIPC" "${TRAIN[@]}" --precision bf16 --resume v3.ckpt --output-dir from-v3
log_has v3.log "loss scaler restored from 'v3.ckpt'"
ckpt_same from-v3/latest.ckpt bf/latest.ckpt || fail "resuming the version 3 file differs"
echo "ok"
