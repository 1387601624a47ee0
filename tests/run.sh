#!/usr/bin/env bash
# tests/run.sh: run the cmocka unit binaries and the e2e scripts; print one summary line
# 'N passed, N failed, N skipped' and exit 1 if anything failed.
#   tests/run.sh [--unit-only|--e2e-only] [UNIT_BIN...]
# e2e scripts get $TIPC (sanitizer build), $TIPC_REL (release build), $ROOT (repo root) and a
# private $TMPDIR; exit 0 = pass, 77 = skip (print the reason), anything else = fail.
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

run_unit() {
    local bin=$1 name log rc ok f s
    name=$(basename "$bin")
    log="$LOGDIR/$name.log"
    (cd "$ROOT" && timeout 900 "$bin") >"$log" 2>&1
    rc=$?
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
    local t=$1 name log rc tmp start secs
    name=$(basename "$t" .sh)
    log="$LOGDIR/e2e-$name.log"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tipc-e2e-$name.XXXXXX")
    start=$(date +%s)
    (cd "$ROOT" && TMPDIR="$tmp" timeout "${E2E_TIMEOUT:-900}" bash "$t") >"$log" 2>&1
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
    for b in "$@"; do run_unit "$b"; done
fi
if [ "$mode" != unit ]; then
    : "${TIPC:?set TIPC to the tipc binary under test}"
    export TIPC TIPC_REL="${TIPC_REL:-$TIPC}"
    for t in "$ROOT"/tests/e2e/test_*.sh; do
        [ -e "$t" ] && run_e2e "$t"
    done
fi
[ "${#failed_names[@]}" -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
