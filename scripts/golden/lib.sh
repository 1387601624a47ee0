# lib.sh: what the golden generators that run a repo's own scripts share (sourced by dialects.sh and
# benchmark.sh, never run): a config's lines as the harness indexes them, the fake repo root's new
# files, and the stubs. Their capture file (BASH_ENV) is each script's own.

nth() { awk 'length($0) > 0' "$1" | sed -n "$(($2 + 1))p"; }             # lines[i]
val() { local l; l=$(nth "$1" "$2"); [[ $l == *:* ]] && printf '%s' "${l#*:}"; }
key() { local l; l=$(nth "$1" "$2"); printf '%s' "${l%%:*}"; }
first_script() { # CFG I...: first word of the first value among lines[I...] that is not null/empty
    local c=$1 i v; shift
    for i in "$@"; do v=$(val "$c" "$i"); v=${v%% *}; case "$v" in ''|null|'##') ;; *) printf '%s' "$v"; return ;; esac; done
}
# no-op stubs (PaddleClas sleeps 5 s around each step; benchmark_train.sh asks pip for paddle) in DIR
stub_tools() { # DIR NAME...
    local d=$1 t; shift
    mkdir -p "$d"
    for t in "$@"; do printf '#!/bin/sh\nexit 0\n' > "$d/$t"; chmod +x "$d/$t"; done
}
snapshot() { (cd "$1" && find . | LC_ALL=C sort); }                     # DIR: every path under it
# `file<TAB>PATH` for each path in AFTER but not BEFORE (folders end in /), relative to ROOT
new_files() { # ROOT BEFORE AFTER
    LC_ALL=C comm -13 "$2" "$3" | while IFS= read -r p; do
        if [ -d "$1/$p" ] && [ ! -L "$1/$p" ]; then printf 'file\t%s/\n' "${p#./}"; else printf 'file\t%s\n' "${p#./}"; fi
    done
}
