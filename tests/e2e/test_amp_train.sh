#!/usr/bin/env bash
# test_amp_train.sh: mixed precision through the command line and the recipe on the CPU:
#  - `tipc run` of configs/.../train_amp_infer.txt (amp_train: `--amp_level=O2`, tiny recipe,
#    synthetic data) trains in bf16 and its training log says so; the metrics record it;
#  - --precision fp16 with the recipe's AMP.scale_loss / AMP.use_dynamic_loss_scaling keys: the
#    log names fp16 and the static scale 128; Global.auto_cast=fp16 selects fp16 O2;
#  - tipc infer --precision bf16|fp16 on the exported model: named in the AutoLog summary,
#    probabilities within 0.05 of fp32's;
#  - bad values (--precision fp8, AMP.level=O3, Global.auto_cast=int8) are usage errors (exit 2)
#    naming the flag or key.
set -u
. "$ROOT/tests/e2e/lib.sh"
W=$(mktemp -d "$TMPDIR/amp.XXXXXX")
cd "$W" || fail "cd"
ln -s "$ROOT/images" images
mkdir -p cfg
tiny_recipe 1 > cfg/tiny.yaml
sed -e 's|^gpu_list:.*|gpu_list:-1|' -e 's|^use-gpu:.*|use-gpu:False|' -e 's|^--epochs:.*|--epochs:lite_train_lite_infer=1|' \
    -e 's|configs/mobilenet_v3_small/mobilenet_v3_small.yaml|cfg/tiny.yaml|' \
    -e '/^inference:/,$ s|^--use-gpu:.*|--use-gpu:False|' \
    "$ROOT/configs/mobilenet_v3_small/train_amp_infer.txt" > cfg/tiny.txt
grep -q -- '--amp_level=O2' cfg/tiny.txt || fail "the AMP config no longer passes --amp_level=O2"
OUT=./logs/mobilenet_v3_small/lite_train_lite_infer
"$TIPC" run cfg/tiny.txt lite_train_lite_infer --no-prepare > out.txt 2> err.txt
rc=$?
[ "$rc" -eq 0 ] || { tail -n 40 out.txt err.txt; fail "tipc run exit $rc"; }
assert_eq "$(tail -n 1 out.txt)" "4 passed, 0 failed, 0 skipped" "summary"
grep -q '^precision: bf16 mixed (AMP O2): ' "$OUT/tipc/01_train.log" || { cat "$OUT/tipc/01_train.log"; fail "train log: no bf16 precision line"; }
grep -q '^AMP: 0 steps skipped' "$OUT/tipc/01_train.log" || fail "train log: no AMP summary"
grep -q 'not implemented' "$OUT/tipc/01_train.log" && fail "the old fp32 warning is still printed"
grep -q '"precision":"bf16"' "$OUT/tipc/metrics.jsonl" || fail "metrics: precision not recorded"

# tipc infer --precision on the exported model: the AutoLog line names it; probabilities of the
# same input within 0.05 of fp32's and not identical to them (the rounding really ran)
MD=$(dirname "$(find logs -name inference.tipc | head -n 1)")
[ -d "$MD" ] || fail "no exported model"
"$TIPC" infer --model-dir "$MD" --precision bf16 --benchmark True > ib.log 2>&1 || { cat ib.log; fail "bf16 infer"; }
grep -q 'precision: bf16' ib.log || { cat ib.log; fail "infer: no bf16 precision line"; }
python3 -c 'import random, struct, sys; random.seed(1); sys.stdout.buffer.write(struct.pack("<%df" % (2*3*64*64), *[random.gauss(0, 1) for _ in range(2*3*64*64)]))' > in.raw
for p in fp32 bf16 fp16; do
    "$TIPC" infer --model-dir "$MD" --precision $p --input-raw in.raw --output-raw out_$p.raw > i_$p.log 2>&1 || { cat i_$p.log; fail "$p raw infer"; }
done
python3 - <<'PY' || fail "reduced-precision inference vs fp32"
import struct
def load(p):
    b = open(p, "rb").read(); return struct.unpack("<%df" % (len(b) // 4), b)
ref = load("out_fp32.raw")
for p in ("bf16", "fp16"):
    got = load(f"out_{p}.raw")
    d = max(abs(a - b) for a, b in zip(got[:10], ref[:10]))  # the probabilities (2 x 5)
    assert got != ref, p + ": identical to fp32"
    assert d < 0.05, (p, d)
PY
MSG="--precision must be fp32, bf16 or fp16, not 'int8'"
"$TIPC" infer --model-dir "$MD" --precision int8 > bi.log 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q -- "$MSG" bi.log || { cat bi.log; fail "infer --precision int8: exit $rc"; }

train() { "$TIPC" train -c cfg/tiny.yaml --threads 1 --output-dir "$W/o" "$@"; }
train --precision fp16 -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=False > f16.log 2>&1 || { cat f16.log; fail "fp16 training"; }
grep -q '^precision: fp16 mixed (AMP O1): .*static loss scale 128' f16.log || { cat f16.log; fail "fp16 log line"; }
grep -q '^AMP: 0 steps skipped (a gradient was not finite), loss scale 128 at the end' f16.log || { cat f16.log; fail "fp16 summary"; }
train -o Global.auto_cast=fp16 > ac.log 2>&1 || { cat ac.log; fail "auto_cast training"; }
grep -q '^precision: fp16 mixed (AMP O2): .*dynamic loss scale from 32768' ac.log || { cat ac.log; fail "auto_cast log line"; }
train --amp_level O0 > o0.log 2>&1 || fail "O0 training"
grep -q '^precision: fp32 (no mixed precision)' o0.log || { cat o0.log; fail "O0 is fp32"; }

bad() { # bad ARGS... : exit 2 and the message names what is wrong ($MSG)
    train "$@" > bad.log 2>&1
    local rc=$?
    [ "$rc" -eq 2 ] || { cat bad.log; fail "'$*': exit $rc, want 2"; }
    grep -q -- "$MSG" bad.log || { cat bad.log; fail "'$*': message lacks '$MSG'"; }
}
MSG="--precision must be fp32, bf16 or fp16, not 'fp8'" bad --precision fp8
MSG="AMP.level 'O3'" bad -o AMP.use_amp=True -o AMP.level=O3
MSG="Global.auto_cast 'int8'" bad -o Global.auto_cast=int8
MSG="AMP.dtype 'int8'" bad -o AMP.use_amp=True -o AMP.dtype=int8
echo ok
