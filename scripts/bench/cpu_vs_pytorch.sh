#!/usr/bin/env bash
# cpu_vs_pytorch.sh: the bundled engine against PyTorch (torchvision mobilenet_v3_small) and
# ONNX Runtime (our exported ONNX) on the same CPU, same batch, same threads, same run.
#   train: bs=$BS at $RES px, momentum SGD step, img/s      (target: tipc >= 1.5x PyTorch)
#   infer: bs=1 latency in ms                               (target: tipc <= 0.5x PyTorch, <= ORT)
# Env: PYTHON (default python3, needs torch+torchvision; onnxruntime optional), THREADS (default
# all cores), BS (32), RES (224), STEPS (10), ISTEPS (50). Prints one table with ratios.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
PY=${PYTHON:-python3}
TH=${THREADS:-$(nproc)}
BS=${BS:-32}; RES=${RES:-224}; STEPS=${STEPS:-10}; ISTEPS=${ISTEPS:-50}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -x "$T" ] || { echo "build first: make"; exit 1; }

echo "# cpu_vs_pytorch: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), threads=$TH"
tt=$("$T" bench train --batch-size "$BS" --resolution "$RES" --steps "$STEPS" --warmup 2 --threads "$TH" | awk '/img\/s/ {print $NF}')
ti=$("$T" bench infer --batch-size 1 --resolution "$RES" --steps "$ISTEPS" --warmup 5 --threads "$TH" | awk '/ms\/step/ {print $3}')

if ! "$PY" -c 'import torch, torchvision' 2>/dev/null; then
    printf '%-34s %12s\n' "tipc train bs=$BS ${RES}px img/s" "$tt" "tipc infer bs=1 ms" "$ti"
    echo "SKIP: PyTorch side: torch/torchvision not installed for $PY"; exit 0
fi
read -r pt pi < <("$PY" - "$TH" "$BS" "$RES" "$STEPS" "$ISTEPS" <<'PYEOF'
import sys, time, torch, torchvision
th, bs, res, steps, isteps = map(int, sys.argv[1:])
torch.set_num_threads(th)
torch.manual_seed(0)
m = torchvision.models.mobilenet_v3_small()
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
x = torch.randn(bs, 3, res, res); y = torch.arange(bs) % 1000
lossf = torch.nn.CrossEntropyLoss()
m.train()
for i in range(2 + steps):
    if i == 2: t = time.perf_counter()
    opt.zero_grad(); lossf(m(x), y).backward(); opt.step()
train_ips = bs * steps / (time.perf_counter() - t)
m.eval(); x1 = torch.randn(1, 3, res, res)
with torch.no_grad():
    for i in range(5 + isteps):
        if i == 5: t = time.perf_counter()
        m(x1)
infer_ms = (time.perf_counter() - t) / isteps * 1e3
print(f"{train_ips:.2f} {infer_ms:.3f}")
PYEOF
)
oi="n/a"
if "$PY" -c 'import onnxruntime' 2>/dev/null; then
    "$T" train --data-path "$W/none" -o DataLoader.synthetic_size=2 -o Arch.image_size="$RES" --batch-size 2 --epochs 1 \
        -o Global.eval_during_train=false --output-dir "$W/ck" --threads "$TH" >/dev/null 2>&1 &&
    "$T" export --pretrained "$W/ck/latest.ckpt" --save-inference-dir "$W/inf" >/dev/null &&
    oi=$(TIPC_ONNX_THREADS="$TH" TIPC_ONNX_BENCH="$ISTEPS" "$PY" "$ROOT/scripts/check_onnx.py" "$T" "$W/inf" 1 | awk '/latency/ {print $(NF-1)}')
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a != "n/a") printf "%.2f", a / b; else print "n/a" }'; }
printf '%-30s %10s %10s %10s %14s\n' "# metric" "tipc" "pytorch" "onnxrt" "tipc/pytorch"
printf '%-30s %10s %10s %10s %14s\n' "train bs=$BS ${RES}px img/s" "$tt" "$pt" "-" "$(ratio "$tt" "$pt")"
printf '%-30s %10s %10s %10s %14s\n' "infer bs=1 ${RES}px ms" "$ti" "$pi" "$oi" "$(ratio "$ti" "$pi")"
echo "# targets: train ratio >= 1.5; infer ratio <= 0.5 and tipc ms <= onnxrt ms"
