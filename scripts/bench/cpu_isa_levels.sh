#!/usr/bin/env bash
# cpu_isa_levels.sh: the engine on each CPU kernel level this CPU runs (TIPC_CPU_ISA=v2|v3|v4,
# engine/ops/cpu_isa.h; a forced level also runs OpenBLAS's kernels of that level), one row per
# level, side by side with PyTorch CPU eager (torchvision mobilenet_v3_small) and ONNX Runtime (our
# exported ONNX), same threads, same run:
#   train: bs=$BS at $RES px, momentum SGD step, img/s     (targets on v3: tipc >= 2x PyTorch)
#   infer: bs=1 latency in ms                              (targets on v3: tipc <= 0.8x ONNX Runtime)
# PyTorch runs at the row's level too (ATEN_CPU_CAPABILITY and ONEDNN_MAX_CPU_ISA: v2 -> default /
# SSE41, v3 -> avx2 / AVX2, v4 -> its own best), so a forced v3 row compares what an AVX2 machine
# would run; ONNX Runtime has no such switch and runs its best kernels in every row.
# The box is shared and its load swings: ROUNDS rounds, every level and peer once per round
# (interleaved), each figure the median of its timed steps, the table the median over rounds.
# Env: PYTHON (needs torch+torchvision; onnxruntime optional), THREADS (all cores), BS (32), RES (224),
# STEPS (8), ISTEPS (200), ROUNDS (3), LEVELS (every level `tipc version` says this CPU runs),
# BEFORE (another tipc binary, e.g. an older commit's build: its rows, LEVEL-before, are timed in the
# same rounds against the same peer figures, so a change is measured side by side).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
BEFORE=${BEFORE:-}
PY=${PYTHON:-python3}
TH=${THREADS:-$(nproc)}
BS=${BS:-32}; RES=${RES:-224}; STEPS=${STEPS:-8}; ISTEPS=${ISTEPS:-200}; ROUNDS=${ROUNDS:-3}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -x "$T" ] || { echo "build first: make"; exit 1; }
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "cpu_isa_levels: BEFORE=$BEFORE is not an executable"; exit 1; }
LEVELS=${LEVELS:-$("$T" version | sed -n 's/^cpu levels: .*this CPU runs //p')}
[ -n "$LEVELS" ] || { echo "cpu_isa_levels: no levels from '$T version'"; exit 1; }
have_torch=0; "$PY" -c 'import torch, torchvision' 2>/dev/null && have_torch=1
have_ort=0; "$PY" -c 'import onnxruntime' 2>/dev/null && have_ort=1
if [ $have_ort = 1 ]; then
    "$T" train --data-path "$W/none" -o DataLoader.synthetic_size=2 -o Arch.image_size="$RES" --batch-size 2 --epochs 1 \
        -o Global.eval_during_train=false --output-dir "$W/ck" --threads "$TH" >/dev/null 2>&1 &&
    "$T" export --pretrained "$W/ck/latest.ckpt" --save-inference-dir "$W/inf" >/dev/null || have_ort=0
fi
tipc_train() { TIPC_CPU_ISA=$2 "$1" bench train --batch-size "$BS" --resolution "$RES" --steps "$STEPS" --warmup 2 --threads "$TH" | awk '/median img\/s/ {print $NF}'; }
tipc_infer() { TIPC_CPU_ISA=$2 "$1" bench infer --batch-size 1 --resolution "$RES" --steps "$ISTEPS" --warmup 10 --threads "$TH" | awk '/median ms\/step/ {print $(NF-3)}'; }
torch_env() { case $1 in v2) echo "ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=SSE41" ;;
                         v3) echo "ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2" ;; esac; }
echo "# cpu_isa_levels: $(date -u '+%Y-%m-%d %H:%M UTC'), tipc $T${BEFORE:+ (before: $BEFORE)}, $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), threads=$TH, levels: $LEVELS, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    for l in $LEVELS; do
        # BEFORE first in even rounds, after in odd ones: neither binary always runs second
        if [ -n "$BEFORE" ] && [ $((r % 2)) = 0 ]; then bt=$(tipc_train "$BEFORE" "$l"); bi=$(tipc_infer "$BEFORE" "$l"); fi
        tt=$(tipc_train "$T" "$l"); ti=$(tipc_infer "$T" "$l")
        if [ -n "$BEFORE" ] && [ $((r % 2)) = 1 ]; then bt=$(tipc_train "$BEFORE" "$l"); bi=$(tipc_infer "$BEFORE" "$l"); fi
        pt=n/a pi=n/a oi=n/a
        if [ $have_torch = 1 ]; then
            # shellcheck disable=SC2046
            pt=$(env $(torch_env "$l") "$PY" "$ROOT/scripts/bench/torch_mnv3.py" train "$TH" "$BS" "$RES" "$STEPS")
            # shellcheck disable=SC2046
            pi=$(env $(torch_env "$l") "$PY" "$ROOT/scripts/bench/torch_mnv3.py" infer "$TH" "$RES" "$ISTEPS")
        fi
        if [ $have_ort = 1 ]; then
            oi=$(TIPC_ONNX_THREADS="$TH" TIPC_ONNX_BENCH="$ISTEPS" "$PY" "$ROOT/scripts/check_onnx.py" "$T" "$W/inf" 1 | awk '/latency/ {print $(NF-1)}')
        fi
        echo "$l $tt $pt $ti $pi $oi" >>"$W/rows"
        echo "# round $r $l: train img/s tipc $tt pytorch $pt; infer ms tipc $ti pytorch $pi onnxrt $oi; load $(cut -d' ' -f1 /proc/loadavg)"
        if [ -n "$BEFORE" ]; then
            echo "$l-before $bt $pt $bi $pi $oi" >>"$W/rows"
            echo "# round $r $l-before: train img/s tipc $bt; infer ms tipc $bi"
        fi
    done
done
[ $have_torch = 1 ] || echo "SKIP: PyTorch side: torch/torchvision not installed for $PY"
[ $have_ort = 1 ] || echo "SKIP: ONNX Runtime side: onnxruntime not installed for $PY (or the export failed)"
printf '%-9s %10s %10s %8s %10s %10s %10s %9s %9s\n' "# level" "train" "pytorch" "ratio" "infer ms" "pytorch" "onnxrt" "/pytorch" "/onnxrt"
for lv in $LEVELS; do for l in $lv ${BEFORE:+$lv-before}; do
    awk -v l="$l" '
    function med(col,   n, i, j, t, v) {
        n = 0
        for (i = 1; i <= NR_; i++) if (lv[i] == l && f[i, col] != "n/a" && f[i, col] != "") v[++n] = f[i, col] + 0
        if (n == 0) return "n/a"
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function ratio(a, b) { return (a == "n/a" || b == "n/a" || b == 0) ? "n/a" : sprintf("%.2f", a / b) }
    { NR_ = NR; lv[NR] = $1; for (k = 2; k <= 6; k++) f[NR, k] = $k }
    END {
        tt = med(2); pt = med(3); ti = med(4); pi = med(5); oi = med(6)
        printf "%-9s %10s %10s %8s %10s %10s %10s %9s %9s\n", l, tt, pt, ratio(tt, pt), ti, pi, oi, ratio(ti, pi), ratio(ti, oi)
    }' "$W/rows"
done; done
echo "# medians of $ROUNDS rounds; train in img/s (ratio: tipc/pytorch, higher is better), infer in ms (ratios: lower is better)"
echo "# targets: v3 train ratio >= 2, v3 infer /onnxrt <= 0.8; v4 no slower than before (1.9-2.0x, ~0.9x)"
