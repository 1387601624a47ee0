#!/usr/bin/env bash
# cpu_vs_pytorch.sh: the bundled engine against PyTorch (torchvision mobilenet_v3_small) and
# ONNX Runtime (our exported ONNX) on the same CPU, same batch, same threads, same run.
#   train: bs=$BS at $RES px, momentum SGD step, img/s      (target: tipc >= 1.5x PyTorch)
#   infer: bs=1 latency in ms                               (target: tipc <= 0.5x PyTorch, <= ORT)
# Env: PYTHON (default python3, needs torch+torchvision; onnxruntime optional), THREADS (default
# all cores), BS (32), RES (224), STEPS (10), ISTEPS (50), ROUNDS (3).
# The box is shared and its load swings, so each side runs ROUNDS times, interleaved, every
# figure is the median of its timed steps, and the table shows each side's best round.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
PY=${PYTHON:-python3}
TH=${THREADS:-$(nproc)}
BS=${BS:-32}; RES=${RES:-224}; STEPS=${STEPS:-10}; ISTEPS=${ISTEPS:-50}; ROUNDS=${ROUNDS:-3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -x "$T" ] || { echo "build first: make"; exit 1; }
have_torch=0; "$PY" -c 'import torch, torchvision' 2>/dev/null && have_torch=1
have_ort=0; "$PY" -c 'import onnxruntime' 2>/dev/null && have_ort=1

echo "# cpu_vs_pytorch: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), threads=$TH, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $have_ort = 1 ]; then
    "$T" train --data-path "$W/none" -o DataLoader.synthetic_size=2 -o Arch.image_size="$RES" --batch-size 2 --epochs 1 \
        -o Global.eval_during_train=false --output-dir "$W/ck" --threads "$TH" >/dev/null 2>&1 &&
    "$T" export --pretrained "$W/ck/latest.ckpt" --save-inference-dir "$W/inf" >/dev/null || have_ort=0
fi
best_tt=0 best_ti=1e9 best_pt=0 best_pi=1e9 best_oi=1e9
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }
for r in $(seq "$ROUNDS"); do
    tt=$("$T" bench train --batch-size "$BS" --resolution "$RES" --steps "$STEPS" --warmup 2 --threads "$TH" | awk '/median img\/s/ {print $NF}')
    ti=$("$T" bench infer --batch-size 1 --resolution "$RES" --steps "$ISTEPS" --warmup 5 --threads "$TH" | awk '/median ms\/step/ {print $(NF-3)}')
    pt=n/a pi=n/a oi=n/a
    if [ $have_torch = 1 ]; then
        pt=$("$PY" "$ROOT/scripts/bench/torch_mnv3.py" train "$TH" "$BS" "$RES" "$STEPS")
        pi=$("$PY" "$ROOT/scripts/bench/torch_mnv3.py" infer "$TH" "$RES" "$ISTEPS")
        best_pt=$(max "$best_pt" "$pt"); best_pi=$(min "$best_pi" "$pi")
    fi
    if [ $have_ort = 1 ]; then
        oi=$(TIPC_ONNX_THREADS="$TH" TIPC_ONNX_BENCH="$ISTEPS" "$PY" "$ROOT/scripts/check_onnx.py" "$T" "$W/inf" 1 | awk '/latency/ {print $(NF-1)}')
        best_oi=$(min "$best_oi" "$oi")
    fi
    best_tt=$(max "$best_tt" "$tt"); best_ti=$(min "$best_ti" "$ti")
    echo "# round $r: tipc train $tt img/s, pytorch train $pt img/s; infer ms: tipc $ti, pytorch $pi, onnxrt $oi"
done
[ $have_torch = 1 ] || { best_pt=n/a; best_pi=n/a; echo "SKIP: PyTorch side: torch/torchvision not installed for $PY"; }
[ $have_ort = 1 ] || best_oi=n/a
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b != "n/a" && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
printf '%-30s %10s %10s %10s %14s %12s\n' "# best of $ROUNDS" "tipc" "pytorch" "onnxrt" "tipc/pytorch" "tipc/onnxrt"
printf '%-30s %10s %10s %10s %14s %12s\n' "train bs=$BS ${RES}px img/s" "$best_tt" "$best_pt" "-" "$(ratio "$best_tt" "$best_pt")" "-"
printf '%-30s %10s %10s %10s %14s %12s\n' "infer bs=1 ${RES}px ms" "$best_ti" "$best_pi" "$best_oi" "$(ratio "$best_ti" "$best_pi")" "$(ratio "$best_ti" "$best_oi")"
echo "# targets: train tipc/pytorch >= 1.5; infer tipc/pytorch <= 0.5 and tipc/onnxrt <= 1.0"
