#!/usr/bin/env bash
# test_infer_litedata.sh: `tipc infer` of a tiny exported model on real JPEGs from the original's lite
# data (../shared/data/lite_data.tar): the Step6 output lines, the AutoLog block, a directory in
# batches. Skips (exit 77) when the data is absent.
set -u
. "$ROOT/tests/e2e/lib.sh"
lite_data_tar   # sets TAR, or skips (exit 77)
T=${TIPC:?}
W=$TMPDIR/w
mkdir -p "$W"
"$T" train --data-path "$W/none" -o Arch.class_num=5 -o Arch.width_mult=0.25 -o Arch.image_size=64 \
    -o DataLoader.synthetic_size=10 --batch-size 5 --epochs 1 --threads 1 --output-dir "$W/out" >/dev/null 2>&1 || fail train
"$T" export --model=mobilenet_v3_small --pretrained="$W/out/latest.ckpt" --save-inference-dir="$W/inf" >/dev/null 2>&1 || fail export
# real JPEGs
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
