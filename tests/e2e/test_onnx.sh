#!/usr/bin/env bash
# test_onnx.sh: our exported ONNX graph in ONNX Runtime gives our outputs (1e-4). Skips when
# onnxruntime is not installed for ${PYTHON:-python3}.
set -u
T=${TIPC_REL:?}
PY=${PYTHON:-python3}
W=$TMPDIR/w
mkdir -p "$W"
if ! "$PY" -c 'import onnxruntime, numpy' 2>/dev/null; then echo "SKIP: onnxruntime not installed for $PY (pip install onnxruntime numpy)"; exit 77; fi
"$T" train --data-path "$W/none" -o Arch.class_num=7 -o Arch.width_mult=0.5 -o Arch.image_size=96 \
    -o DataLoader.synthetic_size=14 --batch-size 7 --epochs 1 --output-dir "$W/out" >/dev/null 2>&1 || { echo "FAIL: train"; exit 1; }
"$T" export --pretrained "$W/out/latest.ckpt" --save-inference-dir "$W/inf" >/dev/null || { echo "FAIL: export"; exit 1; }
"$PY" "$ROOT/scripts/check_onnx.py" "$T" "$W/inf" 3
