#!/usr/bin/env bash
# gpu_vs_pytorch.sh: the bundled engine on the GPU against PyTorch CUDA (torchvision
# mobilenet_v3_small, channels_last) on the same GPU, same batch, same run, synthetic data.
#   train: momentum SGD step at bs=$BS and bs=$BS_SMALL, $RES px, img/s (issue 15 targets: bs 256
#          AMP >= 1.5x eager AMP and >= 1.0x torch.compile; bs 32 >= 2x eager)
#   infer: bs=1 latency in ms (target <= 0.3 ms) and bs=$BS img/s (target >= 1.2x eager)
# tipc's training step is replayed from a CUDA Graph (its default; a row shows bs=$BS_SMALL with
# --cuda-graph off for the gain), in fp32: the like-for-like PyTorch column is fp32 eager; the AMP
# columns (bf16 autocast) are the issue's targets. TF32 (default 1) applies to both sides.
# HBM: achieved fraction of the copy bandwidth measured here (torch, bytes read + written) at
# anchors.md section 5's minimal traffic per image: training 112 MB fp32 / 56 MB bf16, inference
# 37.5 / 18.7 MB (a model of the bytes, not a counter).
# Env: PYTHON (python3 with a CUDA torch + torchvision), BS (256), BS_SMALL (32), RES (224),
# STEPS (20), ISTEPS (100), TF32 (1), MODES (torch columns; default "eager eager_amp"; COMPILE=1
# adds "compile compile_amp": minutes of compiling), TORCH_TIMEOUT (s per PyTorch run, 300; a run
# that takes longer is n/a), TORCH_SMALL (1; 0: no PyTorch run at bs=$BS_SMALL, n/a there),
# MD (write the results as a markdown table to this file too).
# No GPU (or a tipc built without CUDA): prints a "SKIP: no GPU" line and exits 0.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
PY=${PYTHON:-python3}
BS=${BS:-256}; BS_SMALL=${BS_SMALL:-32}; RES=${RES:-224}; STEPS=${STEPS:-20}; ISTEPS=${ISTEPS:-100}
TF32=${TF32:-1}; COMPILE=${COMPILE:-0}; TORCH_TIMEOUT=${TORCH_TIMEOUT:-300}; TORCH_SMALL=${TORCH_SMALL:-1}; MD=${MD:-}
read -r -a modes <<<"${MODES:-eager eager_amp}"
[ "$COMPILE" = 1 ] && modes+=(compile compile_amp)
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
[ -x "$T" ] || { echo "build first: make"; exit 1; }
export TIPC_CUDA_TF32=$TF32
if ! "$T" bench train --device gpu --batch-size 2 --resolution 32 --steps 1 --warmup 0 --num-classes 4 >"$W/probe" 2>&1; then
    echo "SKIP: no GPU ($(grep -m1 'error:' "$W/probe" | sed 's/^tipc: error: //'))"
    exit 0
fi
gpu=$(grep -m1 '^device:' "$W/probe" | sed 's/^device: //')
have_torch=0
"$PY" -c 'import torch, torchvision, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && have_torch=1
echo "# gpu_vs_pytorch: $(date -u '+%Y-%m-%d %H:%M UTC'), $gpu, TF32=$TF32, res $RES, steps $STEPS"

# tipc: median img/s (train, infer) or median ms/step (infer bs=1); the full output in $W/tipc.log
tipc_train() {
    "$T" bench train --device gpu --batch-size "$1" --resolution "$RES" --steps "$STEPS" --warmup 3 ${2:-} |
        tee -a "$W/tipc.log" | awk '/median img\/s/ {print $NF}'
}
tipc_infer() {
    "$T" bench infer --device gpu --batch-size "$1" --resolution "$RES" --steps "$ISTEPS" --warmup 10 ${3:-} |
        tee -a "$W/tipc.log" | awk -v w="$2" '/median img\/s/ {print (w == "ms" ? $(NF-3) : $NF)}'
}
# `bench: ...` lines: each figure as soon as it is measured (verify.sh shows them as progress, so a
# run cut off at its wall limit keeps what it measured)
tt=$(tipc_train "$BS"); echo "bench: tipc train bs=$BS: ${tt:-n/a} img/s"
ts=$(tipc_train "$BS_SMALL"); echo "bench: tipc train bs=$BS_SMALL: ${ts:-n/a} img/s"
tse=$(tipc_train "$BS_SMALL" "--cuda-graph off"); echo "bench: tipc train bs=$BS_SMALL graph off: ${tse:-n/a} img/s"
ti1=$(tipc_infer 1 ms); tib=$(tipc_infer "$BS" ips); echo "bench: tipc infer bs=1: ${ti1:-n/a} ms, bs=$BS: ${tib:-n/a} img/s"
tg1=$(tipc_infer 1 ms "--cuda-graph on"); tgb=$(tipc_infer "$BS" ips "--cuda-graph on")
echo "bench: tipc infer graph replay bs=1: ${tg1:-n/a} ms, bs=$BS: ${tgb:-n/a} img/s"
grep -m1 '^# training step:' "$W/tipc.log"

# PyTorch: "MODE BS" -> train img/s, infer bs=1 ms, infer bs img/s (medians)
torch_run() {
    timeout "$TORCH_TIMEOUT" "$PY" - "$1" "$2" "$RES" "$STEPS" "$ISTEPS" "$TF32" <<'PYEOF'
import sys, time, torch, torchvision
mode, bs, res, steps, isteps, tf32 = sys.argv[1], *map(int, sys.argv[2:])
torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = bool(tf32)
torch.backends.cudnn.benchmark = True
dev = torch.device("cuda")
torch.manual_seed(0)
m = torchvision.models.mobilenet_v3_small().to(dev).to(memory_format=torch.channels_last)
amp = mode.endswith("amp")
fwd = torch.compile(m) if mode.startswith("compile") else m
opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
lossf = torch.nn.CrossEntropyLoss()
def timed(fn, n, warm):
    ts = []
    for i in range(warm + n):
        torch.cuda.synchronize(); t = time.perf_counter(); fn(); torch.cuda.synchronize()
        if i >= warm: ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]
x = torch.randn(bs, 3, res, res, device=dev).to(memory_format=torch.channels_last)
y = torch.arange(bs, device=dev) % 1000
def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = lossf(fwd(x), y)
    loss.backward(); opt.step()
m.train(); tr = bs / timed(step, steps, 5)
m.eval()
def inf(xx):
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        fwd(xx)
x1 = x[:1].contiguous(memory_format=torch.channels_last)
i1 = timed(lambda: inf(x1), isteps, 10) * 1e3
ib = bs / timed(lambda: inf(x), max(isteps // 5, 5), 5)
print(f"{tr:.1f} {i1:.3f} {ib:.1f}")
PYEOF
}
declare -A P
for md in "${modes[@]}"; do
    a=n/a b=n/a c=n/a s=n/a
    if [ $have_torch = 1 ]; then
        read -r a b c < <(torch_run "$md" "$BS" || echo "n/a n/a n/a")
        echo "bench: torch $md bs=$BS: train ${a:-n/a} img/s, infer bs=1 ${b:-n/a} ms, bs=$BS ${c:-n/a} img/s"
        [ "$TORCH_SMALL" = 1 ] && read -r s _ _ < <(torch_run "$md" "$BS_SMALL" || echo "n/a n/a n/a")
        [ "$TORCH_SMALL" = 1 ] && echo "bench: torch $md bs=$BS_SMALL: train ${s:-n/a} img/s"
    fi
    P[$md]="${a:-n/a} ${s:-n/a} ${b:-n/a} ${c:-n/a}"
done
[ $have_torch = 1 ] || echo "SKIP: PyTorch side: no CUDA torch/torchvision for $PY"
# the copy bandwidth (GB/s, bytes read + written), the HBM ceiling the fractions are of
bw=n/a
[ $have_torch = 1 ] && bw=$("$PY" -c '
import torch
a = torch.empty(1 << 28, device="cuda"); b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True); ts = []
for _ in range(20):
    e0.record(); b.copy_(a); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1) / 1e3)
print(f"{2 * a.numel() * 4 / sorted(ts)[10] / 1e9:.0f}")' 2>/dev/null || echo n/a)
echo "# device-to-device copy: $bw GB/s (read + write)"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "n/a" && b != "n/a" && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
hbm() { awk -v ips="$1" -v mb="$2" -v bw="$bw" 'BEGIN { if (ips != "n/a" && bw != "n/a" && bw > 0) printf "%.0f%%", 100 * ips * mb / 1000 / bw; else print "n/a" }'; }
col() { echo "${P[$1]}" | cut -d' ' -f"$2"; }
tab=$'\t'
{
    printf 'what%stipc fp32' "$tab"; for md in "${modes[@]}"; do printf '%storch %s' "$tab" "$md"; done
    printf '%stipc/eager%stipc/eager_amp\n' "$tab" "$tab"
    row() { # label, tipc value, field of P
        printf '%s%s%s' "$1" "$tab" "$2"; for md in "${modes[@]}"; do printf '%s%s' "$tab" "$(col "$md" "$3")"; done
        printf '%s%s%s%s\n' "$tab" "$(ratio "$2" "$(col eager "$3")")" "$tab" "$(ratio "$2" "$(col eager_amp "$3")")"
    }
    row "train bs=$BS img/s" "$tt" 1
    row "train bs=$BS_SMALL img/s" "$ts" 2
    row "infer bs=1 ms" "$ti1" 3
    row "infer bs=$BS img/s" "$tib" 4
    printf 'HBM, train bs=%s (fp32 112 MB/img; amp 56)%s%s' "$BS" "$tab" "$(hbm "$tt" 112)"
    for md in "${modes[@]}"; do
        case $md in *amp) mb=56 ;; *) mb=112 ;; esac
        printf '%s%s' "$tab" "$(hbm "$(col "$md" 1)" $mb)"
    done
    printf '%s%s\n' "$tab" "$tab"
    printf 'HBM, infer bs=%s (fp32 37.5 MB/img; amp 18.7)%s%s' "$BS" "$tab" "$(hbm "$tib" 37.5)"
    for md in "${modes[@]}"; do
        case $md in *amp) mb=18.7 ;; *) mb=37.5 ;; esac
        printf '%s%s' "$tab" "$(hbm "$(col "$md" 4)" $mb)"
    done
    printf '%s%s\n' "$tab" "$tab"
} >"$W/table.tsv"
if command -v column >/dev/null; then column -t -s "$tab" "$W/table.tsv"; else tr "$tab" " " <"$W/table.tsv"; fi
echo "# tipc train bs=$BS_SMALL with --cuda-graph off (eager step): $tse img/s; graph/eager $(ratio "$ts" "$tse")"
echo "# tipc inference replaying a CUDA Graph of the forward: bs=1 $tg1 ms, bs=$BS $tgb img/s"
echo "# ratios: img/s rows higher is better for tipc; the ms row lower is better"
echo "# targets (issue 15): train bs 256 AMP >= 1.5x eager AMP, >= 1.0x compile; bs 32 >= 2x eager; infer bs=1 <= 0.3 ms, bs 256 >= 1.2x eager"
if [ -n "$MD" ]; then
    {
        echo "GPU: $gpu; $(date -u '+%Y-%m-%d %H:%M UTC'); TF32=$TF32; $RES px; $STEPS timed steps (medians); copy bandwidth $bw GB/s"
        echo
        head -1 "$W/table.tsv" | sed "s/^/| /; s/$tab/ | /g; s/\$/ |/"
        head -1 "$W/table.tsv" | sed "s/[^$tab]*/---/g; s/^/|/; s/$tab/|/g; s/\$/|/"
        tail -n +2 "$W/table.tsv" | sed "s/^/| /; s/$tab/ | /g; s/\$/ |/"
        echo
        echo "tipc train bs=$BS_SMALL with \`--cuda-graph off\`: $tse img/s (graph/eager $(ratio "$ts" "$tse")); tipc inference" \
             "replaying a CUDA Graph: bs=1 $tg1 ms, bs=$BS $tgb img/s."
    } >"$MD"
    echo "# markdown table: $MD"
fi
