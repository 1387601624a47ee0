#!/usr/bin/env bash
# amp_cpu.sh: mixed precision training on the CPU, side by side in one run: `tipc bench train` in
# fp32, bf16 and fp16 (engine/ops/precision.h) and PyTorch (torchvision mobilenet_v3_small,
# momentum SGD) in fp32 and under torch.autocast("cpu", dtype=torch.bfloat16), same batch,
# resolution and threads. Prints one table of median img/s; not a test (no thresholds).
# Env: PYTHON (python3, needs torch+torchvision for the PyTorch rows), THREADS (all cores),
# BS (32), RES (224), STEPS (10). The box may be shared: the load average is printed; run it once.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
PY=${PYTHON:-python3}
TH=${THREADS:-$(nproc)}
BS=${BS:-32}; RES=${RES:-224}; STEPS=${STEPS:-10}
[ -x "$T" ] || { echo "build first: make"; exit 1; }
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { case " $flags " in *" $1 "*) echo yes ;; *) echo no ;; esac; }
echo "# amp_cpu: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), avx512_bf16=$(has avx512_bf16) f16c=$(has f16c) amx_bf16=$(has amx_bf16), threads=$TH bs=$BS res=$RES steps=$STEPS, load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in fp32 bf16 fp16; do
    v=$("$T" bench train --batch-size "$BS" --resolution "$RES" --steps "$STEPS" --warmup 2 --threads "$TH" --precision "$p" |
        awk '/median img\/s/ {print $NF}')
    printf '%-34s %10s img/s\n' "tipc bench train $p" "$v"
done
if "$PY" -c 'import torch, torchvision' 2>/dev/null; then
    ver=$("$PY" -c 'import torch; print(torch.__version__)')
    for p in fp32 bf16; do
        v=$("$PY" "$ROOT/scripts/bench/torch_mnv3.py" train "$TH" "$BS" "$RES" "$STEPS" $p)
        printf '%-34s %10s img/s\n' "pytorch $ver $([ $p = bf16 ] && echo 'autocast bf16' || echo fp32)" "$v"
    done
else
    echo "SKIP: PyTorch rows: torch/torchvision not installed for $PY"
fi
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
