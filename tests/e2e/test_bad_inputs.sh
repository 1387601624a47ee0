#!/usr/bin/env bash
# test_bad_inputs.sh: inputs that used to hang, spin, eat memory or be noticed too late.
#  - FIFOs and devices where a regular file is expected (config, recipe, checkpoint, model, image
#    list, image list entry, --img-path /dev/zero): refused at once with "not a regular file";
#  - a JPEG declaring 30000x30000 pixels: refused from its header (exit 3, file named), by train
#    and by infer;
#  - DataLoader.skip_bad=true where every image is unreadable: exit 3 with a message, not a
#    busy loop;
#  - a read-only output folder: refused before training starts (train) and before any stage
#    (tipc run); a read-only checkout whose data folder cannot be made, with a synthetic-data recipe
#    and --output elsewhere, runs (prepare skips the folder with a note);
#  - temps of a killed checkpoint write: removed by the next training run when their process is
#    gone, kept when it is alive.
# Every command runs under `timeout`, so a regression hangs for seconds, not forever.
set -u
. "$ROOT/tests/e2e/lib.sh"   # tiny_recipe
T=${TIPC:?}
fail() { echo "FAIL: $*"; exit 1; }
W=$TMPDIR/w
mkdir -p "$W"
cd "$W" || exit 1
TINY="-o Arch.class_num=2 -o Arch.width_mult=0.25 -o Arch.image_size=64 --batch-size 2 --epochs 1 --threads 1"
# expect RC LOGNAME CMD...: run CMD under a 60 s timeout, keep its output in LOGNAME
expect() {
    local want=$1 log=$2; shift 2
    timeout 60 "$@" >"$log" 2>&1; local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$log"; fail "'$*' exited $rc, expected $want"; }
}
has() { grep -qF -- "$2" "$1" || { cat "$1"; fail "$1 lacks '$2'"; }; }

echo "# a tiny model, with stale temps of a killed save waiting in its output folder"
host=$(hostname | tr -d '\n' | head -c 32 | tr -c 'A-Za-z0-9-' '_')
sh -c 'exit 0' & dead=$!; wait $dead
mkdir -p out
head -c 1000 /dev/zero >"out/epoch_1.ckpt.tmp.$dead"                 # pre-2026 name, process gone
head -c 1000 /dev/zero >"out/latest.ckpt.tmp.$dead.$host.Abc123"      # ours, process gone
head -c 1000 /dev/zero >"out/latest.ckpt.tmp.$$.$host.Def456"         # ours, process alive (this shell)
echo "mine" >out/notes.tmp.1
expect 0 train.log "$T" train --data-path "$W/none" $TINY -o DataLoader.synthetic_size=4 --output-dir out
[ ! -e "out/epoch_1.ckpt.tmp.$dead" ] || fail "a stale pre-2026 checkpoint temp was kept"
[ ! -e "out/latest.ckpt.tmp.$dead.$host.Abc123" ] || fail "a stale checkpoint temp was kept"
[ -e "out/latest.ckpt.tmp.$$.$host.Def456" ] || fail "the temp of a live process was removed"
[ -e out/notes.tmp.1 ] || fail "a user's file was removed by the sweep"
has train.log "removed 'out/latest.ckpt.tmp.$dead.$host.Abc123'"
expect 0 export.log "$T" export --pretrained out/latest.ckpt --save-inference-dir inf

echo "# FIFOs and devices where a file is expected"
mkfifo fifo
printf '%s\n' '===========================train_params===========================' 'model_name:m' 'python:tipc' >cfg.txt
expect 2 run-fifo.log "$T" run fifo lite_train_lite_infer
has run-fifo.log "not a regular file"
expect 2 recipe-fifo.log "$T" train -c fifo --data-path "$W/none" $TINY
has recipe-fifo.log "cannot read recipe 'fifo': is a FIFO (named pipe), not a regular file"
expect 5 ckpt-fifo.log "$T" export --pretrained fifo --save-inference-dir inf2
has ckpt-fifo.log "cannot read checkpoint 'fifo': is a FIFO (named pipe), not a regular file"
mkdir -p inf-fifo && mkfifo inf-fifo/inference.tipc
expect 5 model-fifo.log "$T" infer --model-dir inf-fifo --img-path "$ROOT/images/demo.jpg"
has model-fifo.log "not a regular file"
expect 3 devzero.log "$T" infer --model-dir inf --img-path /dev/zero
has devzero.log "image '/dev/zero': cannot open: is a character device, not a regular file"
mkdir -p listfifo && mkfifo listfifo/train_list.txt listfifo/val_list.txt
expect 3 list-fifo.log "$T" train --data-path listfifo $TINY --output-dir out2
has list-fifo.log "is a FIFO (named pipe), not a regular file"
mkdir -p entryfifo && mkfifo entryfifo/a.jpg
printf "a.jpg 0\na.jpg 1\n" >entryfifo/train_list.txt && cp entryfifo/train_list.txt entryfifo/val_list.txt
expect 3 entry-fifo.log "$T" train --data-path entryfifo $TINY --output-dir out3
has entry-fifo.log "a.jpg': cannot open: is a FIFO (named pipe), not a regular file"

echo "# a JPEG declaring 30000x30000 pixels (progressive, a few KB)"
"$T" prepare --demo-jpeg small.jpg >/dev/null 2>&1 || fail "demo jpeg"
python3 - small.jpg big.jpg <<'EOF' || fail "crafting the JPEG"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = 2
while i < len(b):   # walk the markers to the frame header (SOF0/SOF2)
    assert b[i] == 0xFF
    m, n = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
    if m in (0xC0, 0xC2):
        b[i + 1] = 0xC2                                  # progressive
        b[i + 5:i + 9] = struct.pack(">HH", 30000, 30000)  # height, width
        break
    i += 2 + n
else:
    sys.exit("no SOF marker")
open(sys.argv[2], "wb").write(b)
EOF
[ "$(stat -c %s big.jpg)" -lt 200000 ] || fail "the crafted JPEG should be small"
expect 3 big-infer.log "$T" infer --model-dir inf --img-path big.jpg
has big-infer.log "image 'big.jpg': declares 30000x30000 pixels, more than tipc decodes"
mkdir -p bigset && cp big.jpg bigset/a.jpg && printf "a.jpg 0\na.jpg 1\n" >bigset/train_list.txt && cp bigset/train_list.txt bigset/val_list.txt
expect 3 big-train.log "$T" train --data-path bigset $TINY --output-dir out4
has big-train.log "a.jpg': declares 30000x30000 pixels"

echo "# skip_bad with every image unreadable: an error, not a busy loop"
mkdir -p allbad
for i in 1 2 3 4; do echo "not a jpeg" >"allbad/$i.jpg"; echo "$i.jpg 0"; done >allbad/train_list.txt
cp allbad/train_list.txt allbad/val_list.txt
start=$(date +%s)
expect 3 skipbad.log "$T" train --data-path allbad $TINY -o DataLoader.skip_bad=true --output-dir out5
has skipbad.log "no readable image in a whole epoch"
[ $(( $(date +%s) - start )) -le 30 ] || fail "skip_bad with no good image took too long"

echo "# a read-only output folder: refused before training / before any stage"
RO=$TMPDIR/ro
mkdir -p "$RO"
if mount -t tmpfs -o size=1m tmpfs "$RO" 2>/dev/null; then
    trap 'umount -l "$RO" 2> /dev/null' EXIT
    mkdir -p "$RO/out" && mount -o remount,ro "$RO"
    expect 5 ro-train.log "$T" train --data-path "$W/none" $TINY -o DataLoader.synthetic_size=4 --output-dir "$RO/out"
    has ro-train.log "output folder (Global.output_dir / --output-dir) '$RO/out' is not writable: Read-only file system"
    grep -q "Epoch\|epoch 0\|\[Train\]" ro-train.log && { cat ro-train.log; fail "training started before the check"; }
    mkdir -p run/configs && cp -r "$ROOT/configs/mobilenet_v3_small" run/configs/ && cp "$ROOT/configs/datasets.yaml" run/configs/
    (cd run && TIPC_OFFLINE=1 expect 5 ../ro-run.log "$T" run configs/mobilenet_v3_small/train_infer.txt lite_train_lite_infer --output "$RO/out")
    has ro-run.log "output folder '$RO/out' is not writable: Read-only file system"
    grep -q "Run successfully\|Run failed" ro-run.log && fail "stages ran with a read-only output"
    umount "$RO"
    echo "# a read-only checkout with a synthetic-data recipe and --output elsewhere: runs"
    mount -t tmpfs -o size=4m tmpfs "$RO" && mkdir -p "$RO/cfg" && ln -s "$ROOT/images" "$RO/images" &&
        cp "$ROOT/configs/datasets.yaml" "$RO/" || fail "read-only checkout"
    tiny_recipe 1 > "$RO/cfg/tiny.yaml"
    sed -e 's|^gpu_list:.*|gpu_list:-1|' -e 's|configs/mobilenet_v3_small/mobilenet_v3_small.yaml|cfg/tiny.yaml|' \
        -e '/^inference:/,$ s|^--use-gpu:.*|--use-gpu:False|' "$ROOT/configs/mobilenet_v3_small/train_infer.txt" > "$RO/cfg/tiny.txt"
    mount -o remount,ro "$RO" || fail "remount read-only"
    (cd "$RO" && TIPC_OFFLINE=1 expect 0 "$W/ro-checkout.log" "$T" run cfg/tiny.txt lite_train_lite_infer --output "$W/ro-checkout-out")
    has ro-checkout.log "prepare: 'data/lite_data' cannot be made here (Read-only file system); not preparing it"
    has ro-checkout.log "4 passed, 0 failed, 0 skipped"
    umount "$RO" 2> /dev/null || umount -l "$RO"   # busy for a moment while the run's guard process exits
else
    echo "(not checked: cannot mount a tmpfs here)"
fi
echo "PASS"
