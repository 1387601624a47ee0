#!/usr/bin/env bash
# test_train_litedata.sh: `tipc train` on the original's real lite data (../shared/data/lite_data.tar):
# the JPEG loader through the ImageFolder and list layouts, determinism for a seed, and a label
# out of range naming the list file. Skips (exit 77) when the data is absent.
set -u
. "$ROOT/tests/e2e/lib.sh"
T=${TIPC:?}
W=$TMPDIR/w
mkdir -p "$W"
# real JPEGs (lite data) through engine/data's loader: ImageFolder and list layouts, and a
# label out of range naming the list file
lite_data_tar   # sets TAR, or skips (exit 77) when ../shared/data/lite_data.tar is absent
tar -xf "$TAR" -C "$W" || fail "extract lite data"
L="$W/lite_data"
"$T" train --data-path "$L" -o Arch.width_mult=0.25 -o Arch.image_size=64 -o DataLoader.resize_size=73 --batch-size 4 \
    --epochs 1 --threads 1 --output-dir "$W/lite" >"$W/l.log" 2>&1 || { cat "$W/l.log"; fail "ImageFolder training"; }
grep -q "data: $L" "$W/l.log" && grep -q '^ \* Acc@1' "$W/l.log" || fail "ImageFolder log"
"$T" train --data-path "$L" -o Arch.width_mult=0.25 -o Arch.image_size=64 -o DataLoader.resize_size=73 --batch-size 4 \
    --epochs 1 --threads 1 --output-dir "$W/lite2" >/dev/null 2>&1 || fail "second ImageFolder run"
ckpt_same "$W/lite/latest.ckpt" "$W/lite2/latest.ckpt" || fail "loader-fed training not deterministic for a seed"
mkdir -p "$W/list"
ln -s "$L/train" "$W/list/train"; ln -s "$L/val" "$W/list/val"
(cd "$L" && find train -name '*.JPEG' | sort | awk '{print $0, NR % 4}') >"$W/list/train_list.txt"
(cd "$L" && find val -name '*.JPEG' | sort | awk '{print $0, NR % 4}') >"$W/list/val_list.txt"
"$T" train --data-path "$W/list" -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=64 --batch-size 4 \
    --epochs 1 --threads 1 --output-dir "$W/lst" >"$W/ls.log" 2>&1 || { cat "$W/ls.log"; fail "list-layout training"; }
sed -i '3s/ [0-9]*$/ 9/' "$W/list/train_list.txt"
"$T" train --data-path "$W/list" -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=64 --batch-size 4 \
    --epochs 1 --threads 1 --output-dir "$W/lst2" >"$W/lb.log" 2>&1
rc=$?; [ $rc -eq 3 ] || { cat "$W/lb.log"; fail "label out of range: exit $rc, want 3"; }
grep -q "train_list.txt:3: label 9 out of range \[0, 4)" "$W/lb.log" || { cat "$W/lb.log"; fail "label message"; }
[ -e "$W/lst2/latest.ckpt" ] && fail "checkpoint written despite bad labels"
echo ok
