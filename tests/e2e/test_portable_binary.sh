#!/usr/bin/env bash
# test_portable_binary.sh: the default build (bin/tipc, CPU_ARCH unset: the x86-64-v2 baseline)
# runs on any x86-64-v2 CPU: no instruction above x86-64-v2 (AVX/AVX2/AVX-512 in any form: VEX or
# EVEX encodings, ymm/zmm/mask registers; FMA, F16C; BMI1/2, LZCNT, MOVBE) appears outside the
# per-ISA kernels, whose symbols carry the level's suffix (_v3, _v4: engine/ops/cpu_isa.h); and
# those kernels really are built for their levels (the _v4 ones use zmm, the _v3 ones ymm, the _v2
# ones neither). A binary built with -march=native on an AVX-512 machine fails this check.
. "$ROOT/tests/e2e/lib.sh"
BIN=${PORTABLE_BIN:-$TIPC_REL}
[ "$(uname -m)" = x86_64 ] || skip "the x86-64 levels are checked on x86-64 (this is $(uname -m))"
command -v objdump >/dev/null || skip "objdump not installed (binutils)"
if [ -z "${PORTABLE_BIN:-}" ]; then
    grep -q -- '-march=x86-64-v2 ' "$ROOT/build/flags" ||
        skip "bin/tipc was not built with the default baseline (CPU_ARCH=$(grep -o -- '-march=[^ ]*' "$ROOT/build/flags" | head -1))"
fi
objdump -d --no-show-raw-insn "$BIN" >"$TMPDIR/dis" || fail "objdump -d $BIN failed"
# per function: name, whether it uses an instruction above v2, ymm, zmm; the first offender
awk '
/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
/^ *[0-9a-f]+:\t/ {
    split($0, f, "\t"); ins = f[2]; split(ins, w, " "); m = w[1]
    above = ins ~ /%[yz]mm[0-9]|%k[0-7]/ || m ~ /^v/ ||
            m ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|movbe)[a-z]?$/
    if (above && !(fn in first)) first[fn] = ins
    if (ins ~ /%ymm/) ymm[fn] = 1
    if (ins ~ /%zmm/) zmm[fn] = 1
    seen[fn] = 1
}
END {
    for (fn in seen) {
        lvl = fn ~ /_v4$/ ? "v4" : fn ~ /_v3$/ ? "v3" : fn ~ /_v2$/ ? "v2" : "base"
        printf "%s %s %d %d %s\n", lvl, fn, (fn in ymm), (fn in zmm), (fn in first) ? first[fn] : "-"
    }
}' "$TMPDIR/dis" >"$TMPDIR/fns"
bad=$(awk '($1 == "base" || $1 == "v2") && $5 != "-"' "$TMPDIR/fns")
[ -z "$bad" ] || fail "instructions above x86-64-v2 outside the dispatched kernels (function, first one):
$(printf '%s\n' "$bad" | head -20 | awk '{ $3 = ""; $4 = ""; print }')"
n4=$(awk '$1 == "v4" && $4 == 1' "$TMPDIR/fns" | wc -l)
n3=$(awk '$1 == "v3" && $3 == 1' "$TMPDIR/fns" | wc -l)
n3z=$(awk '$1 == "v3" && $4 == 1' "$TMPDIR/fns" | wc -l)
[ "$n4" -ge 5 ] || fail "only $n4 _v4 functions use zmm registers: the x86-64-v4 kernels are not built for AVX-512"
[ "$n3" -ge 5 ] || fail "only $n3 _v3 functions use ymm registers: the x86-64-v3 kernels are not built for AVX2"
[ "$n3z" -eq 0 ] || fail "$n3z _v3 functions use zmm registers"
for k in pw_block conv2d_forward_cpu sgd_step_cpu; do
    grep -q " ${k}_v4 " "$TMPDIR/fns" || fail "no ${k}_v4 in $BIN"
done
echo "ok: $(wc -l <"$TMPDIR/fns") functions; above x86-64-v2 only in $(awk '$1 ~ /v[34]/ && $5 != "-"' "$TMPDIR/fns" | wc -l) _v3/_v4 ones ($n4 _v4 with zmm, $n3 _v3 with ymm)"
