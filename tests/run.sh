#!/usr/bin/env bash
# tests/run.sh: run the cmocka unit binaries and the e2e scripts; print one summary line
# 'N passed, N failed, N skipped' and exit 1 if anything failed.
#   tests/run.sh [--unit-only|--e2e-only] [UNIT_BIN...]
# e2e scripts get $TIPC (sanitizer build), $TIPC_REL (release build), $ROOT (repo root) and a
# private $TMPDIR; exit 0 = pass, 77 = skip (print the reason), anything else = fail.
# The tests of the CPU kernels (ISA_UNITS, ISA_E2E) run once per ISA level of the build
# (engine/ops/cpu_isa.h: TIPC_CPU_ISA forced, OpenBLAS's kernels of that level too), so a machine
# with AVX-512 also tests the AVX2 and SSE kernels; a level this CPU cannot run is skipped.
# RUN_WRAP runs the unit binaries through a program (qemu-aarch64 for `make CROSS=aarch64 unit`).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export ROOT
mode=all
case "${1:-}" in --unit-only) mode=unit; shift ;; --e2e-only) mode=e2e; shift ;; esac
LOGDIR="$ROOT/build/test-logs"
mkdir -p "$LOGDIR"
# ASan: leaks are errors; CUDA needs the shadow gap unprotected. UBSan: stop at the first error.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:protect_shadow_gap=0:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/tests/lsan.supp:print_suppressions=0}"
# A test run inside a Slurm/Kubernetes job must not be placed by that job's variables (cluster_env.h);
# tests of the schedulers set TIPC_SCHEDULER=auto themselves.
export TIPC_SCHEDULER=none
pass=0 fail=0 skip=0
failed_names=()

ISA_UNITS=" test_ops test_amp test_amp_model test_model test_infer test_loader test_gemm_bf16 "
ISA_E2E=" test_train test_export_infer test_amp_train "
ISA_LEVELS=${ISA_LEVELS:-$(case "$(uname -m)" in x86_64) echo v2 v3 v4 ;; aarch64) echo neon ;; esac)}
# OpenBLAS's kernels for a forced level, as on a CPU whose best level it is (cpu_isa_blas_core)
blas_core() { case $1 in v2) echo Nehalem ;; v3) echo Haswell ;; esac; }
# env settings for level $1 ("" = none: the best level)
isa_env() {
    [ -n "$1" ] || return 0
    echo "TIPC_CPU_ISA=$1"
    local core; core=$(blas_core "$1")
    [ -n "$core" ] && [ -z "${OPENBLAS_CORETYPE:-}" ] && echo "OPENBLAS_CORETYPE=$core"
}

run_unit() {
    local bin=$1 level=${2:-} name log rc ok f s
    name=$(basename "$bin")${level:+@$level}
    case $bin in *build/rel/*) name="$name-rel" ;; esac
    log="$LOGDIR/$name.log"
    # shellcheck disable=SC2046
    (cd "$ROOT" && env $(isa_env "$level") timeout 900 ${RUN_WRAP:-} "$bin") >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 77 ]; then
        skip=$((skip + 1)); printf 'skip  unit %-28s %s\n' "$name" "$(grep -m1 '^SKIP' "$log")"
        return
    fi
    ok=$(grep -c '^\[       OK \]' "$log")
    # cmocka names a failed/skipped test twice (when it runs and in the closing list): count names once
    f=$(grep -E '^\[  (FAILED|ERROR)   *\] [A-Za-z_]' "$log" | sed 's/^\[[^]]*\] //' | sort -u | grep -c .)
    s=$(grep -E '^\[  SKIPPED \] [A-Za-z_]' "$log" | sed 's/^\[[^]]*\] //' | sort -u | grep -c .)
    # a crash (sanitizer, signal) before cmocka's summary is one more failure
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    pass=$((pass + ok)); fail=$((fail + f)); skip=$((skip + s))
    if [ "$f" -gt 0 ]; then
        failed_names+=("$name"); printf 'FAIL  unit %-28s (%d ok, %d failed)\n' "$name" "$ok" "$f"
        tail -n 60 "$log" | sed 's/^/    | /'
    else
        printf 'ok    unit %-28s (%d ok%s)\n' "$name" "$ok" "$([ "$s" -gt 0 ] && echo ", $s skipped")"
    fi
}

run_e2e() {
    local t=$1 level=${2:-} name log rc tmp start secs
    name=$(basename "$t" .sh)${level:+@$level}
    log="$LOGDIR/e2e-$name.log"
    if [ -n "$level" ] && ! "$TIPC_REL" version 2>/dev/null | grep -qE "^cpu levels: .*this CPU runs( [a-z0-9]+)* $level( |\$)"; then
        skip=$((skip + 1)); printf 'skip  e2e  %-28s SKIP: this CPU cannot run the %s kernels\n' "$name" "$level"
        return
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tipc-e2e-${name/@/-}.XXXXXX")
    start=$(date +%s)
    # shellcheck disable=SC2046
    (cd "$ROOT" && env $(isa_env "$level") TMPDIR="$tmp" timeout "${E2E_TIMEOUT:-900}" bash "$t") >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + 1)); printf 'ok    e2e  %-28s (%ds)\n' "$name" "$secs"; rm -rf "$tmp"
    elif [ "$rc" -eq 77 ]; then
        skip=$((skip + 1)); printf 'skip  e2e  %-28s %s\n' "$name" "$(grep -m1 '^SKIP' "$log")"; rm -rf "$tmp"
    else
        fail=$((fail + 1)); failed_names+=("$name")
        printf 'FAIL  e2e  %-28s (rc=%d, %ds, log %s)\n' "$name" "$rc" "$secs" "$log"
        tail -n 60 "$log" | sed 's/^/    | /'
    fi
}

if [ "$mode" != e2e ]; then
    for b in "$@"; do
        if [[ "$ISA_UNITS" == *" $(basename "$b") "* ]]; then
            for l in $ISA_LEVELS; do run_unit "$b" "$l"; done
        else
            run_unit "$b"
        fi
    done
fi
if [ "$mode" != unit ]; then
    : "${TIPC:?set TIPC to the tipc binary under test}"
    export TIPC TIPC_REL="${TIPC_REL:-$TIPC}"
    for t in "$ROOT"/tests/e2e/test_*.sh; do
        [ -e "$t" ] || continue
        if [[ "$ISA_E2E" == *" $(basename "$t" .sh) "* ]]; then
            for l in $ISA_LEVELS; do run_e2e "$t" "$l"; done
        else
            run_e2e "$t"
        fi
    done
fi
[ "${#failed_names[@]}" -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
