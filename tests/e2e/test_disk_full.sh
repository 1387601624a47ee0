#!/usr/bin/env bash
# test_disk_full.sh: a real, small tmpfs runs out of space.
#  1. `tipc prepare --force` extracting an archive bigger than the free space: exit 3 naming
#     ENOSPC, nothing published, the previous dataset (made by prepare) byte-identical, no temp
#     dir left.
#  2. `tipc export` into a folder with room for the new inference.tipc but not the .onnx: exit 5
#     with errno text, and the old pair still there and matching (byte-identical), no temps left.
set -u
T=${TIPC:?}
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (makes the test archive)"; exit 77; }
MNT=$TMPDIR/mnt
mkdir -p "$MNT"
mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)"; exit 77; }
trap 'cd /; umount "$MNT" 2>/dev/null' EXIT

echo "# 1. extraction runs out of space"
W=$MNT/work
mkdir -p "$W/configs/m" "$W/data" "$TMPDIR/cache" "$TMPDIR/pkg/d/train/c0"
ln -s "$TMPDIR/cache" "$W/data/.tipc-cache"   # the download cache lives off the small disk
printf '%s\n' '===========================train_params===========================' 'model_name:m' 'python:tipc' >"$W/configs/m/train_infer.txt"
# 3 MB of incompressible images and a real list: more than the 2 MB disk holds
python3 - "$TMPDIR/pkg/d" <<'EOF'
import os, sys
root = sys.argv[1]
with open(os.path.join(root, "train_list.txt"), "w") as lst:
    for i in range(12):
        with open(os.path.join(root, "train/c0/%02d.jpg" % i), "wb") as f:
            f.write(os.urandom(256 * 1024))
        lst.write("train/c0/%02d.jpg 0\n" % i)
EOF
tar -C "$TMPDIR/pkg" -cf "$TMPDIR/d.tar" d
SHA=$(sha256sum "$TMPDIR/d.tar" | cut -d' ' -f1)
# the previous dataset: a small synthetic one made by prepare (it carries prepare's marker)
cat >"$W/configs/datasets.yaml" <<EOT
version: 1
models:
  m:
    items:
      d:
        url: [file://$TMPDIR/d.tar]
        sha256: $SHA
        archive: tar
        archive_root: d
        dest: data/d
        fallback: synthetic
        synthetic: {classes: 2, train_per_class: 2, val_per_class: 1}
    modes:
      lite_train_lite_infer: [d]
EOT
cd "$W" || exit 1
# made through prepare's own synthetic fallback: the same manifest with an unreachable url
sed "s#file://$TMPDIR/d.tar#file://$TMPDIR/absent.tar#" configs/datasets.yaml >configs/old.yaml
"$T" prepare configs/m/train_infer.txt lite_train_lite_infer --manifest configs/old.yaml --quiet >"$TMPDIR/old.log" 2>&1 \
    || { cat "$TMPDIR/old.log"; fail "making the old dataset"; }
grep -q "made the synthetic default" "$TMPDIR/old.log" || { cat "$TMPDIR/old.log"; fail "old dataset not synthetic"; }
(cd data/d && find . -type f | sort | xargs sha256sum) >"$TMPDIR/old.sums"
cp "$TMPDIR/d.tar" "$TMPDIR/cache/d.tar"   # verified cache: no fetch, straight to extraction
"$T" prepare configs/m/train_infer.txt lite_train_lite_infer --force --quiet >"$TMPDIR/p.log" 2>&1; rc=$?
cat "$TMPDIR/p.log"
[ $rc -eq 3 ] || fail "extraction onto a full disk exited $rc, expected 3"
grep -q "No space left on device" "$TMPDIR/p.log" || fail "the error does not say the disk is full"
grep -q "sha256 verified" "$TMPDIR/p.log" && fail "a failed extraction was reported as done"
(cd data/d && find . -type f | sort | xargs sha256sum) | cmp -s - "$TMPDIR/old.sums" || fail "the previous dataset changed"
left=$(ls -A data | grep -v '^\.tipc-cache$' | grep -v '^d$' | grep -v '^d\.lock$')
[ -z "$left" ] || fail "debris left in data/: $left"

echo "# 2. export runs out of space after the first file of the pair"
cd "$TMPDIR" || exit 1
umount "$MNT"
mount -t tmpfs -o size=16m tmpfs "$MNT" || fail "remount"
for k in 1 2; do
    "$T" train --data-path "$TMPDIR/none" -o Arch.class_num=5 -o Arch.width_mult=0.5 -o Arch.image_size=64 \
        -o DataLoader.synthetic_size=10 --batch-size 5 --epochs 1 --threads 1 --seed $k --output-dir "$TMPDIR/out$k" \
        >"$TMPDIR/train$k.log" 2>&1 || { cat "$TMPDIR/train$k.log"; fail "train $k"; }
done
INF=$MNT/inf
"$T" export --pretrained "$TMPDIR/out1/latest.ckpt" --save-inference-dir "$INF" >x1.log 2>&1 || { cat x1.log; fail "first export"; }
cp "$INF/inference.tipc" old.tipc && cp "$INF/inference.onnx" old.onnx
tsize=$(stat -c %s old.tipc)
# leave room for exactly the pages of a new .tipc: the old code replaced .tipc first and then ran
# out of space on the .onnx (a new .tipc beside an old .onnx); the pair must stay the old one
free=$(( $(stat -f -c '%a * %S' "$MNT") ))
fill=$(( free - (tsize + 4095) / 4096 * 4096 ))
[ $fill -gt 0 ] || fail "tmpfs too small for the test ($free bytes free)"
head -c "$fill" /dev/zero >"$MNT/filler" 2>/dev/null
"$T" export --pretrained "$TMPDIR/out2/latest.ckpt" --save-inference-dir "$INF" >x2.log 2>&1; rc=$?
cat x2.log
[ $rc -eq 5 ] || fail "export onto a full disk exited $rc, expected 5"
grep -q "No space left on device" x2.log || fail "the export error lacks errno text"
cmp -s old.tipc "$INF/inference.tipc" || fail "inference.tipc was replaced although the pair failed"
cmp -s old.onnx "$INF/inference.onnx" || fail "inference.onnx changed"
# the set is inference.tipc, inference.onnx and the label list the ONNX model names
[ "$(ls -A "$INF" | sort | tr '\n' ' ')" = "inference.onnx inference.tipc label_list.txt " ] || fail "debris in the export folder: $(ls -A "$INF")"
rm -f "$MNT/filler"
"$T" export --pretrained "$TMPDIR/out2/latest.ckpt" --save-inference-dir "$INF" >x3.log 2>&1 || { cat x3.log; fail "export with room"; }
cmp -s old.tipc "$INF/inference.tipc" && fail "the new export did not replace the pair"
echo "PASS"
