#!/usr/bin/env bash
# dialects.sh: regenerate tests/fixtures/golden/dialects/ by running each Paddle repo's OWN,
# unmodified harness (bash, stub pythons, no network) over that repo's 51-line configs in
# /work/shared/tipc-configs: the four modes (the template also its klquant_whole_infer) plus three
# failure runs (train, export, inference fail). Stores transcripts only, never the harnesses. Called as `make-golden.sh --dialects DIR`.
#
# DIR/<repo>/ holds the harness and its helper, fetched at these commits (third-party code: keep it
# out of this repository), e.g. `git clone https://github.com/PaddlePaddle/PaddleClas && git -C
# PaddleClas show d178931f...:test_tipc/test_train_inference_python.sh > DIR/clas/...`:
#   clas  PaddleClas      d178931fca432204e6b7422bac4f92e09ff22fa4  test_tipc/{test_train_inference_python.sh,common_func.sh}
#   det   PaddleDetection 666f597fd00d3157e84dd9fb2dd3f40bf9918ebc  test_tipc/{test_train_inference_python.sh,utils_func.sh}
#   seg   PaddleSeg       d7975e7cb3b9102eae4eabcef5afb81b878473aa  test_tipc/{test_train_inference_python.sh,common_func.sh}
#   ocr   PaddleOCR       f773f2c9b5e4065058067873d116d9c6c2d1e617  test_tipc/test_train_inference_python.sh,
#                         common_func.sh @ 057d1b389e6ff678ac93cb9150a97b864ffdf188
#   tmpl  PaddlePaddle/models 8042c21b690ffc0162095e749a41b94dd38732da
#                         tutorials/tipc/train_infer_python/template/test/{test_train_inference_python.sh,common_func.sh}
#
# How the commands are captured without touching the harness: bash reads $BASH_ENV before the
# script; ours sets `set -T` and a RETURN trap that, when status_check returns, appends its
# arguments ($1 = status, $2 = command string, exactly as built) to a file. The stub interpreter is
# scripts/golden/stub-python; `sleep` is a no-op stub (PaddleClas sleeps 5 s around each step).
#
# Transcript per config, tests/fixtures/golden/dialects/<repo>/<name>.golden, one section per run:
#   ### run MODE FAIL          (FAIL: -, train, export or infer)
#   env<TAB>NAME=VALUE         the stub's settings for this run (see stub-python)
#   results PATH               results_python.log, relative to the repo root (none: no log written)
#   cmd<TAB>STATUS<TAB>COMMAND one per status_check, in order; the root's absolute path is @ROOT@
#   file<TAB>PATH              every path the run created (folders end in /), sorted
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
die() { printf 'make-golden --dialects: error: %s\n' "$*" >&2; exit 2; }

orig=$(cd "$1" 2>/dev/null && pwd) || die "'$1': no such directory"
cfgsrc=${2:-/work/shared/tipc-configs}
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/tests/fixtures/golden/dialects"
[ -f "$cfgsrc/INDEX.tsv" ] || die "'$cfgsrc/INDEX.tsv' not found"

declare -A helper=([clas]=common_func.sh [det]=utils_func.sh [seg]=common_func.sh [ocr]=common_func.sh [tmpl]=common_func.sh)
declare -A want_sha=(
    [clas]=54da8a848c08470851a511b0149ff560d3213612ba53eba12b9986be98e62b24
    [det]=7539bfa0dfb0e7d9144b97aa55a0c3a64547842329c1c7ea32abc32c25a27f98
    [seg]=8c492e314236d665cf42d3b04bd7f75d7b17f44e97fde39191a3579b01070e9a
    [ocr]=e569b46adbc5c53a1b4091fe93fa1b2a940a6b407d22fa51f224ceba872045cb
    [tmpl]=48bb6079b51812cf7c86c28c29eaeed23d657431f13efeae7e1fd23a8b8527be
)
declare -A repo_of=([PaddlePaddle/PaddleClas]=clas [PaddlePaddle/PaddleDetection]=det [PaddlePaddle/PaddleSeg]=seg
                    [PaddlePaddle/PaddleOCR]=ocr [PaddlePaddle/models]=tmpl)
repos=${GOLDEN_REPOS:-"clas det seg ocr tmpl"}
for r in $repos; do
    h="$orig/$r/test_train_inference_python.sh"
    [ -f "$h" ] && [ -f "$orig/$r/${helper[$r]}" ] || die "'$orig/$r/' lacks the harness or ${helper[$r]}"
    got=$(sha256sum "$h" | cut -d' ' -f1)
    [ "$got" = "${want_sha[$r]}" ] || die "$h: sha256 $got, expected ${want_sha[$r]}"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/golden-dialects.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
cat > "$work/capture.sh" <<'CAP'
set -T
trap '[ "${FUNCNAME[0]:-}" = status_check ] && printf "%s\t%s\n" "$1" "$2" >> "$GOLDEN_CMDS"' RETURN
CAP
stub_tools "$work/bin" sleep

run_one() { # REPO CFG MODE FAIL -> appends a section to $dst
    local r=$1 cfg=$2 mode=$3 fail=$4 w="$work/run" p model sub
    rm -rf "$w"; mkdir -p "$w/root/test_tipc/configs/golden" "$w/root/deploy" "$w/bin"
    cp "$orig/$r/test_train_inference_python.sh" "$orig/$r/${helper[$r]}" "$w/root/test_tipc/"
    cp "$cfg" "$w/root/test_tipc/configs/golden/config.txt"
    for p in python python3 python3.7 python3.10 $(val "$cfg" 2); do
        cp "$root/scripts/golden/stub-python" "$w/bin/$p"
    done
    model=$(val "$cfg" 1)
    local -a env=(GOLDEN_TRAIN="$(first_script "$cfg" 15 16 17 18 19)"
                  GOLDEN_SAVE_KEY="$(key "$cfg" 7 | sed 's/^-o //')")
    case $r in
        clas) sub=$model; [[ $model == *GeneralRecognition* || $model == *MetaBIN_ResNet50* ]] && sub=RecModel
              env+=(GOLDEN_TRAIN_SUB="$sub") ;;
        ocr) env+=(GOLDEN_TRAIN_SUB=) ;;
    esac
    case $fail in
        train) env+=(GOLDEN_FAIL="$(first_script "$cfg" 15 16 17 18 19)") ;;
        export) env+=(GOLDEN_FAIL="$(first_script "$cfg" 29 30 31 32 33)") ;;
        infer) env+=(GOLDEN_FAIL="$(first_script "$cfg" 39)") ;;
    esac
    snapshot "$w/root" > "$w/before"
    (cd "$w/root" && env -i PATH="$w/bin:$work/bin:/usr/bin:/bin" HOME="$w" LC_ALL=C BASH_ENV="$work/capture.sh" \
        GOLDEN_CMDS="$w/cmds" "${env[@]}" \
        bash test_tipc/test_train_inference_python.sh test_tipc/configs/golden/config.txt "$mode" > "$w/stdout" 2> "$w/stderr")
    touch "$w/cmds"
    snapshot "$w/root" > "$w/after"
    {
        printf '### run %s %s\n' "$mode" "$fail"
        printf 'env\t%s\n' "${env[@]}"
        local res; res=$(cd "$w/root" && find . -name results_python.log | sed 's|^\./||' | LC_ALL=C sort | head -n1)
        printf 'results %s\n' "${res:-none}"
        sed "s|$w/root|@ROOT@|g; s|^|cmd\t|" "$w/cmds"
        new_files "$w/root" "$w/before" "$w/after"
    } >> "$dst"
}

n=0
while IFS=$'\t' read -r file repo _path _commit _model _nl kind _nlend; do
    case "$kind" in train_infer_51line*) ;; *) continue ;; esac
    r=${repo_of[$repo]:-}
    [ -n "$r" ] || continue
    [[ " $repos " == *" $r "* ]] || continue
    name=${file#*__test_tipc__configs__}; name=${name#*__template__test__}; name=${name%.txt}
    if [ "$r" = tmpl ]; then name=${file#models__}; name=${name%%__*}__${name##*__}; name=${name%.txt}; fi
    mkdir -p "$out/$r"
    cp "$cfgsrc/$file" "$out/$r/$name.txt"
    dst="$out/$r/$name.golden"
    : > "$dst"
    modes="lite_train_lite_infer lite_train_whole_infer whole_infer whole_train_whole_infer"
    [ "$r" = tmpl ] && modes="$modes klquant_whole_infer" # the template's own fifth mode
    for m in $modes; do
        run_one "$r" "$cfgsrc/$file" "$m" -
    done
    for f in train export infer; do run_one "$r" "$cfgsrc/$file" lite_train_lite_infer "$f"; done
    n=$((n + 1))
    printf '%-5s %-70s %4d commands\n' "$r" "$name" "$(grep -c '^cmd' "$dst")"
done < "$cfgsrc/INDEX.tsv"
printf 'make-golden --dialects: %d configs written under %s\n' "$n" "${out#"$root"/}"
