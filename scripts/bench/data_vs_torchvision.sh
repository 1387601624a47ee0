#!/usr/bin/env bash
# data_vs_torchvision.sh: decoded + augmented images per second per core of tipc's input pipeline
# (engine/data: JPEG decode of the crop window + RandomResizedCrop(224) + flip, uint8 HWC) against
# torchvision's transforms on PIL (RandomResizedCrop(224) + RandomHorizontalFlip + PILToTensor)
# over the same JPEG files, one thread each, alternating rounds in the same run; prints the
# medians and their ratio. Goal: ratio >= 2.
#   scripts/bench/data_vs_torchvision.sh          (ROUNDS=5, BENCH_PYTHON=python with torch)
# Datasets: the synthetic default (300 images, ImageNet-like 500x375 sizes) and, when present,
# the original TIPC lite data (../shared/data/lite_data.tar: 16 real ImageNet JPEGs).
# Installs torch, torchvision and pillow into build/bench-venv with pip when no python has them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TIPC=${TIPC:-$ROOT/bin/tipc}
ROUNDS=${ROUNDS:-5}
[ -x "$TIPC" ] || make -j"$(nproc)" bin/tipc >/dev/null

has_tv() { "$1" -c "import torch, torchvision, PIL" 2>/dev/null; }
PY=${BENCH_PYTHON:-}
if [ -z "$PY" ]; then
    for c in python3 "$ROOT/build/bench-venv/bin/python"; do
        if command -v "$c" >/dev/null && has_tv "$c"; then PY=$c; break; fi
    done
fi
if [ -z "$PY" ]; then
    echo "# installing torch torchvision pillow into build/bench-venv (pip)"
    python3 -m venv "$ROOT/build/bench-venv"
    "$ROOT/build/bench-venv/bin/pip" install -q torch torchvision pillow
    PY=$ROOT/build/bench-venv/bin/python
fi

W=$ROOT/build/bench/data
mkdir -p "$W"
SYN=$W/synthetic-30-10
[ -f "$SYN/train_list.txt" ] || "$TIPC" prepare --synthetic "$SYN" --train-per-class 30 --val-per-class 10 >/dev/null
# name:dir:batch:steps:images:transforms (tipc decodes steps*batch images, torchvision `images`)
sets=("synthetic:$SYN:64:10:600:train" "synthetic:$SYN:50:12:600:eval")
for tar in ../shared/data/lite_data.tar ../../shared/data/lite_data.tar; do
    if [ -f "$tar" ]; then
        [ -d "$W/lite_data" ] || tar -C "$W" -xf "$tar"
        sets+=("lite_data:$W/lite_data:16:40:640:train")
        break
    fi
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
rate() { sed -n 's/.*: \([0-9.]*\) img\/s.*/\1/p' | head -1; }

printf '# data pipeline at 224 px (train: RandomResizedCrop + flip; eval: Resize(256) + CenterCrop(224)),\n'
printf '# one thread each, median of %d alternating rounds\n' "$ROUNDS"
printf '# %s, %s cores, torch %s, torchvision %s, pillow %s\n' "$(date -u +%F)" "$(nproc)" \
    "$("$PY" -c 'import torch; print(torch.__version__)')" "$("$PY" -c 'import torchvision; print(torchvision.__version__)')" \
    "$("$PY" -c 'import PIL; print(PIL.__version__)')"
printf '%-10s %-6s %7s %16s %20s %7s %18s\n' dataset split images "tipc img/s/core" "torchvision img/s/core" ratio "tipc all cores"
for s in "${sets[@]}"; do
    IFS=: read -r name dir batch steps n mode <<<"$s"
    flag=() split=train
    [ "$mode" = eval ] && flag=(--eval) && split=val
    ours=() theirs=()
    coproc PEER { "$PY" "$ROOT/scripts/bench/data_vs_torchvision.py" "$dir" "$n" "$mode" --serve; }
    read -r ready <&"${PEER[0]}"
    [ "$ready" = ready ] || { echo "data_vs_torchvision.py did not start" >&2; exit 1; }
    for _ in $(seq "$ROUNDS"); do
        ours+=("$("$TIPC" prepare --bench-loader "$dir" --threads 1 --batch-size "$batch" --steps "$steps" "${flag[@]}" | rate)")
        echo go >&"${PEER[1]}"
        read -r line <&"${PEER[0]}"
        theirs+=("$(rate <<<"$line")")
    done
    exec {PEER[1]}>&-
    wait "$PEER_PID" 2>/dev/null || true
    all=$("$TIPC" prepare --bench-loader "$dir" --threads 0 --batch-size "$batch" --steps "$steps" "${flag[@]}" | rate)
    o=$(printf '%s\n' "${ours[@]}" | median)
    t=$(printf '%s\n' "${theirs[@]}" | median)
    count=$(find "$dir/$split" -iname '*.jp*g' | wc -l)
    printf '%-10s %-6s %7d %16.1f %20.1f %6.2fx %18.1f\n' "$name" "$mode" "$count" "$o" "$t" "$(echo "$o / $t" | bc -l)" "$all"
done
