# test_bad_values.sh: every bounded flag and recipe key refuses a value outside its documented range
# with exit 2, naming the flag/key and the range, before any work (--threads 100000 used to crash in
# libgomp, batch 1e9 to die with "BUG: out of memory", exit 70); a CRLF config's error shows '\r'
# visibly and hints at the line endings.
. "$ROOT/tests/e2e/lib.sh"
cd "$TMPDIR" || fail "cd"

# refuse WHAT ARGS...: exit 2, and stderr names WHAT and a range "must be in A..B"
refuse() {
    local what=$1; shift
    "$TIPC" "$@" > out.txt 2> err.txt
    local rc=$?
    [ "$rc" -eq 2 ] || fail "tipc $*: exit $rc, want 2 ($(cat err.txt))"
    grep -q -- "$what.* must be in [0-9.e+]*\.\.[0-9.e+]*, got" err.txt || fail "tipc $*: stderr does not name '$what' and its range: $(cat err.txt)"
    ! grep -q "BUG" err.txt || fail "tipc $*: a BUG line: $(cat err.txt)"
}
refuse "'--threads'" train --threads 100000
refuse "'--threads'" train --threads -1
refuse "'--batch-size'" train --batch-size 100000
refuse "'--workers'" train --workers 100000
refuse "'--epochs'" train --epochs 10000000
refuse "'--lr'" train --lr=-1
refuse "'--img-size'" export --img-size 100000 --pretrained x.ckpt --save-inference-dir out
refuse "'--num-classes'" export --num-classes 1000000000 --pretrained x.ckpt --save-inference-dir out
refuse "'--batch-size'" infer --batch-size 1000000000 --model-dir m
refuse "'--cpu-threads'" infer --cpu-threads 100000 --model-dir m
refuse "'--crop-size'" infer --crop-size 100000 --model-dir m
refuse "'--threads'" bench infer --threads 100000
refuse "'--resolution'" bench train --resolution 100000
# recipe keys, through -o and through the YAML file (file:line)
refuse "'DataLoader.batch_size'" train -o DataLoader.batch_size=1000000000
refuse "'Arch.image_size'" train -o Arch.image_size=100000
refuse "'Arch.class_num'" train -o Arch.class_num=1000000000
refuse "'DataLoader.num_workers'" train -o DataLoader.num_workers=100000
refuse "'Arch.dropout'" train -o Arch.dropout=1.5
refuse "'Optimizer.lr.learning_rate'" train -o Optimizer.lr.learning_rate=-0.1
sed 's/^\( *\)batch_size:.*/\1batch_size: 1000000000/' "$ROOT/configs/mobilenet_v3_small/mobilenet_v3_small.yaml" > big.yaml
grep -q "batch_size: 1000000000" big.yaml || fail "could not edit the recipe"
refuse "'DataLoader.batch_size'" train -c big.yaml
line=$(grep -n "batch_size: 1000000000" big.yaml | head -n 1 | cut -d: -f1)
grep -q "^big.yaml:$line: 'DataLoader.batch_size' must be in 1..4096" err.txt || fail "recipe error without file:line: $(cat err.txt)"
# in range still parses (the run then stops later for its own reason, not a range)
"$TIPC" train --threads 2 --batch-size 4 --pretrained missing.ckpt --test-only > out.txt 2> err.txt
! grep -q "must be in" err.txt || fail "an in-range value was refused: $(cat err.txt)"

# CRLF config: the error quotes the value with '\r' visible and hints at the line endings
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
sed 's/$/\r/' "$CFG" > crlf.txt
"$TIPC" run crlf.txt lite_train_lite_infer --dry-run > out.txt 2> err.txt
assert_eq "$?" 2 "exit code of a CRLF config"
grep -qF "crlf.txt:13: unknown trainer 'norm_train\\r'" err.txt || fail "CRLF error: $(cat err.txt)"
grep -q "CRLF" err.txt || fail "no line-ending hint: $(cat err.txt)"
! grep -q $'\r' err.txt || fail "a raw carriage return on stderr"
echo ok
