#!/usr/bin/env bash
# Paddle's launcher (`python -m paddle.distributed.launch` from PyPI paddlepaddle, CPU, in the venv
# scripts/install-deps.sh makes) starts tipc's ranks on 2 "nodes" on loopback (docs/distributed.md
# "Paddle"): rank 0 serves a c10d store at PADDLE_MASTER, the model equals `tipc launch`'s within
# test_dp_equivalence.sh's tolerance; rank 1 SIGKILLed mid-training ends both launchers non-zero,
# named by rank 0.
. "$(dirname "$0")/lib_launch.sh"
PY=$LAUNCHERS_VENV/bin/python
"$PY" -c 'import paddle.distributed.launch' 2>/dev/null ||
    { echo "SKIP: no paddlepaddle in $LAUNCHERS_VENV (scripts/install-deps.sh installs it there)"; exit 77; }
T=${TIPC_REL:-$TIPC}
export OMP_NUM_THREADS=1
dp_reference

node() {   # N DIR EXTRA...: node N of Paddle's 2-node job, logs in DIR-logN
    local n=$1 d=$2; shift 2
    "$PY" -m paddle.distributed.launch --nnodes 2 --master 127.0.0.1:$port --rank $n --nproc_per_node 1 --max_restart 0 \
        --log_dir $d-log$n "$T" train $DP_RECIPE "$@" --output-dir $d$n >$d$n.out 2>&1 &
    LAUNCHERS+=($!)
    eval "${d}${n}_pid=$!"
}
port=$(free_port)
t0=$(now)
node 0 two; node 1 two
wait_rc rc0 "$two0_pid"; wait_rc rc1 "$two1_pid"
echo "paddle.distributed.launch, 2 nodes x 1 rank: $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "paddle.distributed.launch --nnodes 2: exit $rc0 $rc1: $(cat two-log*/workerlog.0)"
master=$(grep -h '^PADDLE_MASTER=' two-log0/envlog.0 | cut -d= -f2)
grep -q "^data parallel: 2 ranks, started by Paddle, c10d store at $master (served by rank 0)" two-log0/workerlog.0 ||
    fail "the log does not name Paddle and the store at $master: $(grep 'data parallel' two-log0/workerlog.0)"
same_as_launch two0 "Paddle's launch, 2 nodes"

# rank 1 killed mid-training
port=$(free_port)
LAUNCHERS=()
node 0 kill -o DataLoader.synthetic_size=4096 --epochs 20
node 1 kill -o DataLoader.synthetic_size=4096 --epochs 20
victim=
for _ in $(seq 600); do
    for p in $(pgrep -f "output-dir kill1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx PADDLE_TRAINER_ID=1 && victim=$p
    done
    [ -n "$victim" ] && grep -q 'Epoch 0, iter: 9\]' kill-log0/workerlog.0 2>/dev/null && break
    sleep 0.1
done
[ -n "$victim" ] || fail "rank 1 never started"
t0=$(now)
kill -9 "$victim"
wait_rc rc0 "$kill0_pid"; wait_rc rc1 "$kill1_pid"
secs=$(elapsed "$t0")
echo "rank 1 SIGKILLed: the launchers exited $rc0 $rc1 after $secs s"
[ "$rc0" != 0 ] && [ "$rc1" != 0 ] || fail "a launcher exited 0 after rank 1 was killed: $rc0 $rc1"
awk -v s="$secs" 'BEGIN { exit !(s < 30) }' || fail "the job took $secs s to end"
grep -q "rank 1 (node 1, pid $victim on .*) stopped sending heartbeats" kill-log0/workerlog.0 ||
    fail "rank 0 does not name rank 1: $(grep -h error kill-log0/workerlog.0 | head -5)"
