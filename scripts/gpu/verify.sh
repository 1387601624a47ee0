#!/usr/bin/env bash
# verify.sh: the GPU verification in one call, run ON the GPU machine in the repo root, with the
# archive of scripts/gpu/bundle.sh (.gpubundle.tar.xz, git-ignored: carry it) beside it:
#   bash scripts/gpu/verify.sh [PART...]      PART: tests | bench | compile   (default: tests bench)
#     tests    the bundle's CUDA unit tests (bin/test_cuda_*: every op vs the CPU, the graph-replayed
#              training step vs eager vs the CPU), then tests/e2e/test_gpu_train.sh
#     bench    scripts/bench/gpu_vs_pytorch.sh: tipc vs PyTorch eager and eager AMP (bf16), train
#              bs 256 and 32, infer bs 1 latency and bs 256, HBM fractions
#     compile  the same with the torch.compile peers at bs 256 (minutes of compiling: a second call)
#     sanitize compute-sanitizer (memcheck, then racecheck) over test_cuda_graph: the staged step's
#              kernels and copies, captured and replayed (optional; about a minute or two)
# Everything goes to $OUT (the device tool's returned folder; else ./gpu-verify): env.txt (commit,
# nvidia-smi, driver, CUDA, cuDNN, NCCL and PyTorch versions), tests.log, bench.log + bench.md (or
# compile.log + compile.md: the results as a markdown table for docs/benchmarks.md) and
# summary.txt, printed last. Each part has a time limit, and all of them together stay under
# BUDGET seconds (default 420: a session has 15 minutes of device time in all, start-up included,
# so the first call keeps room for one short second call). The tests part stops starting tests
# after TESTS_CAP seconds (default 200) so the benchmark keeps its share.
# Progress: a line `[+Ns] PART: WHAT` on stdout as each step starts, also appended to
# $OUT/progress.txt, so a call cut off at its wall limit still says where it was.
# Without a GPU every part says SKIP with the reason (a dry run); exit 1 when a test failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
export ROOT
OUT=${OUT:-$ROOT/gpu-verify}
mkdir -p "$OUT"
BUDGET=${BUDGET:-420}
TESTS_CAP=${TESTS_CAP:-200}
START=$(date +%s)
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(tests bench)
for p in "${parts[@]}"; do
    case $p in tests | bench | compile | sanitize) ;;
        *) echo "verify: unknown part '$p' (tests, bench, compile, sanitize)" >&2; exit 2 ;;
    esac
done
SUM=$OUT/summary.txt
: >"$SUM"
note() { echo "$*" | tee -a "$SUM"; }
: >"$OUT/progress.txt"
progress() { echo "[+$(($(date +%s) - START))s] $*" | tee -a "$OUT/progress.txt"; }
# seconds a part may take: its cap, within what is left of the budget
limit() { local left=$((BUDGET - ($(date +%s) - START) - 10)); [ "$1" -lt "$left" ] && echo "$1" || echo "$left"; }

# ---- the bundle ---------------------------------------------------------------------------------
GB=${GPUBUNDLE:-/tmp/gpubundle}   # the archive unpacks as a folder named gpubundle
[ "$(basename "$GB")" = gpubundle ] || { note "verify: GPUBUNDLE must end in /gpubundle, not '$GB'"; exit 2; }
if [ -f "$ROOT/.gpubundle.tar.xz" ] || [ ! -x "$GB/bin/tipc" ]; then
    if [ -f "$ROOT/.gpubundle.tar.xz" ]; then # unpacked each time: an earlier call's may be older
        rm -rf "$GB"
        mkdir -p "$(dirname "$GB")"
        tar xJf "$ROOT/.gpubundle.tar.xz" -C "$(dirname "$GB")" 2>/dev/null ||   # no xz there: Python's lzma
            python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
                "$ROOT/.gpubundle.tar.xz" "$(dirname "$GB")" || { note "verify: cannot unpack .gpubundle.tar.xz"; exit 2; }
    elif [ -x "$ROOT/bin/tipc" ]; then # a machine that built tipc itself
        mkdir -p "$GB/bin" && ln -sf "$ROOT/bin/tipc" "$GB/bin/tipc"
        for t in "$ROOT"/build/rel/tests/test_cuda*; do [ -x "$t" ] && ln -sf "$t" "$GB/bin/"; done
        cp "$ROOT/scripts/gpu/env.sh" "$ROOT/scripts/gpu/find_nvidia.sh" "$GB/"
    else
        note "verify: no .gpubundle.tar.xz here (make it with scripts/gpu/bundle.sh and carry it) and no bin/tipc"
        exit 2
    fi
fi
# shellcheck source=/dev/null
. "$GB/env.sh" >/dev/null
commit=$(cat "$GB/COMMIT" 2>/dev/null || git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)

# ---- the environment ----------------------------------------------------------------------------
{
    echo "commit: $commit"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "tipc: $("$TIPC" version 2>&1 | paste -sd' ')"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
        nvidia-smi
    else
        echo "nvidia-smi: not found"
    fi
    command -v nvcc >/dev/null && nvcc --version | tail -2
    echo "NVIDIA libraries tipc loads (first on LD_LIBRARY_PATH), with the versions they report:"
    for lib in libcudart.so.13 libcublas.so.13 libcudnn.so.9 libnccl.so.2; do
        for d in ${LD_LIBRARY_PATH//:/ }; do
            [ -e "$d/$lib" ] || continue
            f=$(readlink -f "$d/$lib")
            v=$(python3 -c '
import ctypes, sys
l, name = ctypes.CDLL(sys.argv[1]), sys.argv[2]
v = ctypes.c_int()
if name.startswith("libcudart"):
    l.cudaRuntimeGetVersion(ctypes.byref(v)); r = v.value; l.cudaDriverGetVersion(ctypes.byref(v))
    print("runtime", r, "driver API", v.value)
elif name.startswith("libcudnn"): print("cudnnGetVersion", l.cudnnGetVersion())
elif name.startswith("libnccl"): l.ncclGetVersion(ctypes.byref(v)); print("ncclGetVersion", v.value)
' "$f" "$lib" 2>/dev/null)
            echo "  $f ${v:-}"
            break
        done
    done
    python3 -c 'import torch, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
        torch.backends.cudnn.version(), "nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else "-",
        "torchvision", torchvision.__version__)' 2>&1 | tail -1
} >"$OUT/env.txt" 2>&1
gpu=$(grep -m1 -A1 '^name' "$OUT/env.txt" | tail -1)
note "verify: commit $commit, ${gpu:-no nvidia-smi}"

status=0
# ---- tests --------------------------------------------------------------------------------------
run_tests() {
    local log=$OUT/tests.log t rc name tmp t0 found=0
    : >"$log"
    t0=$(date +%s)
    for t in "$GB"/bin/test_cuda*; do
        [ -x "$t" ] || continue
        found=1
        name=$(basename "$t")
        if [ $(($(date +%s) - t0)) -ge "$TESTS_CAP" ]; then note "FAIL  $name: not started, the tests part's $TESTS_CAP s are spent"; status=1; continue; fi
        progress "tests: $name"
        timeout "$(limit 150)" "$t" >"$OUT/.one" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ] && ! grep -q '^\[  SKIPPED \] [A-Za-z]' "$OUT/.one"; then
            note "ok    $name ($(grep -c '^\[       OK \]' "$OUT/.one") tests)"
        elif [ "$rc" -eq 0 ]; then
            note "skip  $name: $(grep -m1 '^SKIP' "$OUT/.one")"
        else
            note "FAIL  $name (exit $rc; tests.log)"
            status=1
        fi
        { echo "==== $name (exit $rc)"; cat "$OUT/.one"; } >>"$log"
        rm -f "$OUT/.one"
    done
    # a tipc built here without the CUDA unit tests (make build/rel/tests/test_cuda_ops ...): say so
    [ "$found" = 1 ] || note "skip  test_cuda*: no CUDA unit test binaries in $GB/bin (scripts/gpu/bundle.sh packs them)"
    echo "==== tests/e2e/test_gpu_train.sh" >>"$log"
    progress "tests: e2e test_gpu_train"
    tmp=$(mktemp -d)
    (TMPDIR=$tmp timeout "$(limit 300)" bash tests/e2e/test_gpu_train.sh) >>"$log" 2>&1
    rc=$?
    case $rc in
        0) note "ok    e2e test_gpu_train" ;;
        77) note "skip  e2e test_gpu_train: $(grep '^SKIP' "$log" | tail -1)" ;;
        *) note "FAIL  e2e test_gpu_train (exit $rc; tests.log)"; status=1 ;;
    esac
    rm -rf "$tmp"
}

# ---- benchmarks ---------------------------------------------------------------------------------
run_bench() { # name, env for gpu_vs_pytorch.sh
    local name=$1 rc
    shift
    progress "$name: scripts/bench/gpu_vs_pytorch.sh ($*)"
    # its `bench: ...` step lines reach the console as progress; everything goes to the log
    env "$@" MD="$OUT/$name.md" TIPC_REL="$TIPC" timeout "$(limit 420)" bash scripts/bench/gpu_vs_pytorch.sh 2>&1 |
        tee "$OUT/$name.log" | while IFS= read -r line; do
            case $line in bench:*) progress "$name: ${line#bench: }" ;; esac
        done
    rc=${PIPESTATUS[0]}
    if grep -q '^SKIP: no GPU' "$OUT/$name.log"; then
        note "skip  $name: $(grep -m1 '^SKIP' "$OUT/$name.log")"
    elif [ "$rc" -ne 0 ] || [ ! -s "$OUT/$name.md" ]; then
        note "FAIL  $name (exit $rc; $name.log)"
        status=1
    else
        note "ok    $name: $OUT/$name.md"
        cat "$OUT/$name.md" >>"$SUM"
    fi
}

# ---- compute-sanitizer ---------------------------------------------------------------------------
run_sanitize() {
    local log=$OUT/sanitize.log tool rc cs
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    if [ -z "$cs" ]; then note "skip  sanitize: no compute-sanitizer here"; return; fi
    : >"$log"
    for tool in memcheck racecheck; do
        echo "==== $tool" >>"$log"
        progress "sanitize: $tool test_cuda_graph"
        timeout "$(limit 240)" "$cs" --tool "$tool" --error-exitcode 99 "$GB/bin/test_cuda_graph" >>"$log" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ]; then note "ok    sanitize $tool test_cuda_graph"
        else note "FAIL  sanitize $tool test_cuda_graph (exit $rc; sanitize.log)"; status=1; fi
    done
}

for p in "${parts[@]}"; do
    if [ "$(limit 60)" -lt 60 ]; then note "verify: no time left for '$p' (BUDGET=$BUDGET s)"; status=1; continue; fi
    case $p in
        tests) run_tests ;;
        sanitize) run_sanitize ;;
        bench) run_bench bench MODES="eager eager_amp" TORCH_TIMEOUT=100 ;;
        # the issue's compile target is at bs 256 only: two compiles, not four
        compile) run_bench compile MODES="compile_amp compile" TORCH_TIMEOUT=240 TORCH_SMALL=0 ;;
    esac
done
note "verify: done in $(($(date +%s) - START)) s; files in $OUT"
echo "---- summary"
cat "$SUM"
exit $status
