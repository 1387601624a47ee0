#!/usr/bin/env bash
# test_export_infer.sh: train a tiny model on synthetic data, `tipc export` it (inference.tipc +
# inference.onnx), then `tipc infer` on raw tensors and on real JPEGs from the lite data
# (that part skipped with a note when ../shared/data/lite_data.tar is absent); bad inputs.
set -u
T=${TIPC:?}
W=$TMPDIR/w
mkdir -p "$W"
fail() { echo "FAIL: $*"; exit 1; }
"$T" train --data-path "$W/none" -o Arch.class_num=5 -o Arch.width_mult=0.25 -o Arch.image_size=64 \
    -o DataLoader.synthetic_size=10 --batch-size 5 --epochs 1 --threads 1 --output-dir "$W/out" >/dev/null 2>&1 || fail train
"$T" export --model=mobilenet_v3_small --pretrained="$W/out/latest.ckpt" --save-inference-dir="$W/inf" >"$W/x.log" 2>&1 || { cat "$W/x.log"; fail export; }
grep -q "inference model has been saved into $W/inf" "$W/x.log" || fail "export message"
[ -s "$W/inf/inference.tipc" ] && [ -s "$W/inf/inference.onnx" ] || fail "export files"
# the inference file has no optimizer state: smaller than the checkpoint (params + momentum + stats)
[ "$(stat -c %s "$W/inf/inference.tipc")" -lt "$(stat -c %s "$W/out/latest.ckpt")" ] || fail "inference file too big"

# raw tensors: 2 x 3 x 64 x 64 floats in, probs + logits out
head -c $((2 * 3 * 64 * 64 * 4)) /dev/urandom | tr '\000-\377' '\100-\177\100-\177\100-\177\100-\177' >"$W/in.raw" 2>/dev/null \
  || head -c $((2 * 3 * 64 * 64 * 4)) /dev/zero >"$W/in.raw"
"$T" infer --model-dir "$W/inf" --input-raw "$W/in.raw" --output-raw "$W/out.raw" || fail "raw infer"
[ "$(stat -c %s "$W/out.raw")" -eq $((2 * 5 * 2 * 4)) ] || fail "raw output size"

# bad inputs
"$T" infer --model-dir "$W/inf" --img-path "$W/nope.jpg" >"$W/e1.log" 2>&1; rc=$?
[ $rc -eq 3 ] && grep -q "image '$W/nope.jpg' not found" "$W/e1.log" || fail "missing image: exit $rc"
echo "not a jpeg" >"$W/bad.jpg"
"$T" infer --model-dir "$W/inf" --img-path "$W/bad.jpg" >"$W/e2.log" 2>&1; rc=$?
[ $rc -eq 3 ] && grep -q "bad.jpg" "$W/e2.log" || fail "corrupt image: exit $rc"
"$T" infer --model-dir "$W/none" --img-path "$W/bad.jpg" >/dev/null 2>&1; [ $? -eq 5 ] || fail "missing model dir"
"$T" infer --model-dir "$W/inf" --use-gpu True >/dev/null 2>"$W/gpu.err"; rc=$? # 0 where there is a GPU
[ $rc -eq 0 ] || { [ $rc -eq 7 ] && grep -q "CUDA" "$W/gpu.err"; } || fail "gpu: exit $rc: $(cat "$W/gpu.err")"
"$T" export --pretrained "$W/bad.jpg" --save-inference-dir "$W/inf2" >/dev/null 2>&1; [ $? -eq 5 ] || fail "export of junk"
"$T" export --save-inference-dir "$W/inf2" >/dev/null 2>&1; [ $? -eq 2 ] || fail "export without --pretrained"

# real JPEGs
TAR=""
for d in "$ROOT/../shared" /work/shared; do [ -f "$d/data/lite_data.tar" ] && TAR="$d/data/lite_data.tar" && break; done
if [ -z "$TAR" ]; then echo "note: lite_data.tar not found next to the repository; JPEG inference not checked"; echo ok; exit 0; fi
mkdir -p "$W/img"
tar -xf "$TAR" -C "$W/img" --wildcards '*/val/*' 2>/dev/null || fail "extract"
IMG=$(find "$W/img" -name '*.JPEG' | sort | head -1)
DIRI=$(dirname "$IMG")
"$T" infer --model-dir="$W/inf" --use-gpu=False --batch-size=1 --img-path="$IMG" --benchmark=True --cpu-threads 1 >"$W/i.log" 2>&1 || { cat "$W/i.log"; fail infer; }
grep -Eq "^image_name: $IMG, class_id: [0-4], prob: [0-9.e-]+$" "$W/i.log" || { cat "$W/i.log"; fail "image_name line"; }
grep -Eq "^top-5: [0-4] \(" "$W/i.log" || fail "top-k line"
grep -Eq "root INFO:  preprocess_time\(ms\): [0-9.]+, inference_time\(ms\): [0-9.]+, postprocess_time\(ms\): [0-9.]+$" "$W/i.log" || fail "autolog"
grep -q "root INFO:  batch_size: 1" "$W/i.log" || fail "autolog batch"
# a directory in batches of 2: one line per image
"$T" infer --model-dir="$W/inf" --batch-size=2 --img-path="$DIRI" >"$W/d.log" 2>&1 || fail "dir infer"
[ "$(grep -c '^image_name:' "$W/d.log")" -eq "$(ls "$DIRI"/*.JPEG | wc -l)" ] || fail "one line per image"
echo ok
