#!/usr/bin/env bash
# speed.sh: regenerate tests/fixtures/golden/speed/*.speed by running Paddle's ORIGINAL benchmark
# analysis script over the logs there (each NAME.log with the arguments in NAME.args and the
# environment in NAME.env); tests/unit/test_speed.c checks `tipc speed` writes the same bytes.
# The script is third-party code: keep it out of this repository. Fetch it with
#   git clone https://github.com/PaddlePaddle/benchmark && git -C benchmark show \
#     4325f722:tools/scripts/analysis.py > analysis.py          (develop, last changed a3008a5b)
# Usage: scripts/golden/speed.sh ANALYSIS_PY      (needs python3 with numpy)
set -u -o pipefail
die() { printf 'make-golden speed: error: %s\n' "$*" >&2; exit 2; }
[ $# = 1 ] && [ -f "$1" ] || die "usage: scripts/golden/speed.sh ANALYSIS_PY"
want=7d9af544ae892357e9603922606d2e0b9667885fda40923ddafd2c12a9fa007d
got=$(sha256sum "$1" | cut -d' ' -f1)
[ "$got" = "$want" ] || [ "${GOLDEN_ALLOW_MISMATCH:-0}" = 1 ] || die "$1: sha256 $got, expected $want (other version?)"
py=$(command -v python3) || die "no python3"
"$py" -c 'import numpy' 2>/dev/null || die "$py lacks numpy (analysis.py imports it)"
dir=$(cd "$(dirname "$0")/../../tests/fixtures/golden/speed" && pwd)
n=0
for log in "$dir"/*.log; do
    name=${log%.log}
    rm -f "$name.speed"
    read -r -a args < "$name.args"
    envs=()
    while IFS= read -r e; do [ -n "$e" ] && envs+=("$e"); done < "$name.env"
    (cd "$dir" && env -i PATH=/usr/bin:/bin LC_ALL=C.UTF-8 "${envs[@]}" "$py" "$1" --filename "$(basename "$log")" \
        --speed_log_file "$(basename "$name").speed" "${args[@]}" > /dev/null 2>&1) || die "$name: analysis.py failed"
    [ -f "$name.speed" ] || die "$name: no record written"
    n=$((n + 1))
done
printf 'make-golden speed: %d records written under %s\n' "$n" "${dir#"$(cd "$(dirname "$0")/../.." && pwd)"/}"
