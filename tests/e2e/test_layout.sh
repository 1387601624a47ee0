#!/usr/bin/env bash
# test_layout.sh: the structural rules of scripts/check_layout.sh hold (floors, one clock, one
# parser, ...), and the checker itself catches a violation planted in a copy of the tree.
. "$ROOT/tests/e2e/lib.sh"
bash "$ROOT/scripts/check_layout.sh" || fail "scripts/check_layout.sh found violations (above)"

# The checker must be able to fail: plant one violation per floor rule in a copy.
copy="$TMPDIR/tree"
mkdir -p "$copy"
cp -r "$ROOT/scripts" "$ROOT/core" "$ROOT/engine" "$ROOT/prepare" "$ROOT/runner" "$copy/"
echo '#include "../../runner/launch.h"' >>"$copy/engine/model/net.c"
echo '#include "../runner/plan.h"' >>"$copy/prepare/prepare.c"
out=$(bash "$copy/scripts/check_layout.sh" 2>&1) && fail "a planted engine->runner include passed the check"
grep -q 'engine/model/net.c:.*engine/ includes runner/' <<<"$out" || fail "engine->runner not named: $out"
grep -q 'prepare/prepare.c:.*prepare/ includes runner/' <<<"$out" || fail "prepare->runner not named: $out"
echo "ok: layout rules hold and a planted violation is caught"
