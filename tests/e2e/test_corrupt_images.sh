# test_corrupt_images.sh: a damaged JPEG is an error naming the file (exit 3), or a skipped image
# with a warning under DataLoader.skip_bad, never silently used (engine/data/jpeg.c: libjpeg's
# warnings are errors, and every file is entropy-decoded to its end marker whatever crop is drawn).
#  1. infer: the demo image cut in half, cut to a third and with a block zeroed: exit 3 naming the
#     file and libjpeg's words; the whole image: exit 0;
#  2. train and eval on the real lite data with one train and one val JPEG cut to a third: exit 3
#     naming the file; with skip_bad=true the training passes and warns for each;
#  3. 40 random corruptions of lite-data JPEGs (cuts, changed bytes, zeroed blocks; fixed seed):
#     every cut is refused, and at least 30 of the 40 in all (libjpeg cannot see a change that
#     still decodes as valid entropy data).
. "$ROOT/tests/e2e/lib.sh"
W=$(mktemp -d "$TMPDIR/corrupt.XXXXXX")
cd "$W" || fail "cd"
tiny_model
# cut FILE FRACTION OUT / zero FILE OUT: damaged copies
cut_to() { head -c $(( $(stat -c %s "$1") * $2 / 100 )) "$1" > "$3"; }
zero_block() { cp "$1" "$2"; dd if=/dev/zero of="$2" bs=1 seek=$(( $(stat -c %s "$1") * 6 / 10 )) count=64 conv=notrunc 2> /dev/null; }

echo "# 1. the demo image, damaged"
D=$ROOT/images/demo.jpg
run_expect 0 whole.log "$TIPC" infer --model-dir inf --img-path "$D"
cut_to "$D" 50 half.jpg
cut_to "$D" 33 third.jpg
zero_block "$D" zeroed.jpg
for f in half third zeroed; do
    run_expect 3 "$f.log" "$TIPC" infer --model-dir inf --img-path "$f.jpg"
    log_has "$f.log" "image '$f.jpg': a damaged JPEG (libjpeg: "
    log_lacks "$f.log" "prob:"
done
log_has half.log "Premature end of JPEG file"

echo "# 2. the lite data with a cut train and val JPEG"
lite_data_tar
tar -xf "$TAR" || fail "extract lite data"
L=$PWD/lite_data
bad_train=$(find "$L/train" -name '*.JPEG' | sort | sed -n 5p)
bad_val=$(find "$L/val" -name '*.JPEG' | sort | sed -n 2p)
for f in "$bad_train" "$bad_val"; do cp "$f" "$f.orig"; cut_to "$f.orig" 33 "$f"; rm "$f.orig"; done
LITE=(--data-path "$L" -o Arch.width_mult=0.25 -o Arch.image_size=64 -o DataLoader.resize_size=73 --batch-size 4
      --epochs 1 --threads 1)
run_expect 3 lite-train.log "$TIPC" train "${LITE[@]}" --output-dir lite
log_has lite-train.log "$bad_train"
log_has lite-train.log "a damaged JPEG (libjpeg: "
run_expect 0 lite-skip.log "$TIPC" train "${LITE[@]}" -o DataLoader.skip_bad=true --output-dir lite-skip
log_has lite-skip.log "$bad_train"
log_has lite-skip.log "$bad_val"
log_has lite-skip.log "skipping"
run_expect 3 lite-eval.log "$TIPC" train "${LITE[@]}" --test-only --pretrained lite-skip/latest.ckpt
log_has lite-eval.log "$bad_val"

echo "# 3. random corruptions"
mkdir -p rnd
python3 - "$L" rnd <<'PY'
import glob, random, sys
random.seed(23)
src = sorted(f for f in glob.glob(sys.argv[1] + "/train/*/*.JPEG"))
for i in range(40):
    b = bytearray(open(src[i % len(src)], "rb").read())
    kind = ("cut", "bytes", "zero")[i % 3]
    if kind == "cut":
        b = b[:int(len(b) * random.uniform(0.2, 0.95))]
    elif kind == "bytes":
        for _ in range(random.randint(1, 20)):
            b[random.randint(len(b) // 10, len(b) - 3)] = random.randrange(256)
    else:
        p = random.randint(len(b) // 5, len(b) - 200)
        b[p:p + 100] = bytes(100)
    open("%s/%s%02d.jpg" % (sys.argv[2], kind, i), "wb").write(b)
PY
refused=0
for f in rnd/*.jpg; do
    timeout 60 "$TIPC" infer --model-dir inf --img-path "$f" > r.log 2>&1
    rc=$?
    case "$rc" in
        0) case "$f" in rnd/cut*) fail "$f (a cut file) was used";; esac ;;
        3) refused=$((refused + 1)); log_has r.log "image '$f': " ;;
        *) cat r.log; fail "$f: exit $rc" ;;
    esac
done
echo "refused $refused of 40 random corruptions"
[ "$refused" -ge 30 ] || fail "only $refused of 40 corrupted JPEGs were refused"
echo "ok"
