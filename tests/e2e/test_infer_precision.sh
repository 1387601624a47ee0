#!/usr/bin/env bash
# test_infer_precision.sh: `tipc infer --precision fp32|fp16|bf16`. Everywhere: fp32 is the
# default and the AutoLog summary names the precision that ran; a bad value is a usage error
# (exit 2). With a GPU: fp16 and bf16 run on it (16-bit activations and weights, fp32 logits) and
# their probabilities stay within 0.05 (fp16) / 0.15 (bf16) of fp32's on the same raw input (the
# bounds of test_cuda_infer_lp's whole-net check); without one, --use-gpu True exits 7 whatever the
# precision, and that half is skipped with the reason.
. "$ROOT/tests/e2e/lib.sh"
T=${TIPC:?}
cd "$TMPDIR" || fail cd
TINY="--data-path none -o Arch.class_num=5 -o Arch.width_mult=0.25 -o Arch.image_size=64 --batch-size 5 --epochs 1 -o DataLoader.synthetic_size=10 --threads 1"
"$T" train $TINY --device cpu --output-dir o >t.log 2>&1 || fail "train: $(tail -n 5 t.log)"
"$T" export --pretrained o/latest.ckpt --save-inference-dir m >t.log 2>&1 || fail "export: $(tail -n 5 t.log)"
IMG="$ROOT/images/demo.jpg"
"$T" infer --model-dir m --img-path "$IMG" --benchmark True >b.log 2>&1 || fail "fp32 infer: $(tail -n 5 b.log)"
grep -q "precision: fp32" b.log || fail "the summary does not say fp32: $(grep precision b.log)"
grep -q "class_id:" b.log || fail "no result line"
"$T" infer --model-dir m --img-path "$IMG" --precision fp64 >e.log 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "precision must be fp32, bf16 or fp16, not 'fp64'" e.log || fail "bad precision: exit $rc: $(cat e.log)"

"$T" infer --model-dir m --img-path "$IMG" --use-gpu True --precision fp16 >g.log 2>&1; rc=$?
if [ $rc -eq 7 ]; then
    grep -q "CUDA" g.log || fail "exit 7 without saying why: $(cat g.log)"
    skip "no GPU here (--use-gpu True exits 7: $(grep -m1 error g.log)); the CPU half passed"
fi
[ $rc -eq 0 ] || fail "gpu fp16: exit $rc: $(tail -n 5 g.log)"
python3 -c 'import random, struct, sys; random.seed(1); n = 2 * 3 * 64 * 64
sys.stdout.buffer.write(struct.pack("%df" % n, *[random.uniform(-2, 2) for _ in range(n)]))' >in.raw || fail "raw input"
for p in fp32 fp16 bf16; do
    "$T" infer --model-dir m --input-raw in.raw --output-raw "$p.raw" --use-gpu True --precision $p >r.log 2>&1 ||
        fail "gpu $p raw: $(tail -n 5 r.log)"
    "$T" infer --model-dir m --img-path "$IMG" --use-gpu True --precision $p --benchmark True >b.log 2>&1 ||
        fail "gpu $p: $(tail -n 5 b.log)"
    grep -q "precision: $p" b.log || fail "the summary does not say $p"
done
python3 - <<'PY' || fail "16-bit probabilities too far from fp32"
import struct
def probs(p):
    b = open(p + ".raw", "rb").read()
    v = struct.unpack("%df" % (len(b) // 4), b)
    return v[: len(v) // 2]
ref = probs("fp32")
for p, tol in (("fp16", 0.05), ("bf16", 0.15)):
    d = max(abs(a - b) for a, b in zip(probs(p), ref))
    print(p, "max |prob - fp32 prob| =", d)
    assert d <= tol, (p, d)
PY
echo ok
