#!/usr/bin/env bash
# `make install PREFIX=tmp`: the binary, configs, recipe and demo image land in PREFIX; the installed
# tipc, run from an empty directory on an installed config, resolves the config's paths against the
# config's folders (not the working directory) and passes every CPU stage; two gpu_list passes keep
# both passes' inference logs; the launcher's per-rank logs go under --output (nothing in ./log);
# a config naming a file that exists nowhere is refused before anything runs.
. "$ROOT/tests/e2e/lib.sh"
pfx=$TMPDIR/prefix
make -s -C "$ROOT" install PREFIX="$pfx" >"$TMPDIR/install.log" 2>&1 || { cat "$TMPDIR/install.log"; fail "make install"; }
share=$pfx/share/tipc
for f in bin/tipc share/tipc/configs/datasets.yaml share/tipc/configs/mobilenet_v3_small/mobilenet_v3_small.yaml \
         share/tipc/configs/mobilenet_v3_small/train_infer.txt share/tipc/configs/mobilenet_v3_small/train_fleet_infer.txt \
         share/tipc/images/demo.jpg share/man/man1/tipc.1 share/bash-completion/completions/tipc; do
    [ -s "$pfx/$f" ] || fail "make install did not install $f"
done
[ -x "$pfx/bin/tipc" ] || fail "installed tipc is not executable"
T=$pfx/bin/tipc
CFG=$share/configs/mobilenet_v3_small/train_infer.txt

mkdir -p "$TMPDIR/empty" && cd "$TMPDIR/empty" || fail cd
# the main CPU config as installed: its recipe is the installed one, whatever the working directory
"$T" run "$CFG" lite_train_lite_infer --dry-run > dry.txt 2>&1 || fail "dry run: $(cat dry.txt)"
grep -q "tipc train -c $share/configs/mobilenet_v3_small/mobilenet_v3_small.yaml --output-dir" dry.txt || fail "recipe not resolved: $(cat dry.txt)"
[ -z "$(ls -A | grep -v dry.txt)" ] || fail "a dry run wrote files: $(ls -A)"

# the same config made tiny (1 epoch, a narrow 64 px model, CPU inference only), installed beside it
TINY=$share/configs/mobilenet_v3_small/tiny_infer.txt
ARCH="-o Arch.width_mult=0.25 -o Arch.image_size=64 -o Arch.class_num=10"
sed -e 's/^--epochs:.*/--epochs:lite_train_lite_infer=1/' -e 's/^--use-gpu:True|False/--use-gpu:False/' \
    -e "s|^norm_train:train -c configs/mobilenet_v3_small/mobilenet_v3_small.yaml|& $ARCH --threads 1|" \
    -e "s|^eval:train -c configs/mobilenet_v3_small/mobilenet_v3_small.yaml|& $ARCH|" "$CFG" > "$TINY"
grep -q '^gpu_list:0|0,1$' "$TINY" || fail "expected two gpu_list passes in $CFG"
"$T" run "$TINY" lite_train_lite_infer --output out > run.txt 2> err.txt
rc=$?
[ "$rc" = 0 ] || { tail -n 20 run.txt err.txt; fail "installed run from an empty directory: exit $rc"; }
grep -q '^8 passed, 0 failed' run.txt || fail "not every stage passed: $(grep -a 'Run \|passed' run.txt)"
# two passes, two inference logs: the first keeps the original's name, the second has its pass's name
first=out/python_infer_cpu_batchsize_1.log
second=out/norm_train_gpus_0,1_autocast_False_nodes_1_python_infer_cpu_batchsize_1.log
[ -s "$first" ] && [ -s "$second" ] || fail "inference logs: $(ls out)"
# each log holds its own pass's prediction (the 1-rank and the 2-rank models differ)
p1=$("$T" infer --use-gpu False --model-dir out/norm_train_gpus_0_autocast_False_nodes_1.log 2>/dev/null | grep -m1 '^image_name:')
p2=$("$T" infer --use-gpu False --model-dir "out/norm_train_gpus_0,1_autocast_False_nodes_1.log" 2>/dev/null | grep -m1 '^image_name:')
[ -n "$p1" ] && [ "$p1" != "$p2" ] || fail "the two passes' models predict the same: '$p1'"
[ "$(grep -m1 '^image_name:' "$first")" = "$p1" ] || fail "first log is not the first pass's: $(head -n 2 "$first")"
[ "$(grep -m1 '^image_name:' "$second")" = "$p2" ] || fail "second log is not the second pass's: $(head -n 2 "$second")"
grep -q -- "> $second 2>&1" out/results_python.log || fail "status line does not name the second log"
# per-rank logs of the launched pass under --output, none in the working directory
wl="out/norm_train_gpus_0,1_autocast_False_nodes_1.log/log"
[ -f "$wl/workerlog.1" ] || fail "no workerlog.1 under --output: $(find out -name 'workerlog*')"
grep -q 'Epoch 0' "$wl/workerlog.0" || fail "rank 0's log under --output lacks the training log: $(head -n 3 "$wl/workerlog.0")"
[ ! -e log ] || fail "per-rank logs written to ./log"
[ -z "$(ls -A | grep -v -x -e out -e data -e run.txt -e err.txt -e dry.txt)" ] || fail "files outside --output and data/: $(ls -A)"

# a referenced file that exists nowhere: exit 2 with the config line, nothing run
mkdir -p "$TMPDIR/lone" && cp "$CFG" "$TMPDIR/lone/train_infer.txt" && cd "$TMPDIR/lone" || fail cd
"$T" run train_infer.txt lite_train_lite_infer > out.txt 2> err.txt
rc=$?
[ "$rc" = 2 ] || fail "missing recipe: exit $rc, want 2: $(cat err.txt)"
grep -q "^train_infer.txt:14: 'configs/mobilenet_v3_small/mobilenet_v3_small.yaml' does not exist in the config's folder, any folder above it or the working directory" err.txt \
    || fail "message: $(cat err.txt)"
[ "$(grep -c 'does not exist' err.txt)" = 1 ] || fail "the missing file is reported more than once: $(cat err.txt)"
[ ! -e logs ] && [ ! -e data ] || fail "something ran"
# the same lone config run from a folder that holds configs/ and images/ (#23): found there, in the
# working directory, the last place looked (the original harness looks nowhere else)
cd "$share" || fail cd
"$T" run "$TMPDIR/lone/train_infer.txt" lite_train_lite_infer --dry-run > "$TMPDIR/lone/dry.txt" 2>&1 ||
    fail "a config outside configs/, run from a folder with configs/: $(cat "$TMPDIR/lone/dry.txt")"
grep -q "tipc train -c configs/mobilenet_v3_small/mobilenet_v3_small.yaml --output-dir" "$TMPDIR/lone/dry.txt" ||
    fail "not resolved in the working directory: $(cat "$TMPDIR/lone/dry.txt")"
echo ok
