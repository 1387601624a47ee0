#!/usr/bin/env bash
# check_layout.sh: the code base's structural rules, checked by grep (make test runs it through
# tests/e2e/test_layout.sh). Prints one line per violation, 'layout: N checks ok' when clean;
# exits 1 on any violation.
#
# Floors (docs/engine.md#layout): runner/ -> prepare/ -> engine/ -> core/; a floor includes only
# the floors below it. Inside runner/, its wings (docs/runner.md) likewise: check_runner_wings,
# check_runner_circles.
#
# Adding a check: write a function check_NAME that prints 'FILE:LINE: what is wrong' for each
# violation (use `hits`) and returns non-zero when it found one; append NAME to CHECKS at the end.
set -u
cd "$(dirname "$0")/.." || exit 2

SRC_EXT=(--include='*.c' --include='*.h' --include='*.cc' --include='*.cu')

# hits MESSAGE GREP-ARGS...: print each grep -rnE match prefixed by MESSAGE; 1 when any matched.
hits() {
    local msg=$1 out
    shift
    out=$(grep -rnE "${SRC_EXT[@]}" "$@" 2>/dev/null)
    [ -z "$out" ] && return 0
    printf '%s\n' "$out" | sed "s|\$|   <- $msg|"
    return 1
}

# An #include naming a floor: '#include "../../runner/x.h"' etc.
inc_of() { printf '^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]*/)?(%s)/' "$1"; }

check_floors() {
    local rc=0
    hits "engine/ includes runner/ or prepare/ (move the shared piece to core/)" \
        "$(inc_of 'runner|prepare')" engine || rc=1
    hits "prepare/ includes runner/ (move the shared piece to core/)" "$(inc_of runner)" prepare || rc=1
    hits "core/ includes another floor (core/ is the bottom floor)" \
        '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' core || rc=1
    return $rc
}

# Code outside core/ (tests included).
outside_core() { echo engine runner prepare tests; }

check_clock() {
    # One monotonic clock: now_seconds()/mono_deadline() in core/time.h.
    hits "a private monotonic clock (use now_seconds()/mono_deadline() from core/time.h)" \
        'clock_gettime[[:space:]]*\([[:space:]]*CLOCK_MONOTONIC' $(outside_core) core --exclude=time.h
}

check_rng() {
    local rc=0 n
    # splitmix64's multiplier appears once: splitmix64_mix() in core/rng.h.
    hits "splitmix64 written again (use splitmix64_mix() from core/rng.h)" \
        '0xbf58476d1ce4e5b9' $(outside_core) core --exclude=rng.h || rc=1
    n=$(find core engine runner prepare -name rng.h | wc -l)
    [ "$n" -eq 1 ] || { find core engine runner prepare -name rng.h | sed 's|$|   <- a second rng.h (one: core/rng.h)|'; rc=1; }
    return $rc
}

check_mkdir() {
    # One mkdir -p: mkdir_p() in core/fs.c; nothing else calls mkdir(2) (tests may, for fixtures;
    # runner/launch/secret.c makes one private 0700 directory, not a path).
    hits "a direct mkdir() (use mkdir_p() from core/fs.h)" \
        '(^|[^_[:alnum:]])mkdir[[:space:]]*\(' engine runner prepare core --exclude=fs.c --exclude=secret.c
}

check_parser() {
    # One option parser, core/options.c (a declarative table per command). Elsewhere: no argv word
    # compared with an option name by hand (strcmp/strncmp/strcasecmp against a "-x" or "--name"
    # literal), no getopt, no option word recognised by hand (argv[i][0] == '-'), and no second
    # list of the command names (runner/commands.c's table is the one; `tipc launch` asks it).
    # Not tipc's own command line, so not checked: runner/plan/ reads the flags of the commands a
    # TIPC config runs (Paddle's scripts, `-c`, `--img-path`).
    local rc=0
    hits "an option compared by hand (put it in the command's struct opt table, core/options.h)" \
        'str(n)?(case)?cmp[[:space:]]*\([^;]*"--?[A-Za-z]' engine runner prepare core --exclude=options.c \
        --exclude-dir=plan || rc=1
    hits "getopt (use core/options.h)" '(^|[^_[:alnum:]])getopt(_long)?[[:space:]]*\(' engine runner prepare core || rc=1
    hits "an option word recognised by hand (use core/options.h)" \
        "argv\[[^]]*\]\[0\][[:space:]]*[!=]=[[:space:]]*'-'" engine runner prepare core --exclude=options.c || rc=1
    hits "a second list of the command names (use cmd_find(), runner/commands.c)" \
        '"run",[[:space:]]*"prepare",' engine runner prepare core --exclude=commands.c || rc=1
    return $rc
}


# The backend boundary: op tables are called only by the model, the inference graph and the
# backends themselves; everything above uses net.h / infer.h.
check_backend_boundary() {
    local out
    out=$(grep -rnE "${SRC_EXT[@]}" '(\.|->)ops->' core runner prepare engine 2>/dev/null |
          grep -vE '^engine/(model|infer|backend)/')
    [ -z "$out" ] && return 0
    printf '%s\n' "$out" | sed 's|$|   <- op table called above the backend (use net.h / infer.h)|'
    return 1
}

# CPU and CUDA op files pair by op family (the file name up to its first '_' or '.'):
# ops/cpu/sgd.c <-> ops/cuda/sgd.cu, ops/cpu/conv2d_dw.c <-> ops/cuda/conv2d.cu. ctx.cu (the CUDA
# context) has no CPU twin: the CPU backend has no context.
check_paired_ops() {
    local rc=0 f fam
    for f in engine/ops/cpu/*.c; do
        fam=$(basename "$f" .c); fam=${fam%%_*}
        compgen -G "engine/ops/cuda/$fam.cu" >/dev/null || compgen -G "engine/ops/cuda/${fam}_*.cu" >/dev/null ||
            { echo "$f: no CUDA twin engine/ops/cuda/$fam.cu   <- pair op files by name"; rc=1; }
    done
    for f in engine/ops/cuda/*.cu; do
        fam=$(basename "$f" .cu); fam=${fam%%_*}
        [ "$fam" = ctx ] && continue
        compgen -G "engine/ops/cpu/$fam.c" >/dev/null || compgen -G "engine/ops/cpu/${fam}_*.c" >/dev/null ||
            { echo "$f: no CPU twin engine/ops/cpu/$fam.c   <- pair op files by name"; rc=1; }
    done
    return $rc
}

# No source file over 500 lines (C, C++, CUDA, Python and shell files: tracked ones in a git
# checkout, else every such file under the tree but build/).
source_files() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -- '*.c' '*.h' '*.cc' '*.cu' '*.cuh' '*.py' '*.sh'
    else
        find . -path ./build -prune -o -type f \( -name '*.[ch]' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \
             -o -name '*.py' -o -name '*.sh' \) -print | sed 's|^\./||'
    fi
}
check_file_size() {
    local out
    out=$(source_files | while read -r f; do [ -f "$f" ] && printf '%s %s\n' "$(wc -l <"$f")" "$f"; done |
          awk '$1 > 500 { print $2 ": " $1 " lines   <- split it (no source file over 500 lines)" }')
    [ -z "$out" ] && return 0
    printf '%s\n' "$out"
    return 1
}

# One training step (engine/model/train_step.c: forward; zero_grad; backward; strategy; update):
# the trainer, `tipc bench train` and the model test call it, and no other file spells a
# backward followed by an update. (Op-level tests call single ops, not net_backward.)
check_one_train_step() {
    local rc=0 f
    for f in engine/model/trainer.c runner/cmd/cmd_bench.c tests/unit/test_model.c; do
        grep -q 'net_train_step(' "$f" || { echo "$f: does not call net_train_step   <- one named step"; rc=1; }
    done
    local out
    for f in $(grep -rlE "${SRC_EXT[@]}" 'net_backward\(' core runner prepare engine tests 2>/dev/null); do
        case $f in engine/model/train_step.c | engine/model/net_walk.c | engine/model/net.h) continue ;; esac
        out=$(grep -nE 'net_sgd_update\(|sgd_step(_cpu|_cuda)?\(' "$f") || continue
        printf '%s\n' "$out" | sed "s|^|$f:|; s|\$|   <- a second training step (call net_train_step)|"
        rc=1
    done
    return $rc
}

# The environment is read once, by the commands' option tables (core/options.c's env column; env-only
# rows such as runner/cmd/engine_settings.h and prepare_settings.h) and the runner's command code, never
# deep in a module. Below runner/ only the launcher -> rank contract may read it, as torch's env://
# init does: comm.c (RANK, WORLD_SIZE, MASTER_ADDR/PORT, TIPC_JOB_ID/TOKEN, TIPC_NODE_IP, topology),
# backend.c (the process's CUDA device: TIPC_DEVICE, FLAGS_selected_gpus, LOCAL_RANK) and
# backend_cpu.c (OpenBLAS/libgomp start-up variables, read before the libraries load).
check_env() {
    hits "getenv below runner/ (add an option-table row with an env column; pass the value down)" \
        '(^|[^_[:alnum:]])(secure_)?getenv[[:space:]]*\(' engine prepare core \
        --exclude=options.c --exclude=comm.c --exclude=rank_env.c --exclude=backend.c --exclude=backend_cpu.c
}

# runner/'s wings (docs/runner.md), top to bottom: the front door (runner/main.c, commands.c, cmds.h),
# cmd/, then run/ and bench/, then launch/ and report/, then plan/. A wing includes only wings below
# it (siblings neither), never another wing's internal.h, and only the front door includes cmds.h.
RUNNER_WINGS="cmd:5 run:4 bench:4 launch:3 report:3 plan:2"
check_runner_wings() {
    local -A rank=([.]=6)   # runner/ itself: the front door
    local w out
    for w in $RUNNER_WINGS; do rank[${w%%:*}]=${w#*:}; done
    out=$(grep -rnE --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' runner 2>/dev/null |
        while IFS= read -r line; do
            local f=${line%%:*} rest=${line#*:} loc part target from to
            loc=$f:${rest%%:*}
            [[ $line =~ \"([^\"]*)\" ]] || continue
            local -a parts=()   # dirname(f)/include with ./ and ../ resolved (no process per line)
            local path=${f%/*}/${BASH_REMATCH[1]} IFS=/
            for part in $path; do
                case $part in '' | .) ;; ..) [ ${#parts[@]} -gt 0 ] && unset 'parts[${#parts[@]}-1]' ;; *) parts+=("$part") ;; esac
            done
            target="${parts[*]}"
            unset IFS
            case $target in runner/*) ;; *) continue ;; esac
            from=${f#runner/}; from=${from%%/*}; [ "$from" = "${f#runner/}" ] && from=.
            to=${target#runner/}; to=${to%%/*}; [ "$to" = "${target#runner/}" ] && to=.
            if [ "$target" = runner/cmds.h ]; then
                case $f in runner/main.c | runner/commands.c | runner/cmd/*) ;;
                *) echo "$loc: cmds.h outside the front door (runner/main.c, commands.c, cmd/)   <- hand the answer down" ;; esac
                continue
            fi
            [ "$from" = "$to" ] && continue
            if [ "${target##*/}" = internal.h ]; then
                echo "$loc: includes another wing's internal header ($target)   <- use its public header"
            elif [ "${rank[$to]:-0}" -ge "${rank[$from]:-0}" ]; then
                echo "$loc: includes $target, up or across runner/'s wings ($from -> $to)   <- wings include only wings below them: $RUNNER_WINGS"
            fi
        done)
    [ -z "$out" ] && return 0
    printf '%s\n' "$out"
    return 1
}

# No circle between runner/ files, inside a wing or across: read from the objects (nm: which file
# uses a symbol which other file defines), so it sees calls through a shared header too. Needs a
# build (LAYOUT_OBJDIR, default build/san); without one it says so and checks nothing.
runner_objects() {   # "OBJECT SOURCE" of each runner/ object whose source still exists (no leftovers)
    local o src
    find "$1/runner" -name '*.o' 2>/dev/null | sort | while read -r o; do
        src=${o#"$1"/}; src=${src%.o}.c
        [ -f "$src" ] && echo "$o $src"
    done
}
runner_edges() {   # "USER DEFINER" pairs of runner/ sources
    runner_objects "$1" | while read -r o src; do
        nm "$o" 2>/dev/null | awk -v f="$src" 'NF == 3 && $2 ~ /^[TDBRC]$/ { print "D", $3, f }
                                                 NF == 2 && $1 == "U" { print "U", $2, f }'
    done | awk '$1 == "D" { def[$2] = $3; next } { use[++n] = $2; user[n] = $3 }
        END { for (i = 1; i <= n; i++) { g = def[use[i]]; if (g != "" && g != user[i]) print user[i], g } }' | sort -u
}
check_runner_circles() {
    local objdir=${LAYOUT_OBJDIR:-build/san} out
    if [ -z "$(runner_objects "$objdir" | head -1)" ]; then
        echo "layout: no objects under $objdir/runner/ (build first): the circle check did not run" >&2
        return 0
    fi
    # The command table lists every command (commands.c -> cmd/cmd_*) and a command may ask the
    # table (cmd_launch.c -> cmd_exists), as git's builtin/ and git.c: that pair is no circle.
    out=$(runner_edges "$objdir" | awk '!($1 == "runner/commands.c" && $2 ~ /^runner\/cmd\/cmd_/)' | awk '
        { from[NR] = $1; to[NR] = $2; e[NR]; outd[$1]++; ind[$2]++; node[$1]; node[$2] }
        END {   # peel the files no circle passes through (none calls them, or they call none)
            do { changed = 0
                 for (v in node) if (!outd[v] || !ind[v]) { delete node[v]; changed = 1
                     for (i in e) if (to[i] == v || from[i] == v) { outd[from[i]]--; ind[to[i]]--; delete e[i] } }
            } while (changed)
            for (i in e) print from[i] ": uses " to[i] ", which leads back to it"
        }' | sort)
    [ -z "$out" ] && return 0
    printf '%s\n' "$out" | sed 's|$|   <- a circle between runner/ files: move the shared piece below both|'
    return 1
}

CHECKS=(floors runner_wings runner_circles clock rng mkdir parser backend_boundary paired_ops file_size one_train_step env)

bad=0
for c in "${CHECKS[@]}"; do
    "check_$c" || { echo "layout: check '$c' failed"; bad=1; }
done
[ "$bad" -eq 0 ] && echo "layout: ${#CHECKS[@]} checks ok"
exit $bad
