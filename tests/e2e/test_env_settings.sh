# test_env_settings.sh: the environment is read once, by each command's option table (#14): the
# engine's switches (TIPC_NO_FUSE, TIPC_INFER_PER_OP, TIPC_CUDA_TF32, TIPC_CUDNN_FIND, TIPC_CPU_ISA) and
# prepare's (TIPC_OFFLINE, TIPC_MANIFEST, the download knobs) are listed in the usage under
# "environment:", a bad value is a usage error naming the variable (exit 2, nothing run; these
# were silently ignored or warned about before), and a good one takes effect.
. "$ROOT/tests/e2e/lib.sh"
cd "$TMPDIR" || fail "cd"
CFG="$ROOT/configs/mobilenet_v3_small/train_infer.txt"

# bad VAR=VALUE WANT ARGS...: exit 2 and stderr names VAR and WANT
bad() {
    local kv=$1 want=$2; shift 2
    env "$kv" "$TIPC" "$@" > out.txt 2> err.txt
    local rc=$?
    [ "$rc" -eq 2 ] || fail "$kv tipc $*: exit $rc, want 2 ($(cat err.txt))"
    grep -q "${kv%%=*} (environment.*$want" err.txt || fail "$kv tipc $*: stderr does not name ${kv%%=*}: $(cat err.txt)"
    ! grep -q "BUG" err.txt || fail "$kv tipc $*: a BUG line"
}
bad TIPC_NO_FUSE=maybe "True or False" bench train --steps 1
bad TIPC_INFER_PER_OP=2 "True or False" bench infer --steps 1
bad TIPC_CUDA_TF32=yes-please "True or False" train --epochs 0
bad TIPC_CUDNN_FIND=x "True or False" infer --model-dir m
bad TIPC_CPU_ISA=avx9 "auto, v2, v3, v4 or neon" bench infer --steps 1
# a level this build has no kernels for (or this CPU cannot run): exit 2 naming the variable
other=neon; [ "$(uname -m)" = aarch64 ] && other=v3
env TIPC_CPU_ISA=$other "$TIPC" bench infer --steps 1 > out.txt 2> err.txt
rc=$?
[ "$rc" -eq 2 ] && grep -q "TIPC_CPU_ISA=$other" err.txt || fail "TIPC_CPU_ISA=$other: exit $rc, $(cat err.txt)"
# a level it runs takes effect and is named
lvl=$("$TIPC" version | sed -n 's/^cpu levels: .*this CPU runs \([a-z0-9]*\).*/\1/p')
[ -n "$lvl" ] || fail "tipc version names no level this CPU runs: $("$TIPC" version)"
TIPC_CPU_ISA=$lvl "$TIPC" bench infer --steps 1 --warmup 0 --batch-size 1 > out.txt 2>&1 || fail "TIPC_CPU_ISA=$lvl: $(cat out.txt)"
grep -q "^cpu kernels: .*$( [ "$lvl" = neon ] && echo aarch64 || echo "x86-64-$lvl") (" out.txt ||
    fail "TIPC_CPU_ISA=$lvl not named in bench's output: $(cat out.txt)"
bad TIPC_OFFLINE=perhaps "True or False" run "$CFG" lite_train_lite_infer --dry-run
bad TIPC_OFFLINE=perhaps "True or False" prepare "$CFG" lite_train_lite_infer
bad TIPC_MAX_DOWNLOAD=0 "must be in 1\.\." prepare --url http://127.0.0.1:1/x --sha256 00 --dest d
bad TIPC_RETRIES=1000 "must be in 0\.\.100" run "$CFG" lite_train_lite_infer --dry-run
bad TIPC_CONNECT_TIMEOUT=0 "must be in 1\.\." prepare "$CFG" lite_train_lite_infer

# listed under "environment:" in the generated usage
for c in "train:TIPC_NO_FUSE TIPC_CUDA_TF32 TIPC_CUDNN_FIND TIPC_CPU_ISA" "bench:TIPC_INFER_PER_OP TIPC_NO_FUSE TIPC_CPU_ISA" \
         "infer:TIPC_INFER_PER_OP TIPC_CUDA_TF32 TIPC_CPU_ISA" "run:TIPC_OFFLINE TIPC_MANIFEST TIPC_MAX_DOWNLOAD TIPC_STAGE_TIMEOUT" \
         "prepare:TIPC_MAX_DOWNLOAD"; do
    "$TIPC" help "${c%%:*}" > usage.txt 2>&1 || fail "tipc help ${c%%:*}"
    for v in ${c#*:}; do
        sed -n '/^environment:/,$p' usage.txt | grep -q "^  $v=" ||
            grep -q "\[env $v\]\|$v" usage.txt || fail "tipc help ${c%%:*} does not list $v: $(cat usage.txt)"
    done
done

# a good value takes effect: TIPC_MANIFEST names the manifest prepare reads
TIPC_MANIFEST="$TMPDIR/no-such.yaml" "$TIPC" prepare "$CFG" lite_train_lite_infer > out.txt 2> err.txt
rc=$?
[ "$rc" -ne 0 ] || fail "TIPC_MANIFEST pointing nowhere was not used (exit 0)"
grep -q "no-such.yaml" err.txt || fail "TIPC_MANIFEST's file not named: $(cat err.txt)"
# ... and TIPC_INFER_PER_OP=1 runs the op-by-op schedule to the same result (bench prints a checksum-free
# timing, so compare the exported model's logits through infer --output-raw)
"$TIPC" train --data-path none -o DataLoader.synthetic_size=2 -o Arch.image_size=32 --batch-size 2 --epochs 1 \
    -o Global.eval_during_train=false --output-dir ck --threads 1 > train.txt 2>&1 || fail "train: $(tail -5 train.txt)"
"$TIPC" export --pretrained ck/latest.ckpt --save-inference-dir inf > exp.txt 2>&1 || fail "export: $(cat exp.txt)"
python3 - <<'PY' || fail "could not write the raw input"
import struct, random
random.seed(1)
open("in.raw", "wb").write(struct.pack("<%df" % (2 * 3 * 32 * 32), *[random.uniform(-2, 2) for _ in range(2 * 3 * 32 * 32)]))
PY
"$TIPC" infer --model-dir inf --batch-size 2 --input-raw in.raw --output-raw a.raw > a.txt 2>&1 || fail "infer: $(cat a.txt)"
TIPC_INFER_PER_OP=1 "$TIPC" infer --model-dir inf --batch-size 2 --input-raw in.raw --output-raw b.raw > b.txt 2>&1 ||
    fail "infer per op: $(cat b.txt)"
python3 - <<'PY' || fail "per-op inference differs from the pass schedule"
import struct
a = open("a.raw", "rb").read(); b = open("b.raw", "rb").read()
assert len(a) == len(b) and len(a) > 0, (len(a), len(b))
x = struct.unpack("<%df" % (len(a) // 4), a); y = struct.unpack("<%df" % (len(b) // 4), b)
d = max(abs(p - q) for p, q in zip(x, y))
assert d < 1e-4, d
PY
echo "ok: engine and prepare settings come from the option tables (bad values exit 2; good ones take effect)"
