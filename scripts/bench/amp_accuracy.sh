#!/usr/bin/env bash
# amp_accuracy.sh: does mixed precision cost accuracy? The same training (seed, data, schedule) in
# fp32, bf16 and fp16 on a learnable synthetic JPEG dataset (`tipc prepare --synthetic`: CLASSES
# classes, TRAIN/VAL images per class) with the recipe of scripts/accuracy_vs_pytorch.sh
# (mobilenet_v3_small, RES px, batch 8, lr 0.05 cosine, 10 epochs: about 90% top-1 in fp32);
# prints each epoch's top-1 and the final gap to fp32 in points (the goal: within 1). Not a test.
# Env: CLASSES (10), TRAIN (50), VAL (20), EPOCHS (10), BS (8), RES (96), LR (0.05), SEED (1),
# THREADS (all cores).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
TH=${THREADS:-$(nproc)}
CLASSES=${CLASSES:-10}; TRAIN=${TRAIN:-50}; VAL=${VAL:-20}; EPOCHS=${EPOCHS:-10}; BS=${BS:-8}; LR=${LR:-0.05}
RES=${RES:-96}; SEED=${SEED:-1}; RESIZE=$(( (RES * 256 + 112) / 224 ))
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -x "$T" ] || { echo "build first: make"; exit 1; }
echo "# amp_accuracy: $(date -u '+%Y-%m-%d %H:%M UTC'), classes=$CLASSES train/class=$TRAIN val/class=$VAL epochs=$EPOCHS bs=$BS res=$RES lr=$LR seed=$SEED threads=$TH, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$T" prepare --synthetic "$W/data" --classes "$CLASSES" --train-per-class "$TRAIN" --val-per-class "$VAL" --seed "$SEED" >/dev/null ||
    { echo "prepare failed"; exit 1; }
declare -A acc
for p in fp32 bf16 fp16; do
    t0=$(date +%s)
    "$T" train --data-path "$W/data" -o Arch.class_num="$CLASSES" -o Arch.image_size="$RES" \
        -o DataLoader.resize_size="$RESIZE" --batch-size "$BS" --epochs "$EPOCHS" --lr "$LR" --threads "$TH" --seed "$SEED" \
        --print-freq 1000 --precision "$p" --output-dir "$W/$p" > "$W/$p.log" 2>&1 || { tail "$W/$p.log"; exit 1; }
    acc[$p]=$(awk '/^ \* Acc@1/ {a=$3} END {print a}' "$W/$p.log")
    printf '%-6s top-1 per epoch: %s  (%ss)  %s\n' "$p" "$(awk '/^ \* Acc@1/ {printf "%s ", $3}' "$W/$p.log")" \
        "$(( $(date +%s) - t0 ))" "$(grep '^AMP:' "$W/$p.log" | tail -n 1)"
done
for p in bf16 fp16; do
    printf '%s final top-1 %s vs fp32 %s: %+.3f points\n' "$p" "${acc[$p]}" "${acc[fp32]}" \
        "$(awk -v a="${acc[$p]}" -v b="${acc[fp32]}" 'BEGIN {print a - b}')"
done
