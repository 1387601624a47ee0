#!/usr/bin/env bash
# test_train.sh: `tipc train` end to end on the built-in synthetic data with a tiny model:
# checkpoints, determinism, resume == uninterrupted, --test-only, and the bad-input paths
# (corrupt/truncated/foreign checkpoint, NaN loss, unknown recipe key) with their exit codes,
# never destroying the previous checkpoint.
set -u
. "$ROOT/tests/e2e/lib.sh"
T=${TIPC:?}
W=$TMPDIR/w
mkdir -p "$W"
TINY=(--data-path "$W/none" -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32
      -o DataLoader.synthetic_size=16 --batch-size 4 --threads 1 --print-freq 2 --seed 7)

"$T" train "${TINY[@]}" --epochs 2 --output-dir "$W/a" >"$W/a.log" 2>&1 || { cat "$W/a.log"; fail "train exit $?"; }
for f in epoch_1.ckpt epoch_2.ckpt latest.ckpt best.ckpt; do [ -s "$W/a/$f" ] || fail "missing $f"; done
grep -q '^\[Epoch 1, iter: 3\] top1: .*avg_ips: .* images/sec\.$' "$W/a.log" || fail "no Step6-style log line"
grep -q '^ \* Acc@1 [0-9.]* Acc@5 [0-9.]*$' "$W/a.log" || fail "no eval line"
ls "$W/a" | grep -q tmp && fail "temp file left behind"

# same seed, same result, bit for bit
"$T" train "${TINY[@]}" --epochs 2 --output-dir "$W/b" >/dev/null 2>&1 || fail "second run"
ckpt_same "$W/a/latest.ckpt" "$W/b/latest.ckpt" || fail "not deterministic for a seed"

# 1 epoch + resume for the 2nd == 2 epochs straight (constant LR: cosine depends on --epochs)
C=(-o Optimizer.lr.name=Constant)
"$T" train "${TINY[@]}" "${C[@]}" --epochs 2 --output-dir "$W/d" >/dev/null 2>&1 || fail "2-epoch constant run"
"$T" train "${TINY[@]}" "${C[@]}" --epochs 1 --output-dir "$W/c" >/dev/null 2>&1 || fail "1-epoch run"
"$T" train "${TINY[@]}" "${C[@]}" --epochs 2 --output-dir "$W/c" --resume "$W/c/latest.ckpt" >"$W/c.log" 2>&1 || { cat "$W/c.log"; fail "resume"; }
grep -q "resumed from" "$W/c.log" || fail "resume not reported"
ckpt_same "$W/d/latest.ckpt" "$W/c/latest.ckpt" || fail "resumed run differs from the uninterrupted one"

# the same through the JPEG loader (PaddleClas lists): the resumed run's epoch 2 reads epoch 2's
# shuffle, not epoch 1's again
"$T" prepare --synthetic "$W/jpg" --classes 4 --train-per-class 4 --val-per-class 2 >/dev/null || fail "synthetic jpegs"
J=(--data-path "$W/jpg" -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32 --batch-size 4
   --threads 1 --seed 7 -o Global.eval_during_train=false "${C[@]}")
"$T" train "${J[@]}" --epochs 2 --output-dir "$W/jd" >/dev/null 2>&1 || fail "2-epoch loader run"
"$T" train "${J[@]}" --epochs 1 --output-dir "$W/jc" >/dev/null 2>&1 || fail "1-epoch loader run"
"$T" train "${J[@]}" --epochs 2 --output-dir "$W/jc" --resume "$W/jc/latest.ckpt" >"$W/jc.log" 2>&1 || { cat "$W/jc.log"; fail "loader resume"; }
ckpt_same "$W/jd/latest.ckpt" "$W/jc/latest.ckpt" || fail "resumed loader run differs from the uninterrupted one"
# mid-epoch through the loader: a checkpoint every 3 steps (4 steps per epoch), resumed from the one
# taken 2 steps into epoch 2 == straight through (the loader starts at that step of that shuffle)
"$T" train "${J[@]}" --epochs 2 --save-steps 3 --output-dir "$W/jm" >"$W/jm.log" 2>&1 || { cat "$W/jm.log"; fail "step-checkpoint run"; }
ckpt_same "$W/jd/latest.ckpt" "$W/jm/latest.ckpt" || fail "checkpointing every 3 steps changed the training"
"$T" train "${J[@]}" --epochs 2 --output-dir "$W/jn" --resume "$W/jm/step_6.ckpt" >"$W/jn.log" 2>&1 || { cat "$W/jn.log"; fail "mid-epoch loader resume"; }
grep -q "2 of 4 steps of epoch 2 done" "$W/jn.log" || fail "mid-epoch position not reported: $(cat "$W/jn.log")"
ckpt_same "$W/jd/latest.ckpt" "$W/jn/latest.ckpt" || fail "loader run resumed mid-epoch differs from the uninterrupted one"

# evaluation only
"$T" train "${TINY[@]}" --test-only --pretrained="$W/a/latest.ckpt" >"$W/e.log" 2>&1 || fail "test-only"
grep -q '^ \* Acc@1' "$W/e.log" || fail "test-only printed no accuracy"

# truncated checkpoint: exit 5, message names the file, nothing overwritten
cp "$W/a/latest.ckpt" "$W/keep.ckpt"
head -c 100000 "$W/a/epoch_1.ckpt" >"$W/trunc.ckpt"
"$T" train "${TINY[@]}" --epochs 3 --output-dir "$W/a" --resume "$W/trunc.ckpt" >"$W/t.log" 2>&1
rc=$?; [ $rc -eq 5 ] || fail "truncated checkpoint: exit $rc, want 5"
grep -q "trunc.ckpt' is corrupt or truncated" "$W/t.log" || { cat "$W/t.log"; fail "message"; }
cmp -s "$W/a/latest.ckpt" "$W/keep.ckpt" || fail "latest.ckpt changed"

# one flipped byte in the weights: checksum
cp "$W/a/epoch_1.ckpt" "$W/flip.ckpt"
printf '\x55' | dd of="$W/flip.ckpt" bs=1 seek=5000 conv=notrunc 2>/dev/null
"$T" train "${TINY[@]}" --test-only --pretrained "$W/flip.ckpt" >"$W/f.log" 2>&1
rc=$?; [ $rc -eq 5 ] || fail "corrupt checkpoint: exit $rc"
grep -q "checksum" "$W/f.log" || fail "corrupt message"

# a checkpoint of another model (5 classes vs 4)
"$T" train "${TINY[@]}" -o Arch.class_num=5 --test-only --pretrained "$W/a/latest.ckpt" >"$W/o.log" 2>&1
rc=$?; [ $rc -eq 5 ] || fail "foreign checkpoint: exit $rc"
grep -q "is of another model" "$W/o.log" || { cat "$W/o.log"; fail "foreign message"; }

# not a checkpoint at all
echo "hello" >"$W/junk.ckpt"
"$T" train "${TINY[@]}" --test-only --pretrained "$W/junk.ckpt" >"$W/j.log" 2>&1
[ $? -eq 5 ] || fail "junk checkpoint"

# NaN: huge learning rate on top of a good epoch; exit 6, step named, checkpoint intact
"$T" train "${TINY[@]}" --epochs 3 --lr 1e30 --output-dir "$W/a" --resume "$W/a/latest.ckpt" >"$W/n.log" 2>&1
rc=$?; [ $rc -eq 6 ] || { cat "$W/n.log"; fail "NaN: exit $rc, want 6"; }
grep -Eq "loss is (NaN|inf) at epoch 2, step [0-9]+" "$W/n.log" || fail "NaN message"
cmp -s "$W/a/latest.ckpt" "$W/keep.ckpt" || fail "latest.ckpt changed by the failed run"

# recipe errors: file:line, exit 2
printf 'Global:\n  epochs: 2\n  epohcs: 3\n' >"$W/bad.yaml"
"$T" train -c "$W/bad.yaml" >"$W/y.log" 2>&1
rc=$?; [ $rc -eq 2 ] || fail "unknown key: exit $rc"
grep -q "bad.yaml:3: unknown key 'Global.epohcs'" "$W/y.log" || fail "unknown key message"
"$T" train -c "$ROOT/configs/mobilenet_v3_small/mobilenet_v3_small.yaml" -o Optimizer.lr.name=Step --epochs 0 >"$W/y2.log" 2>&1
[ $? -eq 2 ] || fail "bad schedule accepted"
"$T" train --batch-size x >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad flag value"
# --device gpu: exit 7 naming CUDA without a GPU (or a CUDA build); where there is one it trains
"$T" train --device gpu "${TINY[@]}" >/dev/null 2>"$W/gpu.err"; rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 7 ] && grep -q "CUDA" "$W/gpu.err"; } || fail "gpu: exit $rc: $(cat "$W/gpu.err")"

echo ok
