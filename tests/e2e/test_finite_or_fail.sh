# test_finite_or_fail.sh: a broken model never passes a stage ("finite or fail", engine/model/finite.h).
#  1. `tipc run` of a tiny config whose learning rate is 1e30: the train stage fails with exit 6
#     (its logits are not finite; they used to give "Acc@1 100.000"), nothing after it passes, the
#     run exits 1;
#  2. a checkpoint whose last BN running variance is NaN under a valid checksum: eval (--test-only),
#     export and a resume all exit 6 naming the tensor and the step, nothing is written;
#  3. an inference.tipc whose last bias is NaN under a valid checksum: infer exits 6 naming the
#     layer, no "prob: nan" line; one whose weights are finite but 1e20 times too large: infer
#     (images and --input-raw) exits 6 naming the image, nothing printed or written for it;
#  4. a training that diverges into non-finite weights with eval off: exit 6 naming the tensor and
#     the global step, no checkpoint of that epoch; one that ends with huge but finite weights
#     (lr 1e35, eval off) passes training, but export refuses it (its output on a gray image
#     overflows);
#  5. a learning rate of 0: the training passes with a warning that the weights did not change, on
#     the console, under the stage in tipc run's end table and in its JUnit system-out.
. "$ROOT/tests/e2e/lib.sh"
W=$(mktemp -d "$TMPDIR/finite.XXXXXX")
cd "$W" || fail "cd"
ln -s "$ROOT/images" images
mkdir -p cfg
tiny_recipe 1 > cfg/tiny.yaml

echo "# 1. tipc run with learning rate 1e30"
sed -e 's|configs/mobilenet_v3_small/mobilenet_v3_small.yaml|cfg/tiny.yaml|' \
    -e 's|^gpu_list:.*|gpu_list:-1|' -e 's|^--epochs:.*|--epochs:lite_train_lite_infer=1|' \
    -e 's|^norm_train:\(.*\)|norm_train:\1 -o Optimizer.lr.learning_rate=1e30 -o DataLoader.synthetic_size=4|' \
    -e '/^inference:/,$ s|^--use-gpu:.*|--use-gpu:False|' \
    "$ROOT/configs/mobilenet_v3_small/train_infer.txt" > cfg/diverge.txt
grep -q 'learning_rate=1e30' cfg/diverge.txt || fail "the config edit did not take"
timeout 120 "$TIPC" run cfg/diverge.txt lite_train_lite_infer --no-prepare --output run1 > run1.out 2> run1.err
rc=$?
[ "$rc" -eq 1 ] || { tail -n 30 run1.out run1.err; fail "tipc run of a diverging training exited $rc, expected 1"; }
grep -q 'train.*FAILED(6)' run1.err || { tail -n 20 run1.err; fail "the train stage did not fail with exit 6"; }
grep -q 'not finite' run1/tipc/*train*.log || fail "the train log does not say what is not finite"
log_lacks run1.out "Acc@1 100.000"
assert_eq "$(tail -n 1 run1.out)" "0 passed, 1 failed, 3 skipped" "summary of the diverged run"

echo "# 2. a NaN checkpoint with a valid checksum"
run_expect 0 train.log "$TIPC" train -c cfg/tiny.yaml --output-dir good
cp good/latest.ckpt nan.ckpt
python3 "$ROOT/tests/e2e/binfile.py" poison nan.ckpt
run_expect 6 eval.log "$TIPC" train -c cfg/tiny.yaml --test-only --pretrained nan.ckpt
log_has eval.log "checkpoint 'nan.ckpt' (epoch 1, global step 4) holds a non-finite value: layer"
log_has eval.log "running var"
log_lacks eval.log "Acc@1"
run_expect 6 export.log "$TIPC" export --pretrained nan.ckpt --save-inference-dir nan-inf
log_has export.log "holds a non-finite value"
[ ! -e nan-inf/inference.tipc ] || fail "an inference model was exported from a NaN checkpoint"
run_expect 6 resume.log "$TIPC" train -c cfg/tiny.yaml --epochs 2 --resume nan.ckpt --output-dir resumed
[ ! -e resumed/epoch_2.ckpt ] || fail "training went on from a NaN checkpoint"

echo "# 3. a NaN inference model with a valid checksum"
run_expect 0 export-good.log "$TIPC" export --pretrained good/latest.ckpt --save-inference-dir inf
python3 "$ROOT/tests/e2e/binfile.py" poison inf/inference.tipc
run_expect 6 infer.log "$TIPC" infer --model-dir inf --img-path images/demo.jpg
log_has infer.log "inference model 'inf/inference.tipc' holds a non-finite value: layer"
log_has infer.log "bias"
log_lacks infer.log "prob: "
run_expect 0 export-big.log "$TIPC" export --pretrained good/latest.ckpt --save-inference-dir big
python3 "$ROOT/tests/e2e/binfile.py" scale big/inference.tipc 1e20
run_expect 6 infer-big.log "$TIPC" infer --model-dir big --img-path images/demo.jpg
log_has infer-big.log "infer: the probabilities for image 'images/demo.jpg' are not finite"
log_lacks infer-big.log "prob: "
python3 -c "import struct, sys; sys.stdout.buffer.write(struct.pack('<12288f', *[0.5] * 12288))" > in.raw
run_expect 6 infer-raw.log "$TIPC" infer --model-dir big --input-raw in.raw --output-raw out.raw
log_has infer-raw.log "for input 0 of 'in.raw' are not finite"
[ ! -e out.raw ] || fail "non-finite outputs were written"

echo "# 4. weights that turn non-finite in a step whose loss was finite (eval off)"
run_expect 6 inf-weights.log "$TIPC" train -c cfg/tiny.yaml -o DataLoader.synthetic_size=4 \
    -o Global.eval_during_train=false --lr 1e300 --output-dir diverged
log_has inf-weights.log "the weights are not finite after global step 1 (epoch 0): layer"
[ ! -e diverged/epoch_1.ckpt ] && [ ! -e diverged/latest.ckpt ] || fail "a diverged net was saved"
run_expect 0 huge.log "$TIPC" train -c cfg/tiny.yaml -o DataLoader.synthetic_size=4 \
    -o Global.eval_during_train=false --lr 1e35 --output-dir huge
run_expect 6 export-huge.log "$TIPC" export --pretrained huge/latest.ckpt --save-inference-dir huge-inf
log_has export-huge.log "export: not exporting 'huge/latest.ckpt' (epoch 1, global step 1): "
[ ! -e huge-inf/inference.tipc ] || fail "a model that overflows was exported"

echo "# 5. learning rate 0"
run_expect 0 lr0.log "$TIPC" train -c cfg/tiny.yaml --lr 0 --output-dir lr0
log_has lr0.log "warning: the weights did not change in 4 training steps"
log_lacks train.log "did not change"
sed -e 's|learning_rate=1e30|learning_rate=0|' -e 's| -o DataLoader.synthetic_size=4||' cfg/diverge.txt > cfg/lr0.txt
timeout 120 "$TIPC" run cfg/lr0.txt lite_train_lite_infer --no-prepare --output run0 --junit run0.xml > run0.out 2> run0.err ||
    { tail -n 30 run0.out run0.err; fail "tipc run with lr 0"; }
grep -A1 "train\[norm_train gpus=-1 autocast=False\] *passed" run0.err | grep -q "warning: the weights did not change" ||
    { tail -n 12 run0.err; fail "the end table shows no warning under the lr-0 training"; }
python3 - run0.xml <<'PY' || fail "JUnit system-out"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
train = [c for c in cases if ".train" in c.get("classname")][0]
out = train.find("system-out").text
assert train.find("failure") is None, "a warning is not a failure"
assert "warnings:\n" in out and "the weights did not change in 4 training steps" in out, out
PY
echo "ok"
