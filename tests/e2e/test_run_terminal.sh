# test_run_terminal.sh: what a person sees in a terminal (issue #25, item 3):
#  1. tipc run in a pseudo-terminal: training draws its progress bar, and no line (the trainer's
#     '[Epoch ...]' lines, eval, the status lines, the table) is glued to it: what the terminal
#     finally shows (screen.py) has every bar line ending at its ETA; the same for tipc train
#     alone in a terminal;
#  2. the end table's total row;
#  3. FORCE_COLOR colours a pipe; NO_COLOR still wins; FORCE_COLOR=0 does not force;
#  4. tipc launch waiting for a node that does not come names it every 5 s.
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_report.sh"
command -v python3 > /dev/null || skip "python3 is needed to open a pseudo-terminal"
PTY="$ROOT/tests/e2e/pty_run.py"
SCREEN="$ROOT/tests/e2e/screen.py"
make_root
tiny_config -1 3
sed -i 's/^--use-gpu:True|False$/--use-gpu:False/' configs/m/tiny.txt   # CPU inference only

# bars_clean FILE WHAT: every screen line that shows the bar ends at its ETA, and lines came too
bars_clean() {
    python3 "$SCREEN" "$1" > "$1.screen"
    grep -q $'\rtrain \[' "$1" || fail "$2: no progress bar was drawn: $(tail -5 "$1.screen")"
    grep -q '^\[Epoch 0, iter: 0\]' "$1.screen" || fail "$2: no '[Epoch' line at a line's start: $(grep -n 'Epoch' "$1.screen" | head -3)"
    python3 - "$1.screen" "$2" <<'PY' || fail "$2: a line is glued to the progress bar (see above)"
import re, sys
bad = [l for l in open(sys.argv[1], encoding="utf-8")
       if "train [" in l and not re.search(r"train \[[#.]+\] .* ETA (\d+:\d\d:\d\d|--:--:--)\s*$", l)]
for l in bad[:5]:
    print(sys.argv[2] + ": glued: " + repr(l))
sys.exit(1 if bad else 0)
PY
}

# 1. tipc run in a terminal
python3 "$PTY" 120 '' "$TIPC" run configs/m/tiny.txt lite_train_lite_infer --no-prepare --output out > run.tty
assert_eq "$?" 0 "exit code in a terminal"
bars_clean run.tty "tipc run"
# a status line on a terminal is the original's `echo -e "\033[33m ${text}  \033[0m"`: one space first
grep -q '^ Run successfully with command - mobilenet_v3_small - tipc train ' run.tty.screen ||
    fail "the train's status line does not start a line: $(grep -n 'Run successfully' run.tty.screen | head -2)"
# 2. the table's last row: the run's wall clock
grep -Eq '^      total +[0-9]+\.[0-9]$' run.tty.screen || fail "no total row: $(tail -4 run.tty.screen)"

# ... and tipc train alone in a terminal
python3 "$PTY" 120 '' "$TIPC" train -c configs/m/tiny.yaml --epochs 3 --output-dir tout > train.tty
assert_eq "$?" 0 "tipc train in a terminal"
bars_clean train.tty "tipc train"

# 3. FORCE_COLOR in a pipe (a CI console that shows colours), NO_COLOR wins
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
STUB_FAIL=export_model.py FORCE_COLOR=1 "$TIPC" run "$CFG" lite_train_lite_infer > c.out 2> c.err
grep -q $'\033\[32m Run successfully' c.out || fail "FORCE_COLOR=1: no green status line in a pipe"
grep -q $'\033\[31mFAILED(1)' c.err || fail "FORCE_COLOR=1: no red FAILED in the table in a pipe"
for env in "NO_COLOR=1 FORCE_COLOR=1" "FORCE_COLOR=0" "FORCE_COLOR="; do
    rm -rf test_tipc
    env $env STUB_FAIL=export_model.py "$TIPC" run "$CFG" lite_train_lite_infer > c.out 2> c.err
    ! grep -q $'\033\[' c.out c.err || fail "$env: escape codes in a pipe"
done

# 4. tipc launch says whom it waits for
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$TIPC" launch --job_id="ux$$" --ips=127.0.0.1,127.0.0.2 --node_ip=127.0.0.1 --master=127.0.0.1:$port \
    --join_timeout=6 sleep 60 2> launch.err
assert_eq "$?" 4 "launch without its second node"
grep -q '^launch: node 0: waiting for node 1 (127.0.0.2, rank 1) to join: 5 s of 6 s$' launch.err ||
    fail "no waiting line: $(cat launch.err)"
echo ok
