#!/usr/bin/env bash
# test_layout.sh: the structural rules of scripts/check_layout.sh hold (floors, runner/'s wings and
# no circle between its files, one clock, one parser, one splitmix64, one mkdir -p, the environment
# read by option tables), and the checker catches a violation of each, planted in a copy of the tree.
. "$ROOT/tests/e2e/lib.sh"
bash "$ROOT/scripts/check_layout.sh" || fail "scripts/check_layout.sh found violations (above)"

# tree_copy DIR: the sources and the checker, copied to plant violations in.
tree_copy() {
    mkdir -p "$1"
    cp -r "$ROOT/scripts" "$ROOT/core" "$ROOT/engine" "$ROOT/prepare" "$ROOT/runner" "$1/"
}

# The checker must be able to fail: plant one violation per floor rule in a copy.
copy="$TMPDIR/tree"
tree_copy "$copy"
echo '#include "../../runner/launch/launch.h"' >>"$copy/engine/model/net.c"
echo '#include "../runner/plan/plan.h"' >>"$copy/prepare/prepare.c"
printf 'static double t(void){struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return 0;}\n' >>"$copy/engine/io/onnx.c"
printf 'static unsigned long long m(unsigned long long z){return z * 0xbf58476d1ce4e5b9ULL;}\n' >>"$copy/engine/data/loader.c"
printf 'static int d(void){return mkdir("x", 0700);}\n' >>"$copy/runner/report/report.c"
printf 'static int h(char **argv){return !strcmp(argv[1], "--dry-run");}\n' >>"$copy/runner/cmd/cmd_run.c"
printf 'static int e(void){return getenv("TIPC_NO_FUSE") != 0;}\n' >>"$copy/engine/model/net_walk.c"
printf 'static int o(void){return getenv("TIPC_OFFLINE") != 0;}\n' >>"$copy/prepare/fetch.c"
out=$(bash "$copy/scripts/check_layout.sh" 2>&1) && fail "a planted engine->runner include passed the check"
grep -q 'engine/model/net.c:.*engine/ includes runner/' <<<"$out" || fail "engine->runner not named: $out"
grep -q 'prepare/prepare.c:.*prepare/ includes runner/' <<<"$out" || fail "prepare->runner not named: $out"
grep -q 'engine/io/onnx.c:.*a private monotonic clock' <<<"$out" || fail "private clock not named: $out"
grep -q 'engine/data/loader.c:.*splitmix64 written again' <<<"$out" || fail "second splitmix64 not named: $out"
grep -q 'runner/report/report.c:.*a direct mkdir()' <<<"$out" || fail "direct mkdir not named: $out"
grep -q 'runner/cmd/cmd_run.c:.*an option compared by hand' <<<"$out" || fail "hand-parsed option not named: $out"
grep -q 'engine/model/net_walk.c:.*getenv below runner/' <<<"$out" || fail "getenv in engine/ not named: $out"
grep -q 'prepare/fetch.c:.*getenv below runner/' <<<"$out" || fail "getenv in prepare/ not named: $out"

# The engine's rules (boundary, paired op files, file size, one training step), planted likewise.
copy2="$TMPDIR/tree2"
tree_copy "$copy2"
mkdir -p "$copy2/tests/unit"
cp "$ROOT"/tests/unit/*.c "$copy2/tests/unit/"
bash "$copy2/scripts/check_layout.sh" >/dev/null || fail "the unplanted copy fails the check"
echo 'static void f(struct net *n) { n->be.ops->sync(n->be.ctx); }' >>"$copy2/runner/cmd/cmd_infer.c"
printf '/* x */\n' >"$copy2/engine/ops/cpu/resize.c"
seq 501 | sed 's|.*|/* line */|' >"$copy2/engine/model/big.c"
echo 'static void g(struct net *n) { net_backward(n, 1, 0); net_sgd_update(n, 0, 0, 0); }' >>"$copy2/runner/cmd/cmd_export.c"
sed -i 's/net_train_step(/net_step_of_my_own(/' "$copy2/runner/cmd/cmd_bench.c"
out=$(bash "$copy2/scripts/check_layout.sh" 2>&1) && fail "planted engine violations passed the check"
grep -q '^runner/cmd/cmd_infer.c:.*op table called above the backend' <<<"$out" || fail "->ops-> in runner not named: $out"
grep -q '^engine/ops/cpu/resize.c: no CUDA twin' <<<"$out" || fail "unpaired op file not named: $out"
grep -q '^engine/model/big.c: 501 lines' <<<"$out" || fail "a 501-line file not named: $out"
grep -q '^runner/cmd/cmd_export.c:.*a second training step' <<<"$out" || fail "a second step not named: $out"
grep -q '^runner/cmd/cmd_bench.c: does not call net_train_step' <<<"$out" || fail "bench without the step not named: $out"

# runner/'s wings (cmd/ -> run/, bench/ -> launch/, report/ -> plan/): an include up, one across
# siblings, another wing's internal.h, cmds.h outside the front door; and a circle between two files
# of one wing, read from their objects.
copy3="$TMPDIR/tree3"
tree_copy "$copy3"
echo '#include "../run/proc.h"' >>"$copy3/runner/plan/plan.c"
echo '#include "../bench/scaling.h"' >>"$copy3/runner/run/tee.c"
echo '#include "../launch/internal.h"' >>"$copy3/runner/run/cluster.c"
echo '#include "../cmds.h"' >>"$copy3/runner/launch/node.c"
printf 'void zz_b(void);\nvoid zz_a(void) { zz_b(); }\n' >"$copy3/runner/plan/zz_a.c"
printf 'void zz_a(void);\nvoid zz_b(void) { zz_a(); }\n' >"$copy3/runner/plan/zz_b.c"
mkdir -p "$copy3/obj/runner/plan"
for f in zz_a zz_b; do cc -c "$copy3/runner/plan/$f.c" -o "$copy3/obj/runner/plan/$f.o" || fail "cannot compile $f.c"; done
out=$(LAYOUT_OBJDIR=obj bash "$copy3/scripts/check_layout.sh" 2>&1) && fail "planted wing violations passed the check"
grep -q '^runner/plan/plan.c:[0-9]*: includes runner/run/proc.h, up or across' <<<"$out" || fail "plan -> run not named: $out"
grep -q '^runner/run/tee.c:[0-9]*: includes runner/bench/scaling.h, up or across' <<<"$out" || fail "run -> bench not named: $out"
grep -q '^runner/run/cluster.c:[0-9]*: includes another wing.s internal header' <<<"$out" || fail "internal.h not named: $out"
grep -q '^runner/launch/node.c:[0-9]*: cmds.h outside the front door' <<<"$out" || fail "cmds.h in launch/ not named: $out"
grep -q '^runner/plan/zz_a.c: uses runner/plan/zz_b.c.*a circle between runner/ files' <<<"$out" || fail "a circle not named: $out"
rm "$copy3"/runner/plan/zz_?.c    # the objects alone, their sources gone: leftovers, not a circle
out=$(LAYOUT_OBJDIR=obj bash "$copy3/scripts/check_layout.sh" 2>&1)
grep -q 'a circle' <<<"$out" && fail "objects without their sources counted: $out"
echo "ok: layout rules hold and a planted violation is caught"
