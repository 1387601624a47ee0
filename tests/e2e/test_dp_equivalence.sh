#!/usr/bin/env bash
# Data parallelism computes gradient accumulation: after 10 steps, rank 0 of a 2-rank `tipc launch`
# run holds (within 1e-4 relative, element-wise) the parameters and BN running statistics of a
# 1-process `tipc train --simulate-world 2` that runs both ranks' micro-batches (same shards, same
# dropout masks, BN statistics per micro-batch, rank 0's running statistics kept) and averages their
# gradients. Both use the sanitizer build, one thread per process (same kernels, same summation
# order), so in practice they agree bit for bit. Variants that compute something else must fail the
# same comparison: a plain run with the 2-rank global batch (BN over 8 images, one shuffle) and the
# simulation without dropout (the dropout masks of both ranks are matched, not ignored).
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=dpeq
DIFF="python3 $ROOT/tests/e2e/ckpt_diff.py"
# synthetic_size 80, 2 ranks x batch 4, drop_last: 40 images and exactly 10 steps per rank
RECIPE="--data-path none -o DataLoader.synthetic_size=80 -o Arch.image_size=64 -o Arch.class_num=4 --epochs 1 --seed 3 --threads 1 --print-freq 5"

"$TIPC" launch --job_id="$JOB" --nproc_per_node=2 --log_dir=l train $RECIPE --batch-size 4 --output-dir dp >dp.out 2>&1 ||
    fail "2-rank launch: exit $?"
grep -q '^\[0:0\] data parallel: 2 ranks (gloo over shared memory)' dp.out ||
    fail "the launch run is not data parallel through shared memory: $(grep 'data parallel' dp.out)"
"$TIPC" train $RECIPE --batch-size 4 --simulate-world 2 --output-dir sim >sim.out 2>&1 || fail "--simulate-world 2: exit $?"
grep -q '^simulating 2 data-parallel ranks' sim.out || fail "no simulation banner"
for f in dp.out sim.out; do
    grep -q '(10 train steps/epoch)' $f || fail "$f: not 10 steps per epoch"
    grep -q 'Epoch 0, iter: 9\]' $f || fail "$f: step 10 not logged"
done
for part in params stats; do
    $DIFF sim/latest.ckpt dp/latest.ckpt $part 1e-4 >diff.$part.out || fail "simulation vs rank 0 ($part): $(cat diff.$part.out)"
    echo "simulate-world 2 vs 2 ranks, $(cat diff.$part.out)"
done
# The same with the allreduce overlapping backward in several buckets (1 MB: about 6, started by
# net_backward's hook on the communication thread), one bucket per tensor, the blocking allreduce,
# and over Gloo's TCP instead of shared memory: every bucket is the same element-wise average
# (a + b, then / 2), so all equal the simulation bit for bit (relative tolerance 0).
for v in "mb1:-o Distributed.fuse_grad_size_in_MB=1" "tensor:-o Distributed.fuse_all_reduce_ops=false" \
         "blocking:-o Distributed.overlap_allreduce=false -o Distributed.fuse_grad_size_in_MB=1" \
         "tcp:--comm-shm off -o Distributed.fuse_grad_size_in_MB=1"; do
    name=${v%%:*}
    # shellcheck disable=SC2086
    TIPC_METRICS=$PWD/$name.jsonl "$TIPC" launch --job_id="$JOB$name" --nproc_per_node=2 --log_dir=l$name train $RECIPE ${v#*:} --batch-size 4 \
        --output-dir $name >$name.out 2>&1 || fail "2-rank launch ($name): exit $?"
    for part in params stats; do
        $DIFF sim/latest.ckpt $name/latest.ckpt $part 0 >diff.$name.out || fail "simulation vs $name ($part): $(cat diff.$name.out)"
    done
    echo "simulate-world 2 vs 2 ranks ($name): bit for bit"
done
grep -q '^\[0:0\] data parallel: 2 ranks (gloo over tcp)' tcp.out || fail "--comm-shm off: $(grep 'data parallel' tcp.out)"
grep -Eq '^\[0:0\] data parallel: 2 ranks \(gloo over shared memory\), .*; ([4-9]|[1-9][0-9]) buckets \(fuse_grad_size_in_MB, largest [0-9.]+ MB\) overlapping backward on a communication thread' mb1.out ||
    fail "1 MB buckets: not several buckets overlapping backward: $(grep 'data parallel' mb1.out)"
grep -Eq '; [0-9]{2,} buckets \(one per tensor' tensor.out || fail "per-tensor: $(grep 'data parallel' tensor.out)"
grep -q '; blocking allreduce after backward' blocking.out || fail "blocking: $(grep 'data parallel' blocking.out)"
# 4 ranks through shared memory sum ((g0 + g1) + g2) + g3 in rank order, the order in which the
# simulation accumulates its micro-batches: bit for bit as well (Gloo's ring over TCP sums in
# another order: ~1e-7 apart)
R4=${RECIPE/synthetic_size=80/synthetic_size=160}
# shellcheck disable=SC2086
"$TIPC" launch --job_id="${JOB}w4" --nproc_per_node=4 --log_dir=l4 train $R4 --batch-size 4 --output-dir dp4 >dp4.out 2>&1 ||
    fail "4-rank launch: exit $?"
# shellcheck disable=SC2086
"$TIPC" train $R4 --batch-size 4 --simulate-world 4 --output-dir sim4 >sim4.out 2>&1 || fail "--simulate-world 4: exit $?"
grep -q '(10 train steps/epoch)' dp4.out || fail "4 ranks: not 10 steps per epoch"
for part in params stats; do
    $DIFF sim4/latest.ckpt dp4/latest.ckpt $part 0 >diff.4.out || fail "simulate-world 4 vs 4 ranks ($part): $(cat diff.4.out)"
done
echo "simulate-world 4 vs 4 ranks (shared memory): bit for bit"

# the exposed communication (time waited, not time the allreduce ran) is in every rank's metrics
for name in mb1 blocking; do
    python3 - $name.jsonl <<'PY' || fail "$name: exposed communication missing from the metrics"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ep = [e for e in ev if e["event"] == "epoch"]
end = [e for e in ev if e["event"] == "train_end"]
assert sorted(e["rank"] for e in ep) == [0, 1] and sorted(e["rank"] for e in end) == [0, 1], ev
for e in ep:
    assert 0 <= e["comm_exposed_s"] <= e["seconds"] and e["comm_busy_s"] > 0, e
    assert abs(e["comm_exposed_share"] - e["comm_exposed_s"] / e["seconds"]) < 1e-6, e
for e in end:
    assert 0 <= e["comm_exposed_share"] <= 1 and e["train_s"] > 0, e
PY
done

# the log lines (loss, top-1 of rank 0's micro-batches) agree too
cmp -s <(grep -o 'Epoch 0, iter: 9\].*loss: [0-9.]*' sim.out) <(grep -o 'Epoch 0, iter: 9\].*loss: [0-9.]*' dp.out) ||
    fail "step-10 log lines differ"

# the comparison can fail
"$TIPC" train $RECIPE --batch-size 8 --output-dir big >big.out 2>&1 || fail "batch 8: exit $?"
grep -q '(10 train steps/epoch)' big.out || fail "batch 8: not 10 steps"
$DIFF big/latest.ckpt dp/latest.ckpt params 1e-4 >diff.big.out && fail "one batch of 8 matches 2 ranks x 4: $(cat diff.big.out)"
echo "batch 8, 1 process vs 2 ranks: $(cat diff.big.out)"
"$TIPC" train $RECIPE --batch-size 4 --simulate-world 2 -o Arch.dropout=0 --output-dir nodrop >nodrop.out 2>&1 ||
    fail "dropout 0: exit $?"
$DIFF nodrop/latest.ckpt dp/latest.ckpt params 1e-4 >diff.nodrop.out && fail "dropout 0 matches dropout 0.2: $(cat diff.nodrop.out)"
echo "simulation without dropout vs 2 ranks: $(cat diff.nodrop.out)"

# usage errors
"$TIPC" train $RECIPE --simulate-world 0 --output-dir x >err.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "'--simulate-world' must be in 1..4096, got 0" err.out || fail "--simulate-world 0: exit $rc, $(cat err.out)"
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$TIPC" train $RECIPE --simulate-world 2 --output-dir x >err.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'not with WORLD_SIZE=2 (env://)' err.out || fail "--simulate-world under a launcher: exit $rc, $(cat err.out)"
echo ok
