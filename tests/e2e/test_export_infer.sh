#!/usr/bin/env bash
# test_export_infer.sh: train a tiny model on synthetic data, `tipc export` it (inference.tipc +
# inference.onnx), then `tipc infer` on raw tensors; bad inputs. Real JPEGs: test_infer_litedata.sh.
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

# raw tensors: 2 x 3 x 64 x 64 floats in (every byte in 0x3c..0x3f: floats of about 0.01 to 2, the
# range of a normalised image; outputs that are not finite are refused), probs + logits out
head -c $((2 * 3 * 64 * 64 * 4)) /dev/urandom | tr '\000-\377' '\074-\077\074-\077\074-\077\074-\077' >"$W/in.raw" 2>/dev/null \
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

echo ok
