#!/usr/bin/env bash
# allreduce_vs_gloo.sh: allreduce algbw/busbw for 1 KB..64 MB on loopback through tipc's comm.h vs
# Gloo called directly, side by side in one run with the time ratio (scripts/bench/allreduce_bench.cc,
# built here against build/rel/libtipc.a; ranks started by `bin/tipc launch`).
#   scripts/bench/allreduce_vs_gloo.sh [NPROC...]     default: 2
# Env: MAX_BYTES (default 67108864).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
[ -x bin/tipc ] && [ -f build/rel/libtipc.a ] || make -s bin/tipc
OUT=build/bench
mkdir -p "$OUT"
BIN=$OUT/allreduce_bench
if [ ! -x "$BIN" ] || [ scripts/bench/allreduce_bench.cc -nt "$BIN" ] || [ build/rel/libtipc.a -nt "$BIN" ]; then
    g++ -std=c++17 -O2 -D_GNU_SOURCE -o "$BIN" scripts/bench/allreduce_bench.cc build/rel/libtipc.a \
        $(pkg-config --libs libcurl libmicrohttpd) -lgloo -lpthread -fopenmp
fi
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
