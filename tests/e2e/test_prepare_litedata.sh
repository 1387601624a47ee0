#!/usr/bin/env bash
# test_prepare_litedata.sh: `tipc prepare` of the original TIPC lite data (../shared/data/lite_data.tar)
# through a file:// URL, offline: sha256 verified, 16 train JPEGs in 1000 class folders extracted.
# Skips (exit 77) when the data is absent.
set -u
. "$ROOT/tests/e2e/lib.sh"
lite_data_tar
. "$ROOT/tests/e2e/lib_prepare.sh"
LITE=$(cd "$(dirname "$TAR")" && pwd)/lite_data.tar
W=$TMPDIR/work
mkdir -p "$W/configs/mobilenet_v3_small"
cd "$W" || exit 1
CFG=configs/mobilenet_v3_small/train_infer.txt
printf '%s\n' '===========================train_params===========================' \
    'model_name:mobilenet_v3_small' 'python:tipc' 'gpu_list:0' >"$CFG"
cat >m5.yaml <<EOT
version: 1
models:
  mobilenet_v3_small:
    items:
      lite_data:
        kind: dataset
        url: [file://$LITE]
        sha256: 8742241c249b45430a973ad834ed8fe4df6ded3c673f9869fa309f22fdd6aa1c
        archive: tar
        archive_root: lite_data
        dest: data/lite_data
    modes:
      lite_train_lite_infer: [lite_data]
EOT
expect 0 "$TIPC" prepare "$CFG" lite_train_lite_infer --manifest m5.yaml --offline --quiet
contains "$OUT" "fetched file://$LITE (sha256 verified)"
[ "$(find data/lite_data/train -name '*.JPEG' | wc -l)" -eq 16 ] || fail "real lite data: expected 16 train JPEGs"
[ "$(find data/lite_data/train -mindepth 1 -maxdepth 1 -type d | wc -l)" -eq 1000 ] || fail "real lite data: 1000 class folders"
echo PASS
