#!/usr/bin/env bash
# Real Slurm (tests/e2e/lib_slurm.sh: munge, slurmctld, two slurmd as nodes n1/n2 on loopback):
#  0. docs/distributed.md's recipe `srun tipc run` (one tipc per node) from a working folder outside
#     any checkout, the configs from an installed tree: COMPLETED 0:0, every stage passed on both
#     nodes; a one-node allocation with a two-node config: FAILED, exit 2, nothing ran;
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

# 0. one tipc per node (docs/distributed.md "Slurm: srun tipc run"), PREFIX/share/tipc as installed
PREFIX=$W/prefix
mkdir -p "$PREFIX/share/tipc" "$PREFIX/bin" job && cp -r "$ROOT/configs" "$ROOT/images" "$PREFIX/share/tipc/" &&
    ln -s "$T" "$PREFIX/bin/tipc" || fail "installing into $PREFIX"
cat >job/recipe.sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --output=recipe.log
export PATH=$PREFIX/bin:\$PATH
export TIPC_JOB_TOKEN=\$(head -c16 /dev/urandom | od -An -tx1 | tr -d ' \\n')   # srun passes it to every node
cp -rT $PREFIX/share/tipc tipc-share
cfg=tipc-share/configs/mobilenet_v3_small/train_fleet_infer.txt
sed -i "s/^gpu_list:.*/gpu_list:\$(scontrol show hostnames "\$SLURM_JOB_NODELIST" | paste -sd,);0,1/" "\$cfg"
# one output directory per node on a shared file system (\$SLURM_NODEID is each task's own)
srun bash -c 'exec tipc run "\$0" lite_train_lite_infer --output "out/node\$SLURM_NODEID"' "\$cfg"
EOF
t0=$(now)
id=$(cd job && sbatch --parsable recipe.sbatch) || fail "sbatch"
st=$(slurm_job "$id")
echo "srun tipc run, the documented recipe (2 nodes x 2 ranks): $st in $(elapsed "$t0") s"
[ "$st" = "COMPLETED 0:0" ] || fail "job $id: $st: $(tail -n 30 job/recipe.log)"
[ "$(grep -c '^4 passed, 0 failed' job/recipe.log)" = 2 ] || fail "not every stage passed on both nodes: $(grep passed job/recipe.log)"
for n in 0 1; do
    grep -q "^tipc: placed by Slurm: node $n (SLURM_NODEID) of 2 nodes (SLURM_STEP_NUM_NODES); nodes n1,n2 (SLURM_STEP_NODELIST)" job/recipe.log ||
        fail "node $n does not say Slurm placed it"
    [ -s "job/out/node$n/${FLEET_MODEL##*/}/inference.tipc" ] || fail "node $n exported no model"
done
cmp -s "job/out/node0/${FLEET_MODEL##*/}/inference.tipc" "job/out/node1/${FLEET_MODEL##*/}/inference.tipc" ||
    fail "the nodes' models differ"
grep -q 'data parallel: 4 ranks (gloo over tcp)' job/recipe.log || fail "not 4-rank data parallel"
# the same config, its gpu_list naming n1,n2 whatever the allocation, on one node: refused before anything runs
sed -e 's/^#SBATCH --nodes=2/#SBATCH --nodes=1/' -e 's/--output=recipe.log/--output=one.log/' \
    -e 's/paste -sd,)/paste -sd,),n2/' -e 's| "out/node| "one/node|' job/recipe.sbatch >job/one.sbatch
id=$(cd job && sbatch --parsable one.sbatch) || fail "sbatch"
st=$(slurm_job "$id")
echo "the 2-node config in a 1-node allocation: $st"
[ "$st" = "FAILED 2:0" ] || fail "job $id: $st, want FAILED 2:0: $(tail -n 5 job/one.log)"
grep -q "Slurm runs this job on 1 node (SLURM_STEP_NUM_NODES) but the config.s gpu_list trains on 2" job/one.log || fail "$(cat job/one.log)"
[ ! -e job/one ] || fail "something ran in the one-node job: $(ls -R job/one | head)"

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
