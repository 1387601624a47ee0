#!/usr/bin/env bash
# dp_overlap.sh: data-parallel speed on this host's loopback, the gradient allreduce overlapping
# backward side by side with the blocking allreduce in the same run (issue #16 items 1-2).
#   scripts/bench/dp_overlap.sh [pair|main|all]
#   pair (default): 1 rank x 1 thread vs 2 ranks x 1 thread, per-rank batch 32, 224 px, synthetic
#         data: per-rank img/s of each 2-rank variant over the single rank's (target >= 0.95), and
#         the exposed communication share of the step (time waited on communication / training
#         time; target <= 5%)
#   main: the main job's training settings (configs/mobilenet_v3_small: the recipe yaml, 4 ranks x
#         batch 4, 224 px, 1 thread each), overlap vs blocking
# Every figure is the last epoch of a 2-epoch run (the first one warms up), from the ranks'
# metrics (TIPC_METRICS: epoch events' images, seconds, comm_exposed_share, comm_busy_s).
# Env: TIPC (default bin/tipc), STEPS (steps per epoch, default 12), BUCKET_MB (overlap's
# fuse_grad_size_in_MB; default: the recipe's), OUT (work directory, default a temp dir).
# Each configuration runs once: on a shared machine note the load average printed with it.
set -eu
mode=${1:-pair}
case $mode in pair|main|all) ;; *) echo "usage: $0 [pair|main|all]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")/../.." && pwd)
tipc=${TIPC:-$here/bin/tipc}
[ -x "$tipc" ] || { echo "$0: '$tipc' not built; run make" >&2; exit 2; }
steps=${STEPS:-12}
yaml=$here/configs/mobilenet_v3_small/mobilenet_v3_small.yaml
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/dp_overlap.XXXXXX")}
mkdir -p "$out"
export TIPC_JOB_TOKEN=${TIPC_JOB_TOKEN:-dpbench$$}
bucket=()
[ -n "${BUCKET_MB:-}" ] && bucket=(-o "Distributed.fuse_grad_size_in_MB=$BUCKET_MB")

# run NAME WORLD BATCH [train options...]: one 2-epoch training, its metrics in $out/NAME.jsonl
run() {
    local name=$1 world=$2 bs=$3
    shift 3
    local common=(-c "$yaml" --data-path none -o "DataLoader.synthetic_size=$((steps * bs * world))"
                  -o Global.eval_during_train=false --epochs 2 --batch-size "$bs" --threads 1 --print-freq 1000
                  --output-dir "$out/$name")
    rm -f "$out/$name.jsonl"
    printf '# %-28s load average %s\n' "$name" "$(cut -d' ' -f1-3 /proc/loadavg)"
    if [ "$world" = 1 ]; then
        TIPC_METRICS=$out/$name.jsonl "$tipc" train "${common[@]}" "$@" >"$out/$name.log" 2>&1
    else
        TIPC_METRICS=$out/$name.jsonl "$tipc" launch --job_id="dpbench$$$name" --nproc_per_node="$world" \
            --log_dir="$out/$name.ranks" train "${common[@]}" "$@" >"$out/$name.log" 2>&1
    fi || { echo "$0: $name failed; see $out/$name.log" >&2; exit 1; }
}

# report BASE NAME...: per-rank img/s (last epoch, mean over ranks), ratio to BASE, exposed share
report() {
    python3 - "$out" "$@" <<'PY'
import json, sys
out, base, names = sys.argv[1], sys.argv[2], sys.argv[3:]
def last_epoch(name):
    ev = [json.loads(l) for l in open("%s/%s.jsonl" % (out, name))]
    ep = [e for e in ev if e.get("event") == "epoch"]
    last = max(e["epoch"] for e in ep)
    ep = [e for e in ep if e["epoch"] == last]
    world = ep[0].get("world", 1)
    ips = sum(e["images"] / world / e["seconds"] for e in ep) / len(ep)
    exp = sum(e["comm_exposed_share"] for e in ep) / len(ep)
    busy = sum(e["comm_busy_s"] / e["seconds"] for e in ep) / len(ep)
    return world, ips, exp, busy
b = last_epoch(base) if base != "-" else None
print("| run | ranks | per-rank img/s | vs 1 rank | exposed comm (share of step) | allreduce busy (share) |")
print("|---|---|---|---|---|---|")
for n in ([base] if b else []) + names:
    w, ips, exp, busy = last_epoch(n)
    ratio = "%.3f" % (ips / b[1]) if b else "-"
    print("| %s | %d | %.2f | %s | %.1f%% | %.1f%% |" % (n, w, ips, ratio, 100 * exp, 100 * busy))
PY
}

echo "# dp_overlap.sh $mode at $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, STEPS=$steps${BUCKET_MB:+, BUCKET_MB=$BUCKET_MB}"
if [ "$mode" = pair ] || [ "$mode" = all ]; then
    run 1rank 1 32
    run 2ranks_overlap 2 32 "${bucket[@]}"
    run 2ranks_blocking 2 32 -o Distributed.overlap_allreduce=false
    grep -h 'data parallel: ' "$out/2ranks_overlap.log" "$out/2ranks_blocking.log" | sed 's/^/# /'
    report 1rank 2ranks_overlap 2ranks_blocking
fi
if [ "$mode" = main ] || [ "$mode" = all ]; then
    run main_overlap 4 4 "${bucket[@]}"
    run main_blocking 4 4 -o Distributed.overlap_allreduce=false
    grep -h 'data parallel: ' "$out/main_overlap.log" "$out/main_blocking.log" | sed 's/^/# /'
    report - main_overlap main_blocking
fi
echo "# work directory: $out"
