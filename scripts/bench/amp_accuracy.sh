#!/usr/bin/env bash
# amp_accuracy.sh: does mixed precision cost accuracy? The same training (seed, data, schedule) in
# fp32, bf16 and fp16 on a learnable synthetic JPEG dataset (`tipc prepare --synthetic`: CLASSES
# classes, TRAIN/VAL images per class), mobilenet_v3_small width 0.5 at 64 px; prints each final
# top-1 and its gap to fp32 in points (the goal: within 1). Not a test (takes minutes).
# Env: CLASSES (10), TRAIN (40), VAL (30), EPOCHS (8), BS (16), LR (0.05), THREADS (all cores).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
TH=${THREADS:-$(nproc)}
CLASSES=${CLASSES:-10}; TRAIN=${TRAIN:-40}; VAL=${VAL:-30}; EPOCHS=${EPOCHS:-8}; BS=${BS:-16}; LR=${LR:-0.05}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -x "$T" ] || { echo "build first: make"; exit 1; }
echo "# amp_accuracy: $(date -u '+%Y-%m-%d %H:%M UTC'), classes=$CLASSES train/class=$TRAIN val/class=$VAL epochs=$EPOCHS bs=$BS lr=$LR threads=$TH, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$T" prepare --synthetic "$W/data" --classes "$CLASSES" --train-per-class "$TRAIN" --val-per-class "$VAL" --seed 1 >/dev/null ||
    { echo "prepare failed"; exit 1; }
declare -A acc
for p in fp32 bf16 fp16; do
    t0=$(date +%s)
    "$T" train --data-path "$W/data" -o Arch.class_num="$CLASSES" -o Arch.width_mult=0.5 -o Arch.image_size=64 \
        -o DataLoader.resize_size=73 --batch-size "$BS" --epochs "$EPOCHS" --lr "$LR" --threads "$TH" --seed 7 \
        --print-freq 1000 --precision "$p" --output-dir "$W/$p" > "$W/$p.log" 2>&1 || { tail "$W/$p.log"; exit 1; }
    acc[$p]=$(awk '/^ \* Acc@1/ {a=$3} END {print a}' "$W/$p.log")
    printf '%-6s top-1 per epoch: %s  (%ss)  %s\n' "$p" "$(awk '/^ \* Acc@1/ {printf "%s ", $3}' "$W/$p.log")" \
        "$(( $(date +%s) - t0 ))" "$(grep '^AMP:' "$W/$p.log" | tail -n 1)"
done
for p in bf16 fp16; do
    printf '%s final top-1 %s vs fp32 %s: %+.3f points\n' "$p" "${acc[$p]}" "${acc[fp32]}" \
        "$(awk -v a="${acc[$p]}" -v b="${acc[fp32]}" 'BEGIN {print a - b}')"
done
