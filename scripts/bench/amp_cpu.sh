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
    "$PY" - "$TH" "$BS" "$RES" "$STEPS" <<'PYEOF'
import sys, time, torch, torchvision
th, bs, res, steps = map(int, sys.argv[1:])
torch.set_num_threads(th)
for name, amp in (("fp32", False), ("autocast bf16", True)):
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_small()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
    x = torch.randn(bs, 3, res, res); y = torch.arange(bs) % 1000
    lossf = torch.nn.CrossEntropyLoss()
    m.train()
    ts = []
    for i in range(2 + steps):
        t = time.perf_counter()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
            loss = lossf(m(x), y)
        loss.backward(); opt.step()
        if i >= 2: ts.append(time.perf_counter() - t)
    print(f"{'pytorch ' + torch.__version__ + ' ' + name:<34s} {bs / sorted(ts)[len(ts) // 2]:10.2f} img/s")
PYEOF
else
    echo "SKIP: PyTorch rows: torch/torchvision not installed for $PY"
fi
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
