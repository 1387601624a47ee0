#!/usr/bin/env bash
# Schedulers place the nodes (docs/distributed.md "Schedulers"), with real processes on loopback:
#  1. the Slurm example, `srun tipc run train_fleet_infer.txt lite_train_lite_infer`, as srun would
#     start it on two nodes: no --node_ip, no --master; SLURM_JOB_NODELIST=127.0.0.[1-2],
#     SLURM_NNODES, SLURM_NODEID, SLURM_JOB_ID place each node (both loopback addresses are this
#     host's, so only Slurm's variables can tell the nodes apart): trains 2x2 ranks, every stage of
#     both nodes passes, and each says which variable placed it;
#  2. the Kubernetes example (an Indexed Job / PyTorchJob's PET_* variables): two `tipc launch`
#     placed only by PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT train together;
#  3. a scheduler saying 2 nodes to a single-node config or flag: exit 2, nothing run.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_SCHEDULER=auto TIPC_JOB_TOKEN=sched TIPC_JOB_ID=$JOB
T=${TIPC_REL:-$TIPC}
[ -f "$ROOT/$FLEET_CFG" ] || { echo "SKIP $FLEET_CFG not in this tree"; exit 77; }

# 1. Slurm: a job id whose port (15000 + id % 10000) is free now
port=$(python3 -c 'import random, socket
for _ in range(200):
    p = random.randrange(15000, 25000); s = socket.socket()
    try: s.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass
    finally: s.close()')
[ -n "$port" ] || { echo "SKIP no free port in 15000-24999"; exit 77; }
jobid=$((port - 15000 + 70000))
fleet_dir s0; fleet_dir s1
slurm_node() {   # NAME NODEID: what srun starts on node NODEID
    (cd "$W/$1" && SLURM_JOB_ID=$jobid SLURM_JOB_NODELIST='127.0.0.[1-2]' SLURM_NNODES=2 SLURM_NODEID=$2 \
        SLURM_PROCID=$2 SLURM_LOCALID=0 SLURM_NTASKS=2 exec "$T" run $FLEET_CFG lite_train_lite_infer) >"$W/$1.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${1}_pid=$!"
}
t0=$(now)
slurm_node s1 1
slurm_node s0 0
wait_rc rc0 "$s0_pid"; wait_rc rc1 "$s1_pid"
echo "srun tipc run (2 nodes): $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "srun tipc run exit codes $rc0 $rc1"
for n in 0 1; do
    o=s$n.out
    grep -q '^4 passed, 0 failed' $o || fail "node $n: $(tail -n 5 $o)"
    grep -q "^tipc: placed by Slurm: node $n (SLURM_NODEID) of 2 nodes (SLURM_NNODES); nodes 127.0.0.1,127.0.0.2 (SLURM_JOB_NODELIST)" $o \
        || fail "node $n does not say what placed it"
    grep -q "^launch: placed by Slurm: node $n (SLURM_NODEID) of 2 nodes .* port $port (SLURM_JOB_ID)" $o || fail "node $n launch line"
    [ -s "$W/s$n/$FLEET_MODEL/inference.tipc" ] || fail "node $n exported no model"
done
grep -q 'data parallel: 4 ranks (gloo over [a-z ]*)' s0.out || fail "not 4-rank data parallel"
cmp -s "$W/s0/$FLEET_MODEL/inference.tipc" "$W/s1/$FLEET_MODEL/inference.tipc" || fail "the nodes' models differ"

# 2. Kubernetes (docs/distributed.md's manifest): PET_* only
port=$(free_port)
TINY="--data-path none -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32 --batch-size 4 --threads 1 --epochs 1 -o DataLoader.synthetic_size=16"
k8s_pod() {   # NAME INDEX
    (cd "$W" && PET_NNODES=2 PET_NODE_RANK=$2 PET_MASTER_ADDR=127.0.0.1 PET_MASTER_PORT=$port PET_NPROC_PER_NODE=2 \
        exec "$T" launch --log_dir=k train $TINY --output-dir k$2) >"$W/$1.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${1}_pid=$!"
}
k8s_pod p1 1
k8s_pod p0 0
wait_rc rc0 "$p0_pid"; wait_rc rc1 "$p1_pid"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "PET_* launch exit codes $rc0 $rc1"
grep -q '^\[0:0\] data parallel: 4 ranks (gloo over [a-z ]*)' p0.out || fail "PET_* job is not 4 ranks: $(cat p0.out)"
grep -q "^launch: placed by torchrun: node 1 (PET_NODE_RANK) of 2 nodes (PET_NNODES); master 127.0.0.1 (PET_MASTER_ADDR) port $port (PET_MASTER_PORT); 2 ranks per node (PET_NPROC_PER_NODE)" p1.out \
    || fail "node 1 does not say what placed it: $(head -n 3 p1.out)"
[ -s k0/latest.ckpt ] && [ -s k1/latest.ckpt ] || fail "no checkpoints"

# 3. two nodes said, one node configured: an error before anything runs
mkdir -p "$W/e" && cd "$W/e" || fail cd
cp -r "$ROOT/configs" "$ROOT/images" .
SLURM_JOB_NODELIST='n[1-2]' SLURM_NNODES=2 SLURM_NODEID=1 "$T" run configs/mobilenet_v3_small/train_infer.txt lite_train_lite_infer >out 2>err
rc=$?
[ "$rc" = 2 ] || fail "single-node config under a 2-node Slurm job: exit $rc, want 2: $(cat err)"
grep -q "Slurm runs this job on 2 nodes (SLURM_NNODES) but the config's gpu_list trains on 1 (one node)" err || fail "message: $(cat err)"
grep -q 'hint: .*TIPC_SCHEDULER=none' err || fail "no way out named"
[ ! -e logs ] || fail "something ran: $(ls -R logs | head)"
SLURM_JOB_NODELIST=n1 SLURM_NNODES=1 SLURM_NODEID=0 "$T" run $FLEET_CFG lite_train_lite_infer >out 2>err   # 1 node given, 2 wanted
rc=$?
[ "$rc" = 2 ] || fail "2-node config in a 1-node Slurm job: exit $rc, want 2: $(cat err)"
grep -q "Slurm runs this job on 1 node (SLURM_NNODES) but the config's gpu_list trains on 2: every node would run a job waiting for nodes that never come" err ||
    fail "1-node message: $(cat err)"
grep -q 'hint: ask the scheduler for 2 nodes (sbatch --nodes=2)' err || fail "1-node hint: $(cat err)"
[ ! -e logs ] || fail "something ran in a 1-node job: $(ls -R logs | head)"
PADDLE_TRAINERS=127.0.0.1,127.0.0.2 PADDLE_TRAINER_ID=0 "$T" launch --nnodes=1 true >out 2>err
rc=$?
[ "$rc" = 2 ] || fail "--nnodes=1 under PADDLE_TRAINERS with 2 nodes: exit $rc: $(cat err)"
grep -q "Paddle runs this job on 2 nodes (PADDLE_TRAINERS) but --nnodes says 1" err || fail "paddle message: $(cat err)"
TIPC_SCHEDULER=none SLURM_NNODES=2 "$T" launch --nnodes=1 true || fail "TIPC_SCHEDULER=none does not ignore Slurm"
echo ok
