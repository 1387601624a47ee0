#!/usr/bin/env bash
# Real Slurm (tests/e2e/lib_slurm.sh: munge, slurmctld, two slurmd as nodes n1/n2 on loopback):
#  1. docs/distributed.md's sbatch recipe with srun starting one rank per task
#     (`srun --ntasks-per-node=2 tipc train`): 2 nodes x 2 ranks train as one job through the c10d
#     store rank 0 serves, job COMPLETED 0:0;
#  2. the same with rank 3 killed mid-training: the job FAILED, and the ranks that saw it name rank 3.
. "$(dirname "$0")/lib_slurm.sh"
slurm_enter "$@"
. "$(dirname "$0")/lib_launch.sh"
trap 'cleanup; slurm_down' EXIT
export TIPC_SCHEDULER=auto
T=${TIPC_REL:-$TIPC}
t0=$(now)
slurm_up
echo "slurm up: $(elapsed "$t0") s"
TINY="--data-path none -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32 --batch-size 4 --threads 1 --print-freq 1 --seed 7"

# 1. one rank per task (docs/distributed.md "Slurm, one task per rank")
cat >ranks.sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=2 --output=ranks.log
srun $T train $TINY -o DataLoader.synthetic_size=32 --epochs 2 --output-dir out
EOF
t0=$(now)
id=$(sbatch --parsable ranks.sbatch) || fail "sbatch"
st=$(slurm_job "$id")
echo "srun one task per rank (2 nodes x 2): $st in $(elapsed "$t0") s"
[ "$st" = "COMPLETED 0:0" ] || fail "job $id: $st: $(tail -n 20 ranks.log)"
grep -q "^data parallel: 4 ranks, started by Slurm, c10d store at n1:$((15000 + id % 10000)) (served by rank 0)" ranks.log ||
    fail "the log does not name the launcher and the store: $(grep 'data parallel' ranks.log)"
grep -q '^data parallel: 4 ranks (gloo over tcp)' ranks.log || fail "not a 4-rank job: $(tail -n 5 ranks.log)"
[ -s out/latest.ckpt ] || fail "no checkpoint"

# 2. rank 3 (node n2) killed mid-training
cat >kill.sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=2 --output=kill.log
srun bash -c 'if [ "\$SLURM_PROCID" = 3 ]; then (sleep 6; kill -9 \$\$) & fi; exec $T train $TINY -o DataLoader.synthetic_size=4096 --epochs 20 --output-dir outk'
EOF
t0=$(now)
id=$(sbatch --parsable kill.sbatch) || fail "sbatch"
st=$(slurm_job "$id")
echo "rank 3 killed: $st in $(elapsed "$t0") s"
case "$st" in FAILED*) ;; *) fail "job $id: $st, want FAILED: $(tail -n 20 kill.log)" ;; esac
grep -q 'rank 3 (node 1, pid [0-9]* on [a-z0-9]*, last in .*) stopped sending heartbeats' kill.log ||
    fail "no rank names rank 3: $(grep -i error kill.log | head)"
