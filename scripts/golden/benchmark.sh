#!/usr/bin/env bash
# benchmark.sh: regenerate tests/fixtures/golden/benchmark/ by running each Paddle repo's OWN,
# unmodified `test_tipc/benchmark_train.sh CONFIG benchmark_train [PARAMS]` (which runs that repo's
# test_train_inference_python.sh once per batch size x precision x layout, then Paddle's analysis
# script) with stub interpreters, over every config in /work/shared/tipc-configs that has a
# train_benchmark_params section. Stores transcripts only, never the scripts. Called as
# `make-golden.sh --benchmark DIR`.
#
# DIR/<repo>/ holds the two harness files of scripts/golden/dialects.sh plus benchmark_train.sh,
# fetched at these commits (third-party code: keep it out of this repository):
#   clas  PaddleClas      d178931fca432204e6b7422bac4f92e09ff22fa4  test_tipc/benchmark_train.sh (last changed e1a4c80a)
#   det   PaddleDetection 666f597fd00d3157e84dd9fb2dd3f40bf9918ebc  test_tipc/benchmark_train.sh (last changed 7ec8ffaf)
#   seg   PaddleSeg       d7975e7cb3b9102eae4eabcef5afb81b878473aa  test_tipc/benchmark_train.sh (last changed 47006bd1)
# PaddleOCR's (2 configs) is not covered: its repository is too big to fetch here.
#
# Two runs per config: no PARAMS (the script's default layouts) and `dynamic_bsB_FP_DP_N1C1` (B, FP:
# the section's first batch size and precision), which takes the one-card branch with its profiling
# run. The stubs: `python` (scripts/golden/stub-python; it stands for the trainer and for
# BENCHMARK_ROOT/scripts/analysis.py, so no speed record is written), `pip` (no paddle installed),
# `sleep`. Captured as in dialects.sh, through $BASH_ENV (it reaches the inner harness too): every
# status_check's status and command, plus the FLAGS_* environment at that moment.
#
# Transcript per config, tests/fixtures/golden/benchmark/<repo>/<name>.golden, one section per run:
#   ### run PARAMS             (PARAMS: - for none)
#   env<TAB>NAME=VALUE         the stub's settings for this run (clas: see stub-python)
#   harness<TAB>LINE           each inner-harness invocation the script echoes, in order
#   cmd<TAB>STATUS<TAB>COMMAND<TAB>FLAGS   one per status_check (inner trains, outer analysis), in
#                              order; FLAGS: the FLAGS_* variables set then, sorted, space-separated
#   file<TAB>PATH              every path the run created (folders end in /), sorted
# The fake repository root is named after the repo (PaddleClas, ...): the log names start with it.
# Its absolute path is @ROOT@.
set -u -o pipefail
. "$(dirname "$0")/lib.sh"
die() { printf 'make-golden --benchmark: error: %s\n' "$*" >&2; exit 2; }

orig=$(cd "$1" 2>/dev/null && pwd) || die "'$1': no such directory"
cfgsrc=${2:-/work/shared/tipc-configs}
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/tests/fixtures/golden/benchmark"
[ -f "$cfgsrc/INDEX.tsv" ] || die "'$cfgsrc/INDEX.tsv' not found"

declare -A helper=([clas]=common_func.sh [det]=utils_func.sh [seg]=common_func.sh)
declare -A want_sha=(
    [clas]=8424a12fac0e538a138cede2a9ba3d11b3b060dd2f51d18f3658b77c51eeffda
    [det]=4b202c6f0418a5255e94ecc52370b7ec2f00151521add13bbf24c6fb3c837a33
    [seg]=7f4470a01133d7ed772e7b0b13ae5601405f2d2a5477e7ff9cc577202985bd05
)
declare -A repo_of=([PaddlePaddle/PaddleClas]=clas [PaddlePaddle/PaddleDetection]=det [PaddlePaddle/PaddleSeg]=seg)
declare -A root_name=([clas]=PaddleClas [det]=PaddleDetection [seg]=PaddleSeg)
repos=${GOLDEN_REPOS:-"clas det seg"}
for r in $repos; do
    for f in test_train_inference_python.sh "${helper[$r]}" benchmark_train.sh; do
        [ -f "$orig/$r/$f" ] || die "'$orig/$r/$f' not found (see the top of this script)"
    done
    got=$(sha256sum "$orig/$r/benchmark_train.sh" | cut -d' ' -f1)
    [ "$got" = "${want_sha[$r]}" ] || [ "${GOLDEN_ALLOW_MISMATCH:-0}" = 1 ] \
        || die "$orig/$r/benchmark_train.sh: sha256 $got, expected ${want_sha[$r]}"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/golden-benchmark.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT
cat > "$work/capture.sh" <<'CAP'
set -T
trap '[ "${FUNCNAME[0]:-}" = status_check ] && printf "%s\t%s\t%s\n" "$1" "$2" "$(env | grep "^FLAGS_" | LC_ALL=C sort | tr "\n" " " | sed "s/ $//")" >> "$GOLDEN_CMDS"' RETURN
CAP
stub_tools "$work/bin" sleep pip
# the section's first batch size and precision: the physical line after the header, and the next
bench_first() { # CFG -> "BS FP"
    local n; n=$(grep -n -w train_benchmark_params "$1" | head -n1 | cut -d: -f1)
    local bs fp
    bs=$(sed -n "$((n + 1))p" "$1" | cut -d: -f2 | cut -d'|' -f1)
    fp=$(sed -n "$((n + 2))p" "$1" | cut -d: -f2 | cut -d'|' -f1)
    printf '%s %s' "$bs" "$fp"
}

run_one() { # REPO CFG PARAMS -> appends a section to $dst
    local r=$1 cfg=$2 params=$3 w="$work/run" p rn=${root_name[$1]}
    rm -rf "$w"; mkdir -p "$w/$rn/test_tipc/configs/golden" "$w/$rn/deploy" "$w/bin"
    cp "$orig/$r/test_train_inference_python.sh" "$orig/$r/${helper[$r]}" "$orig/$r/benchmark_train.sh" "$w/$rn/test_tipc/"
    cp "$cfg" "$w/$rn/test_tipc/configs/golden/config.txt"
    for p in python python3 python3.7 python3.10 $(val "$cfg" 2); do
        cp "$root/scripts/golden/stub-python" "$w/bin/$p"
    done
    local -a args=(test_tipc/configs/golden/config.txt benchmark_train) env=()
    # PaddleClas: a train's status is whether SAVE/MODEL/train.log exists; the stub writes it (dialects.sh)
    [ "$r" = clas ] && env=(GOLDEN_TRAIN="$(first_script "$cfg" 15 16 17 18 19)"
                            GOLDEN_SAVE_KEY="$(key "$cfg" 7 | sed 's/^-o //')" GOLDEN_TRAIN_SUB="$(val "$cfg" 1)")
    [ "$params" = - ] || args+=("$params")
    snapshot "$w/$rn" > "$w/before"
    (cd "$w/$rn" && env -i PATH="$w/bin:$work/bin:/usr/bin:/bin" HOME="$w" LC_ALL=C BASH_ENV="$work/capture.sh" \
        GOLDEN_CMDS="$w/cmds" "${env[@]}" bash test_tipc/benchmark_train.sh "${args[@]}" > "$w/stdout" 2> "$w/stderr")
    touch "$w/cmds"
    snapshot "$w/$rn" > "$w/after"
    {
        printf '### run %s\n' "$params"
        [ ${#env[@]} -gt 0 ] && printf 'env\t%s\n' "${env[@]}"
        grep -E '^(timeout [0-9]+m )?bash test_tipc/test_train_inference_python.sh ' "$w/stdout" | sed "s|$w/$rn|@ROOT@|g; s|^|harness\t|"
        sed "s|$w/$rn|@ROOT@|g; s|^|cmd\t|" "$w/cmds"
        new_files "$w/$rn" "$w/before" "$w/after"
    } >> "$dst"
}

n=0
while IFS=$'\t' read -r file repo _path _commit _model _nl _kind _nlend; do
    r=${repo_of[$repo]:-}
    [ -n "$r" ] || continue
    [[ " $repos " == *" $r "* ]] || continue
    grep -q -w train_benchmark_params "$cfgsrc/$file" || continue
    name=${file#*__test_tipc__configs__}; name=${name%.txt}
    mkdir -p "$out/$r"
    cp "$cfgsrc/$file" "$out/$r/$name.txt"
    dst="$out/$r/$name.golden"
    : > "$dst"
    read -r bs fp <<< "$(bench_first "$cfgsrc/$file")"
    run_one "$r" "$cfgsrc/$file" -
    run_one "$r" "$cfgsrc/$file" "dynamic_bs${bs}_${fp}_DP_N1C1"
    n=$((n + 1))
    printf '%-5s %-70s %4d commands\n' "$r" "$name" "$(grep -c '^cmd' "$dst")"
done < "$cfgsrc/INDEX.tsv"
printf 'make-golden --benchmark: %d configs written under %s\n' "$n" "${out#"$root"/}"
