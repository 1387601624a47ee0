#!/usr/bin/env bash
# dp_overlap.sh: data-parallel speed on this host, the gradient allreduce overlapping backward side
# by side with the blocking allreduce, each through shared memory (the default for ranks on one
# host) and through Gloo's TCP on loopback (--comm-shm off), in the same run (issue #16 items 1-2).
#   scripts/bench/dp_overlap.sh [pair|main|all]
#   pair (default): 1 rank x 1 thread vs 2 ranks x 1 thread, per-rank batch 32, 224 px, synthetic
#         data: per-rank img/s of each 2-rank variant over the single rank's (target >= 0.95), and
#         the exposed communication share of the step (time waited on communication / training
#         time; target <= 5%)
#   main: the main job's training settings (configs/mobilenet_v3_small: the recipe yaml, 4 ranks x
#         batch 4, 224 px, 1 thread each), overlap vs blocking
# Every figure is the last epoch of a 2-epoch run (the first one warms up), from the ranks'
# metrics (TIPC_METRICS: epoch events' images, seconds, comm_exposed_share, comm_busy_s).
# The configurations run in rounds (each round runs each once, in the same order), REPEAT rounds;
# a ratio is taken within its round (against that round's single rank) and the table gives every
# round's figure and their median, since one run on a shared 2-core VM moves by a few percent.
# Env: TIPC (default bin/tipc), STEPS (steps per epoch, default 30), REPEAT (rounds, default 3),
# BUCKET_MB (overlap's fuse_grad_size_in_MB; default: the recipe's), OUT (work directory, default
# a temp dir). The load average is printed with each run.
set -eu
mode=${1:-pair}
case $mode in pair|main|all) ;; *) echo "usage: $0 [pair|main|all]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")/../.." && pwd)
tipc=${TIPC:-$here/bin/tipc}
[ -x "$tipc" ] || { echo "$0: '$tipc' not built; run make" >&2; exit 2; }
steps=${STEPS:-30}
repeat=${REPEAT:-3}
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

# report BASE NAME...: per config, over the rounds: per-rank img/s (last epoch, mean over ranks),
# its ratio to BASE of the same round, exposed share, allreduce busy share; each round, then median
report() {
    python3 - "$out" "$repeat" "$@" <<'PY'
import json, statistics, sys
out, rounds, base, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
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
def cell(vals, fmt):
    return "%s (%s)" % (fmt % statistics.median(vals), ", ".join(fmt % v for v in vals)) if len(vals) > 1 else fmt % vals[0]
print("| run | ranks | per-rank img/s: median (rounds) | vs 1 rank, same round | exposed comm (share of step) | allreduce busy (share) |")
print("|---|---|---|---|---|---|")
for n in ([base] if base != "-" else []) + names:
    runs = [last_epoch("%s.r%d" % (n, r)) for r in range(1, rounds + 1)]
    ratio = "-"
    if base != "-":
        ratio = cell([runs[r][1] / last_epoch("%s.r%d" % (base, r + 1))[1] for r in range(rounds)], "%.3f")
    print("| %s | %d | %s | %s | %s | %s |" % (n, runs[0][0], cell([x[1] for x in runs], "%.2f"), ratio,
          cell([100 * x[2] for x in runs], "%.1f%%"), cell([100 * x[3] for x in runs], "%.1f%%")))
PY
}

echo "# dp_overlap.sh $mode at $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, STEPS=$steps, REPEAT=$repeat${BUCKET_MB:+, BUCKET_MB=$BUCKET_MB}"
tcp=(--comm-shm off)
blocking=(-o Distributed.overlap_allreduce=false)
for r in $(seq "$repeat"); do
    if [ "$mode" = pair ] || [ "$mode" = all ]; then
        run 1rank.r$r 1 32
        run 2ranks_overlap.r$r 2 32 "${bucket[@]}"
        run 2ranks_overlap_tcp.r$r 2 32 "${bucket[@]}" "${tcp[@]}"
        run 2ranks_blocking.r$r 2 32 "${blocking[@]}"
        run 2ranks_blocking_tcp.r$r 2 32 "${blocking[@]}" "${tcp[@]}"
    fi
    if [ "$mode" = main ] || [ "$mode" = all ]; then
        run main_overlap.r$r 4 4 "${bucket[@]}"
        run main_overlap_tcp.r$r 4 4 "${bucket[@]}" "${tcp[@]}"
        run main_blocking.r$r 4 4 "${blocking[@]}"
        run main_blocking_tcp.r$r 4 4 "${blocking[@]}" "${tcp[@]}"
    fi
done
if [ "$mode" = pair ] || [ "$mode" = all ]; then
    grep -h 'data parallel: ' "$out"/2ranks_*.r1.log | grep 'epoch 1' | sed 's/^/# /'
    report 1rank 2ranks_overlap 2ranks_overlap_tcp 2ranks_blocking 2ranks_blocking_tcp
fi
if [ "$mode" = main ] || [ "$mode" = all ]; then
    grep -h 'data parallel: ' "$out"/main_*.r1.log | grep 'epoch 1' | sed 's/^/# /'
    report - main_overlap main_overlap_tcp main_blocking main_blocking_tcp
fi
echo "# work directory: $out"
