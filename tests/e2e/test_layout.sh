#!/usr/bin/env bash
# test_layout.sh: the structural rules of scripts/check_layout.sh hold (floors, one clock, one
# parser, one splitmix64, one mkdir -p), and the checker catches a violation of each, planted in a
# copy of the tree.
. "$ROOT/tests/e2e/lib.sh"
bash "$ROOT/scripts/check_layout.sh" || fail "scripts/check_layout.sh found violations (above)"

# The checker must be able to fail: plant one violation per floor rule in a copy.
copy="$TMPDIR/tree"
mkdir -p "$copy"
cp -r "$ROOT/scripts" "$ROOT/core" "$ROOT/engine" "$ROOT/prepare" "$ROOT/runner" "$copy/"
echo '#include "../../runner/launch.h"' >>"$copy/engine/model/net.c"
echo '#include "../runner/plan.h"' >>"$copy/prepare/prepare.c"
printf 'static double t(void){struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return 0;}\n' >>"$copy/engine/io/onnx.c"
printf 'static unsigned long long m(unsigned long long z){return z * 0xbf58476d1ce4e5b9ULL;}\n' >>"$copy/engine/data/loader.c"
printf 'static int d(void){return mkdir("x", 0700);}\n' >>"$copy/runner/report.c"
printf 'static int h(char **argv){return !strcmp(argv[1], "--dry-run");}\n' >>"$copy/runner/cmd_run.c"
out=$(bash "$copy/scripts/check_layout.sh" 2>&1) && fail "a planted engine->runner include passed the check"
grep -q 'engine/model/net.c:.*engine/ includes runner/' <<<"$out" || fail "engine->runner not named: $out"
grep -q 'prepare/prepare.c:.*prepare/ includes runner/' <<<"$out" || fail "prepare->runner not named: $out"
grep -q 'engine/io/onnx.c:.*a private monotonic clock' <<<"$out" || fail "private clock not named: $out"
grep -q 'engine/data/loader.c:.*splitmix64 written again' <<<"$out" || fail "second splitmix64 not named: $out"
grep -q 'runner/report.c:.*a direct mkdir()' <<<"$out" || fail "direct mkdir not named: $out"
grep -q 'runner/cmd_run.c:.*an option compared by hand' <<<"$out" || fail "hand-parsed option not named: $out"

# The engine's rules (boundary, paired op files, file size, one training step), planted likewise.
copy2="$TMPDIR/tree2"
mkdir -p "$copy2/tests/unit"
cp -r "$ROOT/scripts" "$ROOT/core" "$ROOT/engine" "$ROOT/prepare" "$ROOT/runner" "$copy2/"
cp "$ROOT"/tests/unit/*.c "$copy2/tests/unit/"
bash "$copy2/scripts/check_layout.sh" >/dev/null || fail "the unplanted copy fails the check"
echo 'static void f(struct net *n) { n->be.ops->sync(n->be.ctx); }' >>"$copy2/runner/cmd_infer.c"
printf '/* x */\n' >"$copy2/engine/ops/cpu/resize.c"
seq 501 | sed 's|.*|/* line */|' >"$copy2/engine/model/big.c"
echo 'static void g(struct net *n) { net_backward(n, 1, 0); net_sgd_update(n, 0, 0, 0); }' >>"$copy2/runner/cmd_export.c"
sed -i 's/net_train_step(/net_step_of_my_own(/' "$copy2/runner/cmd_bench.c"
out=$(bash "$copy2/scripts/check_layout.sh" 2>&1) && fail "planted engine violations passed the check"
grep -q '^runner/cmd_infer.c:.*op table called above the backend' <<<"$out" || fail "->ops-> in runner not named: $out"
grep -q '^engine/ops/cpu/resize.c: no CUDA twin' <<<"$out" || fail "unpaired op file not named: $out"
grep -q '^engine/model/big.c: 501 lines' <<<"$out" || fail "a 501-line file not named: $out"
grep -q '^runner/cmd_export.c:.*a second training step' <<<"$out" || fail "a second step not named: $out"
grep -q '^runner/cmd_bench.c: does not call net_train_step' <<<"$out" || fail "bench without the step not named: $out"
echo "ok: layout rules hold and a planted violation is caught"
