#!/usr/bin/env bash
# test_prepare_mode.sh: `tipc prepare CONFIG MODE` driven by a manifest: a dataset fetched from
# a local HTTP server, verified, extracted and marked; a second prepare that touches nothing;
# --offline making the synthetic default without any request; an upstream that fails falling
# back; bad manifests (no sha256, unknown key, unknown mode) with file:line and exit codes; and
# the repository's own configs/datasets.yaml giving a fresh directory a dataset offline, fast.
set -u
. "$ROOT/tests/e2e/lib_prepare.sh"
W=$TMPDIR/work
mkdir -p "$W/configs/mobilenet_v3_small" "$TMPDIR/pkg/lite_data/train/c0"
cd "$W" || exit 1
CFG=configs/mobilenet_v3_small/train_infer.txt
printf '%s\n' '===========================train_params===========================' \
    'model_name:mobilenet_v3_small' 'python:tipc' 'gpu_list:0' >"$CFG"

# a small dataset tarball in the PaddleClas layout, served over HTTP
"$TIPC" prepare --demo-jpeg "$TMPDIR/pkg/lite_data/train/c0/a.jpg" >/dev/null || fail "demo jpeg"
echo "train/c0/a.jpg 0" >"$TMPDIR/pkg/lite_data/train_list.txt"
tar -C "$TMPDIR/pkg" -cf "$SRV/lite.tar" lite_data
SHA=$(sha256sum "$SRV/lite.tar" | cut -d' ' -f1)
start_server

manifest() {   # manifest URL SHA [extra item lines]
    cat <<EOT
version: 1
models:
  mobilenet_v3_small:
    items:
      lite_data:
        kind: dataset
        url: [$1]
        sha256: $2
        archive: tar
        archive_root: lite_data
        dest: data/lite_data
        fallback: synthetic
        synthetic: {classes: 3, train_per_class: 2, val_per_class: 1}
$3
    modes:
      lite_train_lite_infer: [lite_data]
EOT
}
manifest "$BASE/files/lite.tar" "$SHA" "" >m1.yaml

echo "# fetched, verified, extracted, marked"
expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m1.yaml --quiet
contains "$OUT" "'data/lite_data': fetched $BASE/files/lite.tar (sha256 verified)"
cmp "$TMPDIR/pkg/lite_data/train/c0/a.jpg" data/lite_data/train/c0/a.jpg || fail "dataset content differs"
[ -f data/lite_data/.tipc-prepared ] || fail "no marker"
n=$(requests /files/lite.tar)
[ "$n" -eq 1 ] || fail "expected 1 request, got $n"

echo "# second prepare: nothing downloaded or rewritten"
expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m1.yaml
contains "$OUT" "'data/lite_data' is ready ($BASE/files/lite.tar); nothing to do"
[ "$(requests /files/lite.tar)" -eq 1 ] || fail "second prepare hit the server"

echo "# --force re-extracts from the verified cache, still without a request"
expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m1.yaml --force
contains "$OUT" "used the cached copy of"
[ "$(requests /files/lite.tar)" -eq 1 ] || fail "--force re-downloaded a verified file"

echo "# --offline: synthetic default, no request"
rm -rf data
expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m1.yaml --offline
contains "$OUT" "offline, made the synthetic default (3 classes, 6 train + 3 val JPEGs)"
[ "$(wc -l <data/lite_data/train_list.txt)" -eq 6 ] || fail "synthetic train list"
[ "$(requests /files/lite.tar)" -eq 1 ] || fail "--offline made a request"

echo "# concurrent prepares (ranks sharing a directory) and leftovers of an interrupted one"
host=$(hostname | tr -d '\n' | head -c 32 | tr -c 'A-Za-z0-9-' '_')
sh -c 'exit 0' & dead=$!; wait $dead
stale="data/lite_data.tmp.$dead.$host.abc123"   # a temp of ours whose process is gone
rm -rf data && mkdir -p "$stale" && touch "$stale/half.jpg"
"$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m1.yaml --offline >p1.out 2>&1 & p1=$!
"$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m1.yaml --offline >p2.out 2>&1 & p2=$!
wait $p1 || fail "first concurrent prepare failed: $(cat p1.out)"
wait $p2 || fail "second concurrent prepare failed: $(cat p2.out)"
[ "$(cat p1.out p2.out | grep -c 'made the synthetic default')" -eq 1 ] || { cat p1.out p2.out; fail "both made the dataset"; }
[ "$(cat p1.out p2.out | grep -c 'is ready')" -eq 1 ] || { cat p1.out p2.out; fail "one should find it ready"; }
[ ! -e "$stale" ] || fail "leftover temp dir not removed"

echo "# upstream 404: falls back to synthetic, says why"
rm -rf data
manifest "$BASE/files/gone.tar" "$SHA" "" >m2.yaml
expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m2.yaml --quiet --retries 0
contains "$OUT" "prepare: note: cannot fetch '$BASE/files/gone.tar': server answered HTTP 404"
contains "$OUT" "no source could be fetched (see above), made the synthetic default"
case "$OUT" in *error:*) fail "a fallback by design printed error: $OUT" ;; esac

echo "# a body longer than the manifest's size is cut, its .part removed, the fallback used"
rm -rf data
manifest "$BASE/endless/lite.tar" "$SHA" "        size: $(stat -c %s "$SRV/lite.tar")" >m6.yaml
expect 0 timeout 60 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m6.yaml --quiet --retries 0
contains "$OUT" "the download is larger than $(stat -c %s "$SRV/lite.tar") bytes"
contains "$OUT" "made the synthetic default"
[ -z "$(ls -A data/.tipc-cache 2>/dev/null)" ] || fail "the cut download left: $(ls -A data/.tipc-cache)"

echo "# bad manifests"
manifest "$BASE/files/lite.tar" "" "" | sed '/sha256:/d' >m3.yaml
expect 3 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m3.yaml
contains "$OUT" "m3.yaml:5: item 'lite_data' has a url but no valid sha256"
manifest "$BASE/files/lite.tar" "$SHA" "        colour: blue" >m4.yaml
expect 2 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m4.yaml
contains "$OUT" "m4.yaml:14: unknown key 'colour' in item 'lite_data'"
expect 2 "$TIPC" prepare "$CFG" whole_infer --manifest m1.yaml
contains "$OUT" "has no mode 'whole_infer'"
expect 2 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest nope.yaml
expect 2 "$TIPC" prepare "$CFG"

echo "# the repository's manifest on a fresh directory, offline by env: seconds, no network"
rm -rf data
cp "$ROOT/configs/datasets.yaml" configs/datasets.yaml
start=$(date +%s)
TIPC_OFFLINE=1 expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer
contains "$OUT" "'data/lite_data': offline, made the synthetic default (10 classes, 100 train + 40 val JPEGs)"
[ $(( $(date +%s) - start )) -le 20 ] || fail "offline prepare took too long"
[ "$(wc -l <data/lite_data/val_list.txt)" -eq 40 ] || fail "synthetic val list"
TIPC_OFFLINE=1 expect 0 "$TIPC" prepare "$CFG" whole_infer
contains "$OUT" "is ready"
contains "$OUT" "mobilenet_v3_small_pretrained.ckpt' (pretrained): no download is published; it is optional, nothing made"
ls -a data | grep -q '\.tmp\.' && fail "temp dirs left in data/"
[ ! -e pretrain_models ] || fail "an optional item without a download created files"
echo "PASS"
