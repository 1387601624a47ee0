#!/usr/bin/env bash
# test_cpu_emulated.sh: the portable binary on CPUs this machine is not. Under qemu-x86_64 (user
# mode) emulating an AVX2 CPU without AVX-512 (Haswell) and an SSE4.2 CPU without AVX (Nehalem),
# bin/tipc picks the x86-64-v3 / v2 kernels from CPUID by itself, trains and infers with no illegal
# instruction anywhere (its libraries included: OpenBLAS, libjpeg, Gloo), and gives the same bits as
# the same level forced on this machine (TIPC_CPU_ISA): so the per-level runs of `make test` check
# the very code those CPUs run. (qemu 7.2's TCG has no AVX-512, so v4 is not emulated here.)
. "$ROOT/tests/e2e/lib.sh"
BIN=$TIPC_REL
[ "$(uname -m)" = x86_64 ] || skip "x86-64 CPUs are emulated on x86-64 (this is $(uname -m))"
command -v qemu-x86_64 >/dev/null || skip "qemu-x86_64 not installed (Debian: qemu-user)"
grep -q -- '-march=x86-64-v2 ' "$ROOT/build/flags" ||
    skip "bin/tipc was not built with the default baseline (CPU_ARCH=$(grep -o -- '-march=[^ ]*' "$ROOT/build/flags" | head -1))"
cd "$TMPDIR" || fail "no TMPDIR"
TRAIN=(train --data-path none -o DataLoader.synthetic_size=4 -o Arch.image_size=32 --batch-size 2 --epochs 1
       -o Global.eval_during_train=false --threads 1)
"$BIN" "${TRAIN[@]}" --output-dir ck > train.txt 2>&1 || fail "train: $(tail -5 train.txt)"
"$BIN" export --pretrained ck/latest.ckpt --save-inference-dir inf > exp.txt 2>&1 || fail "export: $(cat exp.txt)"
python3 - <<'PY' || fail "could not write the raw input"
import struct, random
random.seed(7)
open("in.raw", "wb").write(struct.pack("<%df" % (2 * 3 * 32 * 32), *[random.uniform(-2, 2) for _ in range(2 * 3 * 32 * 32)]))
PY
# tipc re-executes itself (/proc/self/exe) when OpenBLAS's own pick or libgomp's spinning needs an
# environment change; under qemu-user that exec would run natively, out of the emulation. With the
# environment it would set already set (the OpenBLAS core of the level, as TIPC_CPU_ISA gives it
# here), there is nothing to re-execute; each output below still names the kernels that ran.
export GOMP_SPINCOUNT=10000
for pair in "Haswell v3 avx2 Haswell" "Nehalem v2 sse4.2 Nehalem"; do
    set -- $pair
    cpu=$1 lvl=$2 feat=$3 blas=$4
    Q=(env OPENBLAS_CORETYPE="$blas" timeout 600 qemu-x86_64 -cpu "$cpu")
    "${Q[@]}" "$BIN" version > "v_$cpu.txt" 2>&1 || fail "tipc version on an emulated $cpu: $(cat "v_$cpu.txt")"
    grep -q "^cpu kernels: x86-64-$lvl ($feat" "v_$cpu.txt" ||
        fail "an emulated $cpu did not get the x86-64-$lvl kernels: $(cat "v_$cpu.txt")"
    grep -q 'this CPU runs.* v4' "v_$cpu.txt" && fail "an emulated $cpu claims to run v4: $(cat "v_$cpu.txt")"
    # training: the same bits as the level forced here (one thread: a fixed order of every sum)
    "${Q[@]}" "$BIN" "${TRAIN[@]}" --output-dir "ck_$cpu" > "t_$cpu.txt" 2>&1 ||
        fail "train on an emulated $cpu (exit $?): $(tail -5 "t_$cpu.txt")"
    grep -q "^cpu kernels: x86-64-$lvl ($feat.*OpenBLAS $blas" "t_$cpu.txt" ||
        fail "the training on an emulated $cpu ran other kernels: $(grep 'cpu kernels' "t_$cpu.txt")"
    TIPC_CPU_ISA=$lvl "$BIN" "${TRAIN[@]}" --output-dir "ck_$lvl" > "t_$lvl.txt" 2>&1 ||
        fail "train at TIPC_CPU_ISA=$lvl: $(tail -5 "t_$lvl.txt")"
    ckpt_same "ck_$cpu/latest.ckpt" "ck_$lvl/latest.ckpt" ||
        fail "training on an emulated $cpu differs from TIPC_CPU_ISA=$lvl here"
    # inference of one model: the same logits
    "${Q[@]}" "$BIN" infer --model-dir inf --batch-size 2 --input-raw in.raw --output-raw "e_$cpu.raw" > "i_$cpu.txt" 2>&1 ||
        fail "infer on an emulated $cpu (exit $?): $(tail -5 "i_$cpu.txt")"
    TIPC_CPU_ISA=$lvl "$BIN" infer --model-dir inf --batch-size 2 --input-raw in.raw --output-raw "n_$lvl.raw" > "n_$lvl.txt" 2>&1 ||
        fail "infer at TIPC_CPU_ISA=$lvl: $(tail -5 "n_$lvl.txt")"
    [ -s "e_$cpu.raw" ] && cmp -s "e_$cpu.raw" "n_$lvl.raw" ||
        fail "inference on an emulated $cpu differs from TIPC_CPU_ISA=$lvl here"
    echo "emulated $cpu: x86-64-$lvl kernels; training and inference equal TIPC_CPU_ISA=$lvl bit for bit"
done
echo "ok: the portable binary runs on emulated AVX2-only and SSE4.2-only CPUs with the levels CI forces"
