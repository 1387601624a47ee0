#!/usr/bin/env bash
# tipc launch on one node: env of each rank, per-rank logs, [node:rank] console prefix (rank 0 only
# by default), a failing rank's exit code, tipc subcommands as CMD, usage and node-finding errors.
. "$(dirname "$0")/lib_launch.sh"

# env and logs (an outer job's MASTER_ADDR/MASTER_PORT must not leak into a one-node job)
MASTER_ADDR=192.0.2.1 MASTER_PORT=1 "$TIPC" launch --job_id="$JOB" --gpus=3,5 --log_dir=logs bash -c \
  'echo "R=$RANK L=$LOCAL_RANK W=$WORLD_SIZE LW=$LOCAL_WORLD_SIZE P=$PADDLE_TRAINER_ID/$PADDLE_TRAINERS_NUM G=$FLAGS_selected_gpus M=$MASTER_ADDR:$MASTER_PORT T=${#TIPC_JOB_TOKEN} E=$PADDLE_TRAINER_ENDPOINTS"' \
  >out 2>err || fail "2 ranks, exit $?"
grep -q '^R=0 L=0 W=2 LW=2 P=0/2 G=3 M=127.0.0.1:[0-9]* T=64 E=127.0.0.1:6170,127.0.0.1:6171$' logs/workerlog.0 || fail "rank 0 env: $(cat logs/workerlog.0)"
grep -q '^R=1 L=1 W=2 LW=2 P=1/2 G=5 ' logs/workerlog.1 || fail "rank 1 env: $(cat logs/workerlog.1)"
grep -q '^\[0:0\] R=0 ' out || fail "console has no [0:0] line: $(cat out)"
grep -q 'R=1' out && fail "rank 1 echoed without --echo=all"
"$TIPC" launch --job_id="$JOB" --nproc_per_node=3 --echo=all --log_dir=deep/er/logs bash -c 'echo "hello $RANK"' >out 2>err || fail "echo all"
[ -s deep/er/logs/workerlog.2 ] || fail "nested --log_dir not created"
[ "$(grep -c '^\[0:[0-2]\] hello [0-2]$' out)" = 3 ] || fail "--echo=all: $(cat out)"

# line atomicity: 3 ranks print 2000 long lines each at once; every console line is whole
"$TIPC" launch --job_id="$JOB" --nproc_per_node=3 --echo=all --log_dir=logs bash -c \
  'l=$(printf "%0300d" 0); for i in $(seq 2000); do echo "r$RANK $l end"; done' >out 2>err || fail "flood"
[ "$(grep -c '^\[0:\([0-2]\)\] r\1 0\{300\} end$' out)" = 6000 ] || fail "interleaved console lines"

# a log that cannot be written (file size limit): said once, the rank goes on, the console keeps it all
(ulimit -f 2; exec "$TIPC" launch --job_id="$JOB" --log_dir=lf bash -c \
  'for i in $(seq 300); do echo "line $i of a rank whose log is full"; done') 2>err | cat >out   # console: a pipe, no limit
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "full log: exit $rc: $(cat err)"
[ "$(grep -c 'cannot write lf/workerlog.0: File too large' err)" = 1 ] || fail "full log not reported once: $(cat err)"
grep -q '^\[0:0\] line 300 of a rank' out || fail "console lost lines after the log filled"

# the first failing rank's code; the others are stopped, not waited for
t0=$(now)
rc=0; "$TIPC" launch --job_id="$JOB" --nproc_per_node=3 --log_dir=logs bash -c '[ $RANK = 2 ] && exit 7; sleep 60' >out 2>err || rc=$?
[ "$rc" = 7 ] || fail "failing rank: exit $rc, want 7"
grep -q 'rank 2 (node 0, 127.0.0.1, local rank 2, pid [0-9]*) exited with code 7' err || fail "no rank/node in: $(cat err)"
[ "$(elapsed "$t0" | cut -d. -f1)" -lt 10 ] || fail "stopping took $(elapsed "$t0") s"
[ -z "$(job_procs "$JOB")" ] || fail "ranks survived: $(job_procs "$JOB")"

# a rank killed by a signal: 128+N
rc=0; "$TIPC" launch --job_id="$JOB" --nproc_per_node=2 --log_dir=logs bash -c '[ $RANK = 1 ] && kill -9 $$; sleep 60' >out 2>err || rc=$?
[ "$rc" = 137 ] || fail "killed rank: exit $rc, want 137"
grep -q 'rank 1 .* was killed by signal 9' err || fail "signal not named: $(cat err)"

# a tipc subcommand runs this tipc binary
"$TIPC" launch --job_id="$JOB" --nproc_per_node=2 --echo=all --log_dir=logs version >out 2>err || fail "launch version: $(cat err)"
[ "$(grep -c '^\[0:[01]\] tipc ' out)" = 2 ] || fail "tipc version not run per rank: $(cat out)"

# errors: no such program, flag conflicts, unknown flag, this host not in --ips, matched twice
rc=0; "$TIPC" launch --job_id="$JOB" --log_dir=logs no-such-program-tipc >out 2>err || rc=$?
[ "$rc" = 127 ] && grep -q "cannot run 'no-such-program-tipc'" err || fail "missing program: rc=$rc $(cat err)"
rc=0; "$TIPC" launch --gpus=0,1 --nproc_per_node=3 true 2>err || rc=$?
[ "$rc" = 2 ] && grep -q 'nproc_per_node=3 but --gpus lists 2' err || fail "conflict: rc=$rc $(cat err)"
rc=0; "$TIPC" launch --bogus=1 true 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "unknown option '--bogus'" err || fail "unknown flag: rc=$rc"
rc=0; "$TIPC" launch --ips=192.0.2.10,192.0.2.11 true 2>err || rc=$?
[ "$rc" = 4 ] && grep -q "none of this host's addresses (.*127.0.0.1.*) is in --ips=192.0.2.10,192.0.2.11" err || fail "not in ips: rc=$rc $(cat err)"
rc=0; "$TIPC" launch --ips=127.0.0.1,localhost true 2>err || rc=$?
[ "$rc" = 4 ] && grep -q "match more than one entry" err || fail "matched twice: rc=$rc $(cat err)"
rc=0; "$TIPC" launch --ips=10.0.0.1,10.0.0.2 --node_ip=10.0.0.3 true 2>err || rc=$?
[ "$rc" = 4 ] && grep -q "'10.0.0.3' is not in --ips" err || fail "node_ip: rc=$rc $(cat err)"
rc=0; "$TIPC" launch --nnodes=2 --node_rank=1 --master=no-such-host.invalid:6170 true 2>err || rc=$?
[ "$rc" = 4 ] && grep -q "cannot resolve master host 'no-such-host.invalid'" err || fail "bad master: rc=$rc $(cat err)"
# scheduler env: Slurm's node id picks the entry
rc=0; SLURM_NODEID=1 "$TIPC" launch --ips=127.0.0.1,127.0.0.2 --master=127.0.0.1:1 --join_timeout=1 true 2>err || rc=$?
grep -q 'node 1' err || fail "SLURM_NODEID ignored: $(cat err)"
echo "ok"

# torchrun's --nproc_per_node=cpu|auto|gpu and Paddle's --log_overwrite, --run_mode
ncpu=$(getconf _NPROCESSORS_ONLN)
"$TIPC" launch --job_id="$JOB" --nproc_per_node=cpu --log_dir=lc bash -c 'echo "W=$WORLD_SIZE"' >out 2>err || fail "cpu: $(cat err)"
grep -q "^\[0:0\] W=$ncpu$" out || fail "--nproc_per_node=cpu is not one rank per CPU ($ncpu): $(cat out err)"
"$TIPC" launch --job_id="$JOB" --nproc_per_node=auto --log_dir=lc bash -c 'echo "W=$WORLD_SIZE"' >out 2>err || fail "auto: $(cat err)"
grep -q '^\[0:0\] W=[1-9][0-9]*$' out || fail "--nproc_per_node=auto: $(cat out err)"
if ! nvidia-smi -L >/dev/null 2>&1; then
    "$TIPC" launch --nproc_per_node=gpu true >out 2>err && fail "--nproc_per_node=gpu without a GPU ran"
    grep -q 'nproc_per_node=gpu but this tipc sees no CUDA device' err || fail "gpu without a GPU: $(cat err)"
    grep -q "^\[0:0\] W=$ncpu$" <("$TIPC" launch --job_id="$JOB" --nproc_per_node=auto --log_dir=lc bash -c 'echo "W=$WORLD_SIZE"' 2>&1) ||
        fail "--nproc_per_node=auto without a GPU is not one rank per CPU"
fi
"$TIPC" launch --nproc_per_node=zero true >out 2>err; rc=$?
[ "$rc" = 2 ] && grep -q "nproc_per_node 'zero': want 1\.\.[0-9]*, auto, cpu or gpu" err || fail "bad --nproc_per_node: $rc $(cat err)"
for i in 1 2; do
    "$TIPC" launch --job_id="$JOB" --log_overwrite=False --run_mode=collective --log_dir=la bash -c "echo run $i" >/dev/null 2>err ||
        fail "--log_overwrite=False: $(cat err)"
done
[ "$(cat la/workerlog.0)" = "$(printf 'run 1\nrun 2')" ] || fail "--log_overwrite=False does not append: $(cat la/workerlog.0)"
"$TIPC" launch --job_id="$JOB" --log_overwrite True --log_dir=la bash -c "echo run 3" >/dev/null 2>err || fail "--log_overwrite True"
[ "$(cat la/workerlog.0)" = "run 3" ] || fail "--log_overwrite True does not replace: $(cat la/workerlog.0)"
"$TIPC" launch --run_mode=ps true >out 2>err; rc=$?
[ "$rc" = 2 ] && grep -q 'run_mode=ps: tipc launch runs collective jobs only' err || fail "--run_mode=ps: $rc $(cat err)"
