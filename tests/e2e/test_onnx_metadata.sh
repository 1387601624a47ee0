#!/usr/bin/env bash
# test_onnx_metadata.sh: the exported ONNX model says how to feed it (metadata_props: mean, std,
# scale, resize, crop, layout, colour, classes, label file) as ONNX Runtime reads them, and
# label_list.txt (one `id name` line per class) sits beside it. Skips without onnxruntime.
set -u
T=${TIPC_REL:?}
PY=${PYTHON:-python3}
W=$TMPDIR/w
mkdir -p "$W"
if ! "$PY" -c 'import onnxruntime' 2>/dev/null; then echo "SKIP: onnxruntime not installed for $PY (pip install onnxruntime)"; exit 77; fi
"$T" train --data-path "$W/none" -o Arch.class_num=7 -o Arch.width_mult=0.25 -o Arch.image_size=96 \
    -o DataLoader.synthetic_size=7 --batch-size 7 --epochs 1 --output-dir "$W/out" >/dev/null 2>&1 || { echo "FAIL: train"; exit 1; }
"$T" export --pretrained "$W/out/latest.ckpt" --save-inference-dir "$W/inf" >/dev/null || { echo "FAIL: export"; exit 1; }
"$PY" - "$W/inf" <<'PY' || { echo "FAIL: metadata"; exit 1; }
import os, sys, onnxruntime as ort
d = sys.argv[1]
s = ort.InferenceSession(os.path.join(d, "inference.onnx"), providers=["CPUExecutionProvider"])
m = s.get_modelmeta().custom_metadata_map
want = {"model": "mobilenet_v3_small", "preprocess.color": "RGB", "preprocess.layout": "NCHW",
        "preprocess.mean": "0.485,0.456,0.406", "preprocess.std": "0.229,0.224,0.225",
        "preprocess.resize_short": "110", "preprocess.center_crop": "96", "num_classes": "7",
        "labels": "label_list.txt"}
for k, v in want.items():
    assert m.get(k) == v, (k, m.get(k), v)
assert abs(float(m["preprocess.scale"]) * 255 - 1) < 1e-12
# the graph's input agrees with the metadata: NCHW, crop x crop
shape = s.get_inputs()[0].shape
assert shape[1:] == [3, 96, 96], shape
labels = open(os.path.join(d, m["labels"])).read().splitlines()
assert labels == [f"{k} class_{k}" for k in range(7)], labels
PY
echo ok
