#!/usr/bin/env bash
# test_prepare_owner.sh: prepare removes only what it can prove it made.
#  - a user's data/lite_data (NOTES.txt, no train_list.txt, no marker) is refused, not replaced, by
#    `tipc prepare` (exit 3, the folder named with what to do) and by `tipc run` (before any stage);
#  - sibling folders lite_data.old-backup and lite_data.tmp-mine survive the leftover sweep, while
#    a temp of ours whose process is gone is removed and one of a live process is kept;
#  - a folder prepare made (it holds the marker) is still replaced by --force.
set -u
T=${TIPC:?}
fail() { echo "FAIL: $*"; exit 1; }
W=$TMPDIR/w
mkdir -p "$W/configs"
cp -r "$ROOT/configs/mobilenet_v3_small" "$W/configs/"
cp "$ROOT/configs/datasets.yaml" "$W/configs/"
cd "$W" || exit 1
CFG=configs/mobilenet_v3_small/train_infer.txt
export TIPC_OFFLINE=1

echo "# a user's folder is not ours: prepare refuses and keeps it"
mkdir -p data/lite_data && echo "my notes" >data/lite_data/NOTES.txt
"$T" prepare "$CFG" lite_train_lite_infer >p1.log 2>&1; rc=$?
cat p1.log
[ $rc -eq 3 ] || fail "prepare over a user folder exited $rc, expected 3"
grep -q "'data/lite_data' exists and was not made by tipc prepare" p1.log || fail "the error does not name the folder"
grep -q "hint: move it away" p1.log || fail "no hint on how to proceed"
[ "$(cat data/lite_data/NOTES.txt)" = "my notes" ] || fail "the user's folder was touched"
[ "$(ls -A data/lite_data)" = "NOTES.txt" ] || fail "files were added to the user's folder: $(ls -A data/lite_data)"

echo "# tipc run: the same refusal, before any stage"
"$T" run "$CFG" lite_train_lite_infer >r1.log 2>&1; rc=$?
cat r1.log | tail -5
[ $rc -eq 3 ] || fail "tipc run over a user folder exited $rc, expected 3"
grep -q "'data/lite_data' exists and was not made by tipc prepare" r1.log || fail "tipc run: no clear error"
grep -q "Run successfully\|Run failed" r1.log && fail "stages ran although the data was refused"
[ "$(ls -A data/lite_data)" = "NOTES.txt" ] || fail "tipc run touched the user's folder"

echo "# the sweep: only our own temps of dead processes"
rm -rf data/lite_data
host=$(hostname | tr -d '\n' | head -c 32 | tr -c 'A-Za-z0-9-' '_')
sh -c 'exit 0' & dead=$!; wait $dead
mkdir -p data/lite_data.old-backup data/lite_data.tmp-mine "data/lite_data.tmp.$dead.$host.abcdef" \
    "data/lite_data.tmp.$$.$host.ghijkl"
touch data/lite_data.old-backup/keep data/lite_data.tmp-mine/keep "data/lite_data.tmp.$dead.$host.abcdef/half.jpg"
"$T" prepare "$CFG" lite_train_lite_infer >p2.log 2>&1 || { cat p2.log; fail "prepare"; }
[ -f data/lite_data.old-backup/keep ] || fail "lite_data.old-backup was removed"
[ -f data/lite_data.tmp-mine/keep ] || fail "lite_data.tmp-mine was removed"
[ ! -e "data/lite_data.tmp.$dead.$host.abcdef" ] || fail "a stale temp of a dead process was kept"
[ -d "data/lite_data.tmp.$$.$host.ghijkl" ] || fail "the temp of a live process was removed"
grep -q "removed 'data/lite_data.tmp.$dead.$host.abcdef'" p2.log || { cat p2.log; fail "the sweep did not say what it removed"; }
[ -f data/lite_data/.tipc-prepared ] || fail "no marker in the prepared folder"

echo "# ours (marker): --force replaces it"
touch data/lite_data/extra
"$T" prepare "$CFG" lite_train_lite_infer --force >p3.log 2>&1 || { cat p3.log; fail "--force on our own folder"; }
[ ! -e data/lite_data/extra ] || fail "--force did not replace our folder"
echo "PASS"
