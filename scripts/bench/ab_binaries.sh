#!/usr/bin/env bash
# ab_binaries.sh: two tipc builds (A = before, B = after a change) side by side on the CPU, in one
# run, interleaved: each round runs every case with both binaries back to back (the order swapped
# every round), so a load swing on a shared machine hits both sides alike. Prints each round's
# B/A ratio of the median step time (< 1: B is faster) and, per case, the median over the rounds.
#   A=/path/old/tipc B=/path/new/tipc [ROUNDS=5] [STEPS=5] [ISTEPS=50] [CASES="train:1 infer:2"] \
#       scripts/bench/ab_binaries.sh
# Cases (default all four): `tipc bench train` bs=32 224 px and `tipc bench infer` bs=1, with
# --threads 1 and 2.
# Without A and B it prints why and does nothing (make bench runs every script here).
set -u
if [ -z "${A:-}" ] || [ -z "${B:-}" ]; then
    echo "# ab_binaries: set A=old-tipc B=new-tipc to compare two builds (skipped)"
    exit 0
fi
ROUNDS=${ROUNDS:-5}; STEPS=${STEPS:-5}; ISTEPS=${ISTEPS:-50}
for t in "$A" "$B"; do [ -x "$t" ] || { echo "not executable: $t"; exit 2; }; done
read -r -a words <<<"${CASES:-train:1 train:2 infer:1 infer:2}"
cases=()
for w in "${words[@]}"; do cases+=("${w/:/ }"); done
# median ms/step of one run
run() { # BIN WHAT THREADS
    if [ "$2" = train ]; then
        "$1" bench train --batch-size 32 --resolution 224 --steps "$STEPS" --warmup 2 --threads "$3"
    else
        "$1" bench infer --batch-size 1 --resolution 224 --steps "$ISTEPS" --warmup 5 --threads "$3"
    fi | awk '/median ms\/step/ { for (i = 1; i < NF; i++) if ($i == "median" && $(i + 1) == "ms/step:") print $(i + 2) }'
}
echo "# ab_binaries: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# A=$A"
echo "# B=$B"
printf '%-6s %-9s %12s %12s %8s\n' round case "A ms/step" "B ms/step" "B/A"
declare -A ratios
for r in $(seq "$ROUNDS"); do
    for c in "${cases[@]}"; do
        set -- $c
        if [ $((r % 2)) = 1 ]; then a=$(run "$A" "$1" "$2"); b=$(run "$B" "$1" "$2")
        else b=$(run "$B" "$1" "$2"); a=$(run "$A" "$1" "$2"); fi
        q=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')
        ratios[$c]="${ratios[$c]:-} $q"
        printf '%-6s %-9s %12s %12s %8s\n' "$r" "$1 t=$2" "$a" "$b" "$q"
    done
done
echo "# median B/A over $ROUNDS rounds (< 1: B faster)"
for c in "${cases[@]}"; do
    m=$(printf '%s\n' ${ratios[$c]} | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
    printf '%-16s %s   (rounds: %s)\n' "$c threads" "$m" "${ratios[$c]# }"
done
