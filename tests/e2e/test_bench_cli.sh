#!/usr/bin/env bash
# test_bench_cli.sh: `tipc bench train|infer` runs on a small shape and prints its figures;
# bad usage is exit 2. (Speed itself is scripts/bench/, not a test.)
set -u
T=${TIPC:?}
fail() { echo "FAIL: $*"; exit 1; }
out=$("$T" bench train --batch-size 2 --resolution 32 --steps 2 --warmup 1 --threads 1 --num-classes 10) || fail "bench train"
echo "$out" | grep -Eq '^train ms/step: [0-9.]+ img/s: [0-9.]+ median ms/step: [0-9.]+ median img/s: [0-9.]+$' || { echo "$out"; fail "train line"; }
# the training step's mode and why: the CPU has no graphs; --cuda-graph off says so; a bad value is usage
echo "$out" | grep -q '^# training step: eager (the cpu backend has no graphs)$' || { echo "$out"; fail "train mode line"; }
out=$("$T" bench train --batch-size 2 --resolution 32 --steps 1 --warmup 0 --threads 1 --num-classes 10 --cuda-graph off) ||
    fail "bench train --cuda-graph off"
echo "$out" | grep -q '^# training step: eager (--cuda-graph off)$' || { echo "$out"; fail "--cuda-graph off line"; }
"$T" bench train --cuda-graph maybe >/dev/null 2>&1; [ $? -eq 2 ] || fail "--cuda-graph maybe"
"$T" bench infer --cuda-graph on --steps 1 >/dev/null 2>&1; [ $? -eq 2 ] || fail "infer --cuda-graph on without a gpu"
out=$("$T" bench infer --batch-size 3 --resolution 48 --steps 3 --warmup 0 --threads 2) || fail "bench infer"
echo "$out" | grep -Eq '^infer ms/step: [0-9.]+ img/s: [0-9.]+' || { echo "$out"; fail "infer line"; }
"$T" bench >/dev/null 2>&1; [ $? -eq 2 ] || fail "no benchmark name"
"$T" bench fly >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown benchmark"
"$T" bench train --model resnet50 >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown model"
"$T" bench infer --steps 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "zero steps"
"$T" bench --help | grep -q "usage: tipc bench" || fail "help"
echo ok
