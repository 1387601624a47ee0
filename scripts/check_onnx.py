#!/usr/bin/env python3
"""check_onnx.py: run our exported DIR/inference.onnx in ONNX Runtime and compare it with
`tipc infer --input-raw` on the same random input (probs and logits, 1e-4).

usage: check_onnx.py TIPC MODEL_DIR [BATCH]
Exit 0 equal, 1 different, 77 onnxruntime/numpy not installed (pip install onnxruntime).
Optional timing: TIPC_ONNX_BENCH=N prints the median latency of N runs at batch 1.
"""
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    print(f"SKIP: {e.name} not installed (pip install onnxruntime)")
    sys.exit(77)


def main():
    tipc, mdir = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(os.environ.get("TIPC_ONNX_THREADS", "0"))
    sess = ort.InferenceSession(os.path.join(mdir, "inference.onnx"), so, providers=["CPUExecutionProvider"])
    shape = sess.get_inputs()[0].shape
    r = shape[2]
    x = np.random.default_rng(0).standard_normal((n, 3, r, r)).astype(np.float32)
    probs, logits = sess.run(["probs", "logits"], {"input": x})
    with tempfile.TemporaryDirectory() as d:
        xi, xo = os.path.join(d, "in.raw"), os.path.join(d, "out.raw")
        x.tofile(xi)
        subprocess.run([tipc, "infer", f"--model-dir={mdir}", f"--input-raw={xi}", f"--output-raw={xo}"], check=True)
        out = np.fromfile(xo, dtype=np.float32).reshape(2, n, -1)
    ok = True
    for name, ours, theirs in (("probs", out[0], probs), ("logits", out[1], logits)):
        err = np.abs(ours - theirs).max()
        rel = err / max(np.abs(theirs).max(), 1e-12)
        good = np.allclose(ours, theirs, rtol=1e-4, atol=1e-4 * max(np.abs(theirs).max(), 1e-6))
        print(f"{name}: shape {ours.shape} max abs diff {err:.3g} (rel to max {rel:.3g}) {'OK' if good else 'FAILED'}")
        ok &= bool(good)
    runs = int(os.environ.get("TIPC_ONNX_BENCH", "0"))
    if runs:
        x1 = x[:1]
        for _ in range(5):
            sess.run(["probs"], {"input": x1})
        ts = []
        for _ in range(runs):
            t = time.perf_counter()
            sess.run(["probs"], {"input": x1})
            ts.append(time.perf_counter() - t)
        print(f"onnxruntime bs=1 latency (median): {sorted(ts)[runs // 2] * 1e3:.3f} ms")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
