# test_help_docs.sh: the man page and the bash completion are generated from the option tables, so
# they list every option `tipc CMD --help` does (issue #25, item 7), and `tipc version` says the commit
# and, for a CUDA build, whether this machine has a device:
#  1. `tipc help man` renders with groff without a warning and names every option of every command;
#  2. `tipc help completion` is valid bash whose _tipc completes commands, options (also of the
#     command `tipc launch` starts) and help topics, and offers every option of every command;
#  3. `tipc version`: "tipc X (commit C)" and one of the three cuda lines.
. "$ROOT/tests/e2e/lib.sh"
cd "$TMPDIR" || fail "cd"
command -v groff > /dev/null || skip "groff is not installed (scripts/install-deps.sh installs groff-base)"
CMDS="run prepare launch train export infer bench version help"

# 1. the man page
"$TIPC" help man > tipc.1 || fail "tipc help man"
grep -q '^\.TH TIPC 1 ' tipc.1 || fail "no .TH line: $(head -3 tipc.1)"
groff -man -ww -z tipc.1 2> groff.err || fail "groff failed: $(cat groff.err)"
[ ! -s groff.err ] || fail "groff warns: $(head -5 groff.err)"
groff -man -Tutf8 tipc.1 2> /dev/null | sed 's/\x08.//g' > tipc.txt   # as man shows it (no overstrike)
for c in $CMDS; do
    "$TIPC" "$c" --help > help.txt || fail "tipc $c --help"
    for o in $(grep -oE '^  (-[a-zA-Z], )?--[a-zA-Z0-9_-]+' help.txt | grep -oE -- '--[a-zA-Z0-9_-]+' | grep -vx -- --help); do
        grep -q -- "$o" tipc.txt || fail "the man page lacks $c's option $o"
    done
done
grep -q 'EXIT STATUS' tipc.txt && grep -q 'unavailable\|not compiled in' tipc.txt || fail "no exit status section"

# 2. the completion
"$TIPC" help completion > tipc.bash || fail "tipc help completion"
bash -n tipc.bash || fail "the completion is not valid bash"
comp() { bash -c 'source ./tipc.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tipc; echo "${COMPREPLY[*]}"' _ "$@"; }
assert_eq "$(comp tipc ru)" "run" "tipc ru<TAB>"
assert_eq "$(comp tipc run --skip)" "--skip-gpu" "tipc run --skip<TAB>"
assert_eq "$(comp tipc train --epo)" "--epochs" "tipc train --epo<TAB>"
assert_eq "$(comp tipc launch --gpus=0,1 train --batch)" "--batch-size" "tipc launch ... train --batch<TAB>"
assert_eq "$(comp tipc help exit)" "exit-codes" "tipc help exit<TAB>"
for c in $CMDS; do
    all=" $(comp tipc "$c" --) "
    "$TIPC" "$c" --help > help.txt
    for o in $(grep -oE '^  (-[a-zA-Z], )?--[a-zA-Z0-9_-]+' help.txt | grep -oE -- '--[a-zA-Z0-9_-]+'); do
        [[ "$all" == *" $o "* ]] || fail "completing 'tipc $c --' does not offer $o"
    done
done

# 3. tipc version
"$TIPC" version > v.txt || fail "tipc version"
sed -n 1p v.txt | grep -Eq '^tipc [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}(-dirty)?|unknown)\)$' || fail "version line: $(cat v.txt)"
sed -n 2p v.txt | grep -Eq '^cuda: (built with CUDA; [0-9]+ devices? visible|built with CUDA; no device found \(.+\)|not built \(.*)$' ||
    fail "cuda line: $(cat v.txt)"
if ! nvidia-smi -L > /dev/null 2>&1 && grep -q 'built with CUDA' v.txt; then
    grep -q 'no device found' v.txt || fail "a CUDA build on a machine without a GPU: $(cat v.txt)"
fi
echo ok
