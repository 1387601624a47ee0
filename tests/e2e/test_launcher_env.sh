#!/usr/bin/env bash
# Ranks started with a launcher's variables alone, as test_cluster_env.sh does for the schedulers
# (docs/distributed.md "Other launchers"):
#  1. Kubeflow's PyTorchJob (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT per pod): rank 0 serves a
#     c10d store, the model equals `tipc launch`'s; a third process claiming rank 1 again is refused;
#  2. mpirun's (OMPI_COMM_WORLD_*, -x MASTER_PORT): the same model;
#  3. a malformed variable (WORLD_SIZE=abc, RANK=2 of 2, OMPI_COMM_WORLD_SIZE=two) is exit 2 naming
#     it, and nothing trains; ranks that disagree on the world stop before training, naming both;
#  4. a rank whose rank 0 never comes says for whom it waits, and gives up after the timeout;
#  5. a rank stopped (SIGSTOP) mid-training is named by rank 0's watchdog (TIPC_LAUNCH_WATCHDOG=3),
#     which ends the job.
. "$(dirname "$0")/lib_launch.sh"
T=${TIPC_REL:-$TIPC}
export OMP_NUM_THREADS=1
dp_reference

# pod NAME VAR=VALUE... [-- ARGS...]: `tipc train $DP_RECIPE ARGS` with only these launcher variables,
# in the background
pod() {
    local name=$1 vars=() ; shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    (env "${vars[@]}" TIPC_JOB_ID="$JOB" "$T" train $DP_RECIPE "$@" --output-dir "$name" >"$name.out" 2>&1) &
    LAUNCHERS+=($!)
    eval "${name}_pid=$!"
}

# 1. PyTorchJob
port=$(free_port)
pod pj1 RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port
pod pj0 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port
wait_rc rc0 "$pj0_pid"; wait_rc rc1 "$pj1_pid"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "PyTorchJob ranks: exit $rc0 $rc1"
grep -q "^data parallel: 2 ranks, started by env://, c10d store at 127.0.0.1:$port (served by rank 0)" pj0.out ||
    fail "rank 0 does not name the launcher and its store: $(grep 'data parallel' pj0.out)"
same_as_launch pj0 "PyTorchJob's variables"
# a second pod claiming rank 1 of a running job is refused; the job goes on
port=$(free_port)
LONG="-o DataLoader.synthetic_size=4096 --epochs 20"
pod d1 RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port -- $LONG
pod d0 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port -- $LONG
wait_line d0.out 'Epoch 0, iter: 9\]' 60
pod dup RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port -- --comm-timeout 20
wait_rc rcd "$dup_pid"
kill -0 "$d0_pid" 2>/dev/null || fail "the running job ended when a second rank 1 came: $(tail -n 3 d0.out)"
kill "$d0_pid" "$d1_pid" 2>/dev/null
[ "$rcd" = 4 ] || fail "a second rank 1: exit $rcd, want 4: $(tail -n 3 dup.out)"
grep -q 'rank 1 is claimed twice in this job: by pid [0-9]* on .* and by pid [0-9]* on .* (env:// gave out RANK=1 twice)' dup.out ||
    fail "the second rank 1 does not say it is claimed twice: $(tail -n 3 dup.out)"

# 2. mpirun (Open MPI's variables; every rank on this host: the store defaults to 127.0.0.1)
port=$(free_port)
for r in 1 0; do
    pod mpi$r OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=$r OMPI_COMM_WORLD_LOCAL_SIZE=2 \
        MASTER_PORT=$port
done
wait_rc rc0 "$mpi0_pid"; wait_rc rc1 "$mpi1_pid"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "mpirun ranks: exit $rc0 $rc1"
grep -q "^data parallel: 2 ranks, started by mpirun, c10d store at 127.0.0.1:$port (served by rank 0)" mpi0.out ||
    fail "mpirun: $(grep 'data parallel' mpi0.out)"
grep -q '^data parallel: 2 ranks (gloo over shared memory)' mpi0.out || fail "mpirun ranks on one host: not over shared memory"
same_as_launch mpi0 "mpirun's variables"

# 3. malformed variables: exit 2 naming them, nothing trained
bad() {   # WANT VAR=VALUE...
    local want=$1 rc; shift
    env "$@" "$T" train $DP_RECIPE --output-dir bad >bad.out 2>&1
    rc=$?
    [ "$rc" = 2 ] || fail "$*: exit $rc, want 2: $(tail -n 3 bad.out)"
    grep -q "$want" bad.out || fail "$*: the message does not name it: $(cat bad.out)"
    [ ! -e bad ] || fail "$*: something trained"
}
bad "WORLD_SIZE='abc'" WORLD_SIZE=abc
bad "RANK='2'" RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1
bad "OMPI_COMM_WORLD_SIZE='two'" OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=two
bad "MASTER_ADDR is not set" RANK=1 WORLD_SIZE=2
port=$(free_port)
pod w1 RANK=1 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port
pod w0 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port
wait_rc rc0 "$w0_pid"; wait_rc rc1 "$w1_pid"
[ "$rc0" = 4 ] && [ "$rc1" = 4 ] || fail "ranks that disagree on the world: exit $rc0 $rc1"
grep -q 'rank 1 (pid [0-9]* on .*) says the world has 3 ranks, rank 0 says 2 (WORLD_SIZE)' w0.out w1.out ||
    fail "no message names both worlds: $(tail -n 2 w0.out w1.out)"

# 4. rank 0 never comes
port=$(free_port)
t0=$(now)
env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$T" train $DP_RECIPE --comm-timeout 11 --output-dir lone >lone.out 2>&1
rc=$?
echo "a rank without its rank 0: exit $rc after $(elapsed "$t0") s"
[ "$rc" = 4 ] || fail "a rank without rank 0: exit $rc, want 4"
grep -q "waiting for the c10d store at 127.0.0.1:$port (rank 0 serves it), 10 s of 11" lone.out || fail "no waiting line: $(cat lone.out)"
grep -q "nothing listens at 127.0.0.1:$port after 1[1-9] s (env://; rank 0 serves it, from MASTER_ADDR and MASTER_PORT)" lone.out ||
    fail "no final message: $(cat lone.out)"

# 5. rank 1 stopped: rank 0 judges the heartbeats as tipc launch's watchdog does
port=$(free_port)
pod st1 RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port TIPC_LAUNCH_WATCHDOG=3 -- -o DataLoader.synthetic_size=4096 --epochs 20
pod st0 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port TIPC_LAUNCH_WATCHDOG=3 -- -o DataLoader.synthetic_size=4096 --epochs 20
wait_line st0.out 'Epoch 0, iter: 9\]' 60
victim=$(pgrep -f 'output-dir st1$' | head -1)
[ -n "$victim" ] || fail "rank 1's process not found"
t0=$(now)
kill -STOP "$victim"
wait_rc rc0 "$st0_pid"
secs=$(elapsed "$t0")
kill -KILL "$victim"
echo "rank 1 stopped: rank 0 exited $rc0 after $secs s"
[ "$rc0" = 4 ] || fail "rank 0 exit $rc0, want 4: $(tail -n 3 st0.out)"
grep -q "watchdog (3 s): stuck: rank 1 (node 0, pid $victim) sent no heartbeat for [0-9]* s" st0.out ||
    fail "rank 0 does not name the stopped rank: $(grep error st0.out | head -3)"
awk -v s="$secs" 'BEGIN { exit !(s < 10) }' || fail "rank 0 took $secs s"
