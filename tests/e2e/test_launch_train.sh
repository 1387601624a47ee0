#!/usr/bin/env bash
# Data-parallel `tipc train` through `tipc launch`: 2 nodes x 2 ranks on loopback (synthetic data, tiny
# model, release build for speed). Every rank ends with the same parameters (the trainer's own
# cross-rank check, and the two nodes' checkpoints export to identical inference models); then a rank
# killed mid-epoch stops every process on both nodes, naming the rank and node.
. "$(dirname "$0")/lib_launch.sh"
T=${TIPC_REL:-$TIPC}
export TIPC_JOB_TOKEN=dp
TINY="--data-path none -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32 --batch-size 4 --threads 1 --print-freq 1 --seed 7"
lb() { local name=$1; shift; "$T" launch --job_id="$JOB" "$@" >"$W/$name.out" 2>&1 & LAUNCHERS+=($!); eval "${name}_pid=$!"; }

port=$(free_port)
IPS="--ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --gpus=0,1"
lb n1 $IPS --node_ip=127.0.0.2 --log_dir=l train $TINY -o DataLoader.synthetic_size=32 --epochs 2 --output-dir o1
lb n0 $IPS --node_ip=127.0.0.1 --log_dir=l train $TINY -o DataLoader.synthetic_size=32 --epochs 2 --output-dir o0
wait_rc rc0 "$n0_pid"; wait_rc rc1 "$n1_pid"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "data-parallel train: exit $rc0 $rc1"
grep -q '^\[0:0\] data parallel: 4 ranks (gloo over [a-z ]*), .* in gradient allreduce' n0.out || fail "rank 0 does not report data parallelism"
grep -l 'differ across ranks' l/workerlog.* && fail "the trainer's parameter check failed"
for n in 0 1; do
    [ -s o$n/latest.ckpt ] || fail "node $n wrote no checkpoint"
    "$T" export --model=mobilenet_v3_small --pretrained=o$n/latest.ckpt --save-inference-dir=e$n >/dev/null 2>&1 || fail "export $n"
done
cmp -s e0/inference.tipc e1/inference.tipc || fail "the two nodes' models differ"

# kill rank 3 (node 1) mid-epoch
LAUNCHERS=()
port=$(free_port)
IPS="--ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:$port --gpus=0,1"
lb k1 $IPS --node_ip=127.0.0.2 --log_dir=k train $TINY -o DataLoader.synthetic_size=4096 --epochs 20 --output-dir ok1
lb k0 $IPS --node_ip=127.0.0.1 --log_dir=k train $TINY -o DataLoader.synthetic_size=4096 --epochs 20 --output-dir ok0
wait_line k/workerlog.0 'Epoch 0, iter: 3\]' 60
victim=$(rank_pid "$JOB" 3)
[ -n "$victim" ] || fail "no rank 3"
kill_expect_gone 9 "$victim" 10 "kill -9 of rank 3 mid-epoch"
wait_rc rc0 "$k0_pid"; wait_rc rc1 "$k1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 137 ] || fail "exit codes node0=$rc0 node1=$rc1, want 4 and 137"
grep -q 'rank 3 (node 1, 127.0.0.2, local rank 1, pid [0-9]*) was killed by signal 9' k0.out || fail "node 0: $(cat k0.out)"
echo ok
