#!/usr/bin/env bash
# torchrun (PyPI torch, in the venv scripts/install-deps.sh makes) starts tipc's ranks, which meet
# through the c10d TCPStore its agent runs (docs/distributed.md "torchrun"):
#  1. one host, 2 ranks (`--standalone --nproc_per_node=2`): the model after 10 steps equals, within
#     test_dp_equivalence.sh's tolerance (1e-4 relative), `tipc launch --nproc_per_node=2`'s;
#  2. 2 "nodes" on 127.0.0.1/127.0.0.2 (`--nnodes 2 --rdzv-backend c10d`): the same model;
#  3. rank 1 SIGKILLed mid-training: both torchruns exit non-zero within seconds, and rank 0 names
#     rank 1 as the rank that went silent;
#  4. a `tipc run` config naming torchrun on its training line.
. "$(dirname "$0")/lib_launch.sh"
TORCHRUN=$LAUNCHERS_VENV/bin/torchrun
"$LAUNCHERS_VENV/bin/python" -c 'import torch.distributed.run' 2>/dev/null ||
    { echo "SKIP: no torchrun in $LAUNCHERS_VENV (scripts/install-deps.sh installs torch there)"; exit 77; }
T=${TIPC_REL:-$TIPC}
export OMP_NUM_THREADS=1
RECIPE=$DP_RECIPE
dp_reference

# 1. one host (docs/distributed.md)
t0=$(now)
"$TORCHRUN" --standalone --nproc_per_node=2 --no-python "$T" train $RECIPE --output-dir one >one.out 2>&1 ||
    fail "torchrun --standalone: exit $?"
echo "torchrun, 1 host x 2 ranks: $(elapsed "$t0") s"
grep -q '^data parallel: 2 ranks, started by torchrun, c10d store at [a-z0-9.]*:[0-9]*$' one.out ||
    fail "the log does not name torchrun and its store: $(grep 'data parallel' one.out)"
grep -q '^data parallel: 2 ranks (gloo over shared memory)' one.out || fail "not 2 ranks over shared memory"
same_as_launch one "torchrun, one host"

# 2. two nodes on loopback, c10d rendezvous (docs/distributed.md)
port=$(free_port)
node() {   # N DIR EXTRA...
    local n=$1 d=$2; shift 2
    "$TORCHRUN" --nnodes 2 --nproc_per_node 1 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$port --rdzv-id "$JOB$d" \
        --local-addr 127.0.0.$((n + 1)) --no-python "$T" train $RECIPE "$@" --output-dir $d$n >$d$n.out 2>&1 &
    LAUNCHERS+=($!)
    eval "${d}${n}_pid=$!"
}
t0=$(now)
node 0 two; node 1 two
wait_rc rc0 "$two0_pid"; wait_rc rc1 "$two1_pid"
echo "torchrun, 2 nodes x 1 rank: $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "torchrun --nnodes 2: exit $rc0 $rc1"
r0=$(grep -l '^data parallel: 2 ranks, started by torchrun, c10d store at 127.0.0.1:' two0.out two1.out | head -1)
[ -n "$r0" ] || fail "no rank 0 names torchrun's store: $(grep -h 'data parallel' two*.out)"
grep -q '^data parallel: 2 ranks (gloo over tcp)' "$r0" || fail "two nodes: not over tcp: $(grep 'data parallel' "$r0")"
same_as_launch "${r0%.out}" "torchrun, 2 nodes"

# 3. rank 1 killed mid-training: the job ends, naming it
port=$(free_port)
LAUNCHERS=()
node 0 kill -o DataLoader.synthetic_size=4096 --epochs 20
# node 0's agent serves the rendezvous store, as on a cluster where the endpoint is node 0 (on one host
# both agents could: the first to listen does)
wait_listening $port || fail "node 0's torchrun never listened on $port"
node 1 kill -o DataLoader.synthetic_size=4096 --epochs 20
victim=
for _ in $(seq 300); do   # rank 1: the tipc under either torchrun whose environment says RANK=1
    for p in $(pgrep -P "$kill0_pid") $(pgrep -P "$kill1_pid"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx RANK=1 && victim=$p
    done
    [ -n "$victim" ] && grep -q 'Epoch 0, iter: 9\]' kill0.out kill1.out 2>/dev/null && break
    sleep 0.1
done
[ -n "$victim" ] || fail "rank 1 never started"
t0=$(now)
kill -9 "$victim"
wait_rc rc0 "$kill0_pid"; wait_rc rc1 "$kill1_pid"
secs=$(elapsed "$t0")
echo "rank 1 SIGKILLed: torchruns exited $rc0 $rc1 after $secs s"
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] || fail "a torchrun exited 0 after rank 1 was killed: $rc0 $rc1"
awk -v s="$secs" 'BEGIN { exit !(s < 20) }' || fail "the job took $secs s to end"
grep -hq 'rank 1 (node [01], pid '"$victim"' on .*) stopped sending heartbeats' kill0.out kill1.out ||
    fail "rank 0 does not name rank 1: $(grep -h 'error' kill0.out kill1.out | head -5)"

# 4. a `tipc run` config whose training line names torchrun, as Paddle's configs name
#    paddle.distributed.launch: the status line shows the command as run, and the ranks are this tipc
#    (a different `tipc` first on PATH is not the one torchrun starts)
. "$ROOT/tests/e2e/lib.sh"   # tiny_recipe
mkdir -p cfg fake && ln -s "$ROOT/images" images && tiny_recipe 1 >cfg/tiny.yaml || fail "cfg"
printf '#!/bin/sh\necho "the wrong tipc"; exit 99\n' >fake/tipc && chmod +x fake/tipc
sed -e 's|^gpu_list:.*|gpu_list:-1|' -e 's|^use-gpu:.*|use-gpu:False|' -e 's|^--epochs:.*|--epochs:lite_train_lite_infer=1|' \
    -e 's|^norm_train:train |norm_train:torchrun --standalone --nproc_per_node=2 --no-python tipc train |' \
    -e 's|configs/mobilenet_v3_small/mobilenet_v3_small.yaml|cfg/tiny.yaml|' -e '/^inference:/,$ s|^--use-gpu:.*|--use-gpu:False|' \
    "$ROOT/configs/mobilenet_v3_small/train_infer.txt" >cfg/torchrun.txt
PATH=$W/fake:$LAUNCHERS_VENV/bin:$PATH "$T" run cfg/torchrun.txt lite_train_lite_infer --no-prepare >run.out 2>&1 ||
    fail "tipc run with torchrun on the training line: exit $?: $(tail -n 12 run.out)"
grep -q '^Run successfully with command - mobilenet_v3_small - torchrun --standalone --nproc_per_node=2 --no-python tipc train -c cfg/tiny.yaml --output-dir=' run.out ||
    fail "the status line does not show torchrun's command: $(grep command run.out | head -2)"
grep -q '^4 passed, 0 failed' run.out || fail "not every stage passed"
grep -q '^data parallel: 2 ranks, started by torchrun' logs/mobilenet_v3_small/lite_train_lite_infer/tipc/01_train.log ||
    fail "the training was not torchrun's 2 ranks"
sed -i 's|^gpu_list:.*|gpu_list:0,1|' cfg/torchrun.txt   # tipc launch's devices and torchrun's ranks at once
"$T" run cfg/torchrun.txt lite_train_lite_infer --no-prepare >run.out 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "cfg/torchrun.txt:14: the training line starts its ranks with torchrun itself, but gpu_list item '0,1'" run.out ||
    fail "a named launcher with gpu_list 0,1: exit $rc: $(head -n 3 run.out)"
