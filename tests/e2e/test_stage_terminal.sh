# test_stage_terminal.sh: under a terminal (a pseudo-terminal here, tipc its session's foreground as
# in an interactive shell) a stage reads its stdin like a command under bash does (it used to stop on
# SIGTTIN and tipc waited forever); Ctrl-C there stops the stage and the run (exit 130); and a tipc
# started with SIGINT ignored (a background `&` job of a script) keeps ignoring it, as bash does.
. "$ROOT/tests/e2e/lib.sh"
command -v python3 > /dev/null || skip "python3 is needed to open a pseudo-terminal"
. "$ROOT/tests/e2e/lib_stage.sh"
log=test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/results_python.log
PTY="$ROOT/tests/e2e/pty_run.py"

# 1. both training stages read a line from the terminal
cat > bin/python3.7 <<'SH'
#!/bin/sh
echo "$*" >> "$CALLS"
case "$*" in *"train.py --output-dir"*) IFS= read -r line; echo "got: $line" >> got.txt ;; esac
exit 0
SH
chmod +x bin/python3.7
python3 "$PTY" 60 'first line\nsecond line\n' "$TIPC" run "$CFG" lite_train_lite_infer > pty.txt
rc=$?
[ "$rc" -ne 124 ] || fail "tipc hung on a stage reading the terminal: $(tail -n 3 pty.txt)"
assert_eq "$rc" 0 "exit code under a terminal"
assert_eq "$(cat got.txt)" "$(printf 'got: first line\ngot: second line')" "lines the stages read"
assert_eq "$(grep -c '^Run successfully' "$log")" 10 "stages passed"

# 2. Ctrl-C typed while a stage reads the terminal: the stage and the run stop, exit 130
rm -rf test_tipc calls.log first got.txt
stub_train 'IFS= read -r line; echo "got: $line" >> got.txt'
python3 "$PTY" 60 '\x03' "$TIPC" run "$CFG" lite_train_lite_infer > pty.txt
assert_eq "$?" 130 "exit code after Ctrl-C"
assert_eq "$(wc -l < calls.log)" 1 "no stage ran after Ctrl-C"
[ ! -e got.txt ] || fail "the stage read a line"

# 3. SIGINT ignored when tipc starts (bash's `&` in a script): tipc and its stages keep ignoring it
rm -rf test_tipc calls.log first
stub_train 'sleep 1.5'
sh -c 'trap "" INT; exec "$0" run "$1" lite_train_lite_infer' "$TIPC" "$CFG" > out.txt 2> err.txt &
pid=$!
for _ in $(seq 50); do [ -s calls.log ] && break; sleep 0.1; done
sleep 0.3
kill -INT "$pid"
pkill -INT -f "sleep 1.5" || true
wait "$pid"
assert_eq "$?" 0 "exit code with SIGINT ignored"
assert_eq "$(grep -c '^Run successfully' "$log")" 10 "every stage passed"
echo ok
