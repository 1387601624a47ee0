#!/usr/bin/env bash
# make-golden.sh: regenerate tests/fixtures/golden/ by running the ORIGINAL, unmodified TIPC harness
# scripts (bash) on each fixture config with a stub python that prints nothing and exits 0.
# It is a fixture generator for the lead's byte-for-byte runner tests, not a test itself, and it never
# runs our tipc binary.
#
# Usage:  scripts/golden/make-golden.sh ORIG_DIR [CONFIG_SRC_DIR]
#         scripts/golden/make-golden.sh --dialects HARNESS_DIR [CONFIG_SRC_DIR]
#           (each repo's own harness over that repo's configs: see scripts/golden/dialects.sh)
#         scripts/golden/make-golden.sh --benchmark HARNESS_DIR [CONFIG_SRC_DIR]
#           (each repo's benchmark_train.sh over its configs' train_benchmark_params: scripts/golden/benchmark.sh)
#
#   ORIG_DIR/step6/test_train_inference_python.sh   ORIG_DIR/step6/common_func.sh   (32-line family)
#   ORIG_DIR/ocr/test_train_inference_python.sh     ORIG_DIR/ocr/common_func.sh     (51-line family)
#   CONFIG_SRC_DIR (default /work/shared/tipc-configs): where `source_file` of INDEX.tsv is looked up
#   when a fixture has no config.txt yet. An existing config.txt is never overwritten.
#
# The fixture list is tests/fixtures/golden/INDEX.tsv (columns short_name, source_file, family, ...).
# Outputs per fixture dir and MODE: MODE.cmds MODE.files MODE.stdout MODE.results [MODE.stderr]
# [MODE.rc] [MODE.cmds.firstcolon]; see tests/fixtures/golden/README.md.
#
# Fetching the originals (third-party code: keep them OUT of this repository):
#   step6: PaddlePaddle/models, tutorials/mobilenetv3_prod/Step6/test_tipc/{test_train_inference_python.sh,
#          common_func.sh}. The harness last changed in 835aa642 (2022-06-27) and is unchanged at HEAD
#          8042c21b690f (2023-07-20); common_func.sh last changed in 47f7c7aa7881 (2022-05-18).
#            git clone --filter=blob:none https://github.com/PaddlePaddle/models && cd models &&
#            git checkout 8042c21b690f && cp tutorials/mobilenetv3_prod/Step6/test_tipc/{test_train_inference_python.sh,common_func.sh} ORIG_DIR/step6/
#   ocr:   PaddlePaddle/PaddleOCR test_tipc/test_train_inference_python.sh @ 038a933034c7eaaeb03142ac84b4183f24d2068f
#          and test_tipc/common_func.sh @ 057d1b389e6ff678ac93cb9150a97b864ffdf188:
#            curl -fsSLo ORIG_DIR/ocr/test_train_inference_python.sh https://raw.githubusercontent.com/PaddlePaddle/PaddleOCR/038a933034c7eaaeb03142ac84b4183f24d2068f/test_tipc/test_train_inference_python.sh
#            curl -fsSLo ORIG_DIR/ocr/common_func.sh https://raw.githubusercontent.com/PaddlePaddle/PaddleOCR/057d1b389e6ff678ac93cb9150a97b864ffdf188/test_tipc/common_func.sh
#   The sha256 sums below are those of the files the committed fixtures were made from; a mismatch stops
#   the script (set GOLDEN_ALLOW_MISMATCH=1 to go on anyway, e.g. to study another harness version).
#
# The only change made to the originals: a copy of common_func.sh gets one line at the top of
# status_check() that appends "STATUS<TAB>COMMAND" to $GOLDEN_CMDS. Nothing that builds commands is
# touched. For configs where the original's "value = text between 1st and 2nd ':'" rule differs from
# tipc's "value = everything after the 1st ':'", a second run with func_parser_value replaced by the
# first-colon rule writes MODE.cmds.firstcolon (derived data, marked as such in README/INDEX).
set -u -o pipefail
if [ "${1:-}" = --dialects ]; then shift; exec bash "$(dirname "$0")/dialects.sh" "$@"; fi
if [ "${1:-}" = --benchmark ]; then shift; exec bash "$(dirname "$0")/benchmark.sh" "$@"; fi

die() { printf 'make-golden: error: %s\n' "$*" >&2; exit 2; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: scripts/golden/make-golden.sh ORIG_DIR [CONFIG_SRC_DIR]"
orig=$(cd "$1" 2>/dev/null && pwd) || die "'$1': no such directory"
cfgsrc=${2:-/work/shared/tipc-configs}
root=$(cd "$(dirname "$0")/../.." && pwd)
fix="$root/tests/fixtures/golden"
index="$fix/INDEX.tsv"
[ -f "$index" ] || die "'$index' not found"

modes="lite_train_lite_infer lite_train_whole_infer whole_infer whole_train_whole_infer klquant_whole_infer"

declare -A want_sha=(
    [step6/test_train_inference_python.sh]=8d76e63f50ccf59a153012212d21b4877d15702c1067d1aa5389364576ba6da7
    [step6/common_func.sh]=2f81938a61c6b7b3f473bbfad23d6410136cbbbab038fc6bd7ed55f6cfa1c9a2
    [ocr/test_train_inference_python.sh]=4e51def973a779cc3e240739218089e3a02ecbabf8160e317aa3922a6101291e
    [ocr/common_func.sh]=104262e716e51c01343be71334e00ae70e9b1ff9651c95370c0083386ef46ccd
)
for f in "${!want_sha[@]}"; do
    [ -f "$orig/$f" ] || die "'$orig/$f' not found (see the top of this script for how to fetch it)"
    got=$(sha256sum "$orig/$f" | cut -d' ' -f1)
    if [ "$got" != "${want_sha[$f]}" ]; then
        [ "${GOLDEN_ALLOW_MISMATCH:-0}" = 1 ] || die "'$orig/$f': sha256 $got, expected ${want_sha[$f]} (other version?)"
        printf 'make-golden: warning: %s differs from the version the fixtures were made from\n' "$f" >&2
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/make-golden.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT

# status_check gets one extra line; the rest of common_func.sh is byte-identical.
patch_common() { # SRC DST
    sed '/^function status_check(){$/a\    if [ -n "${GOLDEN_CMDS:-}" ]; then printf '"'"'%s\\t%s\\n'"'"' "$1" "$2" >> "${GOLDEN_CMDS}"; fi' \
        "$1" > "$2"
    [ "$(grep -c GOLDEN_CMDS "$2")" = 1 ] || die "could not patch status_check in '$1'"
}
# Variant for the first-colon rule: value = everything after the first ':' (empty when none).
patch_firstcolon() { # FILE (already patched)
    cat >> "$1" <<'EOF'

function func_parser_value(){
    strs=$1
    if [[ ${strs} == *:* ]]; then echo "${strs#*:}"; else echo ""; fi
}
EOF
}

# Runs one harness invocation in a fresh fake repo root; writes results under $2.
run_harness() { # FAMILYDIR CONFIG MODE OUTPREFIX [firstcolon]
    local fam=$1 cfg=$2 mode=$3 out=$4 variant=${5:-}
    local w="$work/run" py
    rm -rf "$w"; mkdir -p "$w/root/test_tipc/configs/fixture" "$w/bin"
    cp "$orig/$fam/test_train_inference_python.sh" "$w/root/test_tipc/"
    patch_common "$orig/$fam/common_func.sh" "$w/root/test_tipc/common_func.sh"
    [ -n "$variant" ] && patch_firstcolon "$w/root/test_tipc/common_func.sh"
    cp "$cfg" "$w/root/test_tipc/configs/fixture/config.txt"
    # stub interpreters: the config's python: value plus the usual names
    py=$(awk -F: 'NR==3{print $2}' "$cfg")
    for p in python python3 python3.7 python3.10 ${py:+"$py"}; do
        printf '#!/bin/sh\nexit 0\n' > "$w/bin/$p"; chmod +x "$w/bin/$p"
    done
    (cd "$w/root" && find . | LC_ALL=C sort) > "$w/before"
    (cd "$w/root" && env -i PATH="$w/bin:/usr/bin:/bin" HOME="$w" LC_ALL=C GOLDEN_CMDS="$w/cmds" \
        bash test_tipc/test_train_inference_python.sh test_tipc/configs/fixture/config.txt "$mode" \
        > "$w/stdout" 2> "$w/stderr")
    echo $? > "$w/rc"
    touch "$w/cmds"
    if [ -n "$variant" ]; then cp "$w/cmds" "$out.cmds.firstcolon"; return; fi
    cp "$w/cmds" "$out.cmds"
    cp "$w/stdout" "$out.stdout"
    (cd "$w/root" && find . | LC_ALL=C sort) > "$w/after"
    LC_ALL=C comm -13 "$w/before" "$w/after" | while IFS= read -r p; do
        if [ -d "$w/root/$p" ]; then printf '%s/\n' "${p#./}"; else printf '%s\n' "${p#./}"; fi
    done > "$out.files"
    : > "$out.results"
    local r; r=$(grep '/results_python\.log$' "$out.files" | head -n1)
    [ -n "$r" ] && cp "$w/root/$r" "$out.results"
    rm -f "$out.stderr" "$out.rc"
    [ -s "$w/stderr" ] && cp "$w/stderr" "$out.stderr"
    [ "$(cat "$w/rc")" = 0 ] || cp "$w/rc" "$out.rc"
    return 0
}

n=0
while IFS=$'\t' read -r short src family harness _rest; do
    case "$short" in ''|short_name|'#'*) continue ;; esac
    d="$fix/$short"
    mkdir -p "$d"
    if [ ! -f "$d/config.txt" ]; then
        [ -f "$cfgsrc/$src" ] || die "$short: no config.txt and '$cfgsrc/$src' not found"
        cp "$cfgsrc/$src" "$d/config.txt"
    fi
    case "$family" in 32) fam=step6 ;; 51) fam=ocr ;; *) die "$short: family '$family' is not 32 or 51" ;; esac
    case "$harness" in "$fam"@*) ;; *) die "$short: harness column '$harness' does not match family $family" ;; esac
    for m in $modes; do
        run_harness "$fam" "$d/config.txt" "$m" "$d/$m"
        rm -f "$d/$m.cmds.firstcolon"
        case "$_rest" in *colon-difference*)
            run_harness "$fam" "$d/config.txt" "$m" "$d/$m" firstcolon
            cmp -s "$d/$m.cmds" "$d/$m.cmds.firstcolon" && rm -f "$d/$m.cmds.firstcolon" ;;
        esac
    done
    n=$((n + 1))
    printf '%-22s %s\n' "$short" "$(cat "$d"/*.cmds | wc -l) commands"
done < "$index"
printf 'make-golden: %d fixtures written under %s\n' "$n" "${fix#"$root"/}"
