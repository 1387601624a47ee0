# test_run_config_errors.sh: a mistake inside a config is found before anything runs, at the line
# that holds it (issue #25, item 7):
#  1. a mistyped flag key (`--epoch:`) fails `tipc run --dry-run` (exit 2) at its line with the
#     parser's did-you-mean hint, and a real run too, before any stage (no results log);
#  2. a flag mistyped inside the trainer's line: that line; inside the command `tipc launch` starts
#     (a two-device gpu_list item): the same check;
#  3. a missing image is reported at the line that names it (31), not the inference line (27).
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_report.sh"
make_root
tiny_config -1 1

# 1. --epoch: instead of --epochs:
sed 's/^--epochs:/--epoch:/' configs/m/tiny.txt > configs/m/typo.txt
line=$(grep -n '^--epoch:' configs/m/typo.txt | cut -d: -f1)
"$TIPC" run configs/m/typo.txt lite_train_lite_infer --dry-run > out.txt 2> err.txt
assert_eq "$?" 2 "dry run of a config with a mistyped flag"
grep -qx "configs/m/typo.txt:$line: tipc: error: train: unknown option '--epoch'" err.txt || fail "message: $(cat err.txt)"
grep -qx "configs/m/typo.txt:$line: hint: did you mean '--epochs'? (see 'tipc help train')" err.txt || fail "hint: $(cat err.txt)"
"$TIPC" run configs/m/typo.txt lite_train_lite_infer --no-prepare --output out > out.txt 2> err.txt
assert_eq "$?" 2 "a run of a config with a mistyped flag"
[ ! -e out ] || fail "the run made its output folder: $(ls -R out | head)"

# 2. inside the trainer's line, and inside the command tipc launch starts
sed 's#^norm_train:train -c configs/m/tiny.yaml#& --bach-size=3#' configs/m/tiny.txt > configs/m/typo2.txt
line=$(grep -n '^norm_train:' configs/m/typo2.txt | cut -d: -f1)
"$TIPC" run configs/m/typo2.txt lite_train_lite_infer --dry-run > out.txt 2> err.txt
assert_eq "$?" 2 "dry run, a flag mistyped in the trainer's line"
grep -q "^configs/m/typo2.txt:$line: tipc: error: train: unknown option '--bach-size'" err.txt || fail "message: $(cat err.txt)"
sed -e 's/^gpu_list:.*/gpu_list:0,1/' configs/m/typo.txt > configs/m/typo3.txt
"$TIPC" run configs/m/typo3.txt lite_train_lite_infer --dry-run > out.txt 2> err.txt
assert_eq "$?" 2 "dry run, a flag mistyped in the launched command"
grep -q "tipc launch --gpus=0,1 train" out.txt && fail "the plan was printed"
grep -q "^configs/m/typo3.txt:[0-9]*: tipc: error: train: unknown option '--epoch'" err.txt || fail "launched: $(cat err.txt)"
# the good config still passes the check, in a dry run and for real
"$TIPC" run configs/m/tiny.txt lite_train_lite_infer --dry-run > out.txt 2> err.txt || fail "good config: $(cat err.txt)"

# 3. a missing image: the --img-path line
sed 's#^--img-path:.*#--img-path:./images/nope.jpg#' configs/m/tiny.txt > configs/m/noimg.txt
line=$(grep -n '^--img-path:' configs/m/noimg.txt | cut -d: -f1)
"$TIPC" run configs/m/noimg.txt whole_infer --dry-run > out.txt 2> err.txt
assert_eq "$?" 2 "whole_infer with a missing image"
grep -q "^configs/m/noimg.txt:$line: './images/nope.jpg' does not exist" err.txt || fail "line of the missing image: $(cat err.txt)"
echo ok
