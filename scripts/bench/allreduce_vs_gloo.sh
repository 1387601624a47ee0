#!/usr/bin/env bash
# allreduce_vs_gloo.sh: allreduce algbw/busbw for 1 KB..64 MB on loopback through tipc's comm.h vs
# Gloo called directly, side by side in one run with the time ratio (scripts/bench/allreduce_bench.cc,
# built here against build/rel/libtipc.a; ranks started by `bin/tipc launch`).
#   scripts/bench/allreduce_vs_gloo.sh [NPROC...]     default: 2
# Env: MAX_BYTES (default 67108864).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=build/bench
BIN=$OUT/allreduce_bench
make -s bin/tipc "$BIN"   # linked with the Makefile's libraries (CUDA's too when detected)
NPROCS=("${@:-2}")
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for np in "${NPROCS[@]}"; do
    store=$(mktemp -d)
    rc=0
    bin/tipc launch --nproc_per_node="$np" --log_dir="$OUT/log.$np" --job_id=bench$$ \
        "$BIN" "$store" "${MAX_BYTES:-67108864}" || rc=$?
    rm -rf "$store"
    [ "$rc" = 0 ] || { echo "# FAILED (nproc $np, exit $rc; logs in $OUT/log.$np)"; exit 1; }
done
