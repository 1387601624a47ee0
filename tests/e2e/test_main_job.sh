# test_main_job.sh: the main use, end to end, on this machine: the fleet config
# (gpu_list 127.0.0.1,127.0.0.2;0,1) run as two `tipc run` processes (one per node, --node_ip),
# each launching 2 ranks: 4-rank data-parallel training over Gloo on loopback, then eval, export and
# inference on both nodes, all from the embedded synthetic dataset (no network).
. "$ROOT/tests/e2e/lib.sh"
work=$(mktemp -d "$TMPDIR/main.XXXXXX")
cd "$work" || fail "cd"
ln -s "$ROOT/configs" configs
ln -s "$ROOT/images" images
CFG=configs/mobilenet_v3_small/train_fleet_infer.txt
TIPC="$TIPC" "$ROOT/scripts/multinode/loopback.sh" "$CFG" lite_train_lite_infer > out.txt 2>&1
rc=$?
tail -n 30 out.txt
assert_eq "$rc" 0 "loopback exit code"
base=./logs/mobilenet_v3_small/lite_train_lite_infer
for n in 0 1; do
    log=$base/node$n/results_python.log
    assert_eq "$(grep -c '^Run successfully with command - mobilenet_v3_small - ' "$log")" 4 "node $n passed stages"
    assert_eq "$(wc -l < "$log")" 4 "node $n stages"
    head -n 1 "$log" | grep -q -F "Run successfully with command - mobilenet_v3_small - tipc launch --ips=127.0.0.1,127.0.0.2 --gpus=0,1 train -c configs/mobilenet_v3_small/mobilenet_v3_small.yaml --output-dir=$base/node$n/fleet_train_gpus_0,1_autocast_False_nodes_2.log --epochs=5   --batch-size=4!" \
        || fail "node $n train line: $(head -n 1 "$log")"
    [ -s "$base/node$n/fleet_train_gpus_0,1_autocast_False_nodes_2.log/latest.ckpt" ] || fail "node $n checkpoint"
    grep -q 'ips: ' "$base/node$n/python_infer_cpu_batchsize_1.log" || fail "node $n inference benchmark summary"
done
# data parallel: the four ranks ended with identical parameters, so both nodes exported the same model
d=fleet_train_gpus_0,1_autocast_False_nodes_2.log
cmp -s "$base/node0/$d/inference.tipc" "$base/node1/$d/inference.tipc" || fail "nodes exported different models"
grep -q 'data parallel: 4 ranks (gloo over [a-z ]*)' out.txt || fail "no 4-rank data-parallel line"
grep -q 'Acc@1' out.txt || fail "no eval line"
# both nodes ran under the job id `tipc run` derived from the config, mode and stage (not "default")
ids=$(grep -o 'logs [^ ]*/workerlog.N, job run-[0-9a-f]\{12\}$' out.txt | sed 's/.* job //' | sort | uniq -c)
[ "$(echo "$ids" | wc -l)" = 1 ] && [ "$(echo "$ids" | awk '{print $1}')" = 2 ] || fail "derived job ids: '$ids'"
echo ok
