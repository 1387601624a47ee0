# lib_stage.sh: helpers for the stage-runner tests (sourced after lib.sh): a fake interpreter whose
# behaviour for the first training command is given as shell code, and a marker to find its
# processes by. Every other command records its call and exits 0.
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
make_root
MARK="1000.$$$RANDOM"   # `sleep $MARK`: a process name no other test uses
export MARK CALLS="$PWD/calls.log" FIRST="$PWD/first"
mkdir -p bin
export PATH="$PWD/bin:$PATH"
# stub_train 'SHELL CODE': what the first `train.py --output-dir` call does (later ones exit 0)
stub_train() {
    { printf '#!/bin/sh\necho "$*" >> "$CALLS"\n'
      printf 'case "$*" in *"train.py --output-dir"*) if mkdir "$FIRST" 2>/dev/null; then\n%s\nfi ;; esac\nexit 0\n' "$1"
    } > bin/python3.7
    chmod +x bin/python3.7
}
# survivors: the processes of this test still alive
survivors() { pgrep -f "sleep $MARK" | tr '\n' ' '; }
assert_no_survivors() {
    local left
    left=$(survivors)
    if [ -n "$left" ]; then pkill -KILL -f "sleep $MARK"; fail "$1: processes left: $left"; fi
}
