#!/usr/bin/env bash
# LocalSGD (Distributed.use_local_sgd, local_sgd_steps, local_sgd_is_warm_steps; Paddle's
# DistributedStrategy names): after the warm-up steps the ranks step on their own gradients and
# average their parameters every N steps. With a parameter identity check after EVERY step
# (check_every=1) the run must still pass, because checks only happen right after an average; at the
# epoch end the ranks agree (the check there is a hard error otherwise). The result must differ from
# plain data parallelism on the same recipe, and bad values are usage errors.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=localsgd
DIFF="python3 $ROOT/tests/e2e/ckpt_diff.py"
RECIPE="--data-path none -o DataLoader.synthetic_size=80 -o Arch.image_size=64 -o Arch.class_num=4 --epochs 1 --seed 3 --threads 1 --batch-size 4"
LSGD="-o Distributed.use_local_sgd=true -o Distributed.local_sgd_steps=3 -o Distributed.local_sgd_is_warm_steps=2 -o Distributed.check_every=1"

"$TIPC" launch --job_id="$JOB-a" --nproc_per_node=2 --log_dir=la train $RECIPE $LSGD --output-dir lsgd >lsgd.out 2>&1 ||
    fail "LocalSGD launch: exit $? $(tail -n 5 lsgd.out)"
grep -q '^\[0:0\] data parallel: LocalSGD, parameters averaged every 3 steps after 2 warm-up steps' lsgd.out || fail "no LocalSGD banner"
grep -q 'allreduce (LocalSGD: parameter averages)' lsgd.out || fail "no LocalSGD comm line"
[ -s lsgd/latest.ckpt ] || fail "no checkpoint"
"$TIPC" launch --job_id="$JOB-b" --nproc_per_node=2 --log_dir=lb train $RECIPE --output-dir dp >dp.out 2>&1 ||
    fail "plain data-parallel launch: exit $?"
$DIFF lsgd/latest.ckpt dp/latest.ckpt params 1e-4 >diff.out && fail "LocalSGD equals plain data parallelism: $(cat diff.out)"
echo "LocalSGD vs plain data parallel: $(cat diff.out)"
"$TIPC" train $RECIPE -o Distributed.local_sgd_steps=0 --output-dir x >err.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "'Distributed.local_sgd_steps' must be in 1.." err.out || fail "local_sgd_steps=0: exit $rc, $(cat err.out)"
"$TIPC" train $RECIPE -o Distributed.use_local_sgd=maybe --output-dir x >err.out 2>&1; rc=$?
[ $rc = 2 ] || fail "use_local_sgd=maybe: exit $rc, $(cat err.out)"
echo ok
