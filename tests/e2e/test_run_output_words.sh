# test_run_output_words.sh: the output directory tipc substitutes into commands stays ONE argv word
# whatever it holds (space, quotes, '$', ';', '>'): the chain runs, every log lands inside it, nothing
# is written outside, and no error blames a config line for the path.
. "$ROOT/tests/e2e/lib.sh"
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
make_root
# an interpreter that records its argv, one word per line, a blank line after each call
mkdir bin
cat > bin/python3.7 <<'SH'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >> "$ARGV_LOG"
echo >> "$ARGV_LOG"
SH
chmod +x bin/python3.7
export PATH="$PWD/bin:$PATH" ARGV_LOG="$PWD/argv.log"
mkdir work && cd work || fail "cd"
OUT="$PWD/out dir/it's \"q\" \$HOME; x>y"
"$TIPC" run "$CFG" lite_train_lite_infer --output "$OUT" > out.txt 2> err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "exit $rc with --output '$OUT': $(cat err.txt)"
assert_eq "$(grep -c '^Run successfully' "$OUT/results_python.log")" 10 "stages passed"
# the training and eval words hold the whole path
grep -qxF -- "--output-dir=$OUT/norm_train_gpus_0_autocast_False_nodes_1.log" "$ARGV_LOG" || fail "train's --output-dir word: $(head -n 6 "$ARGV_LOG")"
grep -qxF -- "--pretrained=$OUT/norm_train_gpus_0_autocast_False_nodes_1.log/latest.pdparams" "$ARGV_LOG" || fail "eval's --pretrained word"
# the redirections went to files inside OUT (eval and export logs exist there)
[ -f "$OUT/norm_train_gpus_0_autocast_False_nodes_1_eval.log" ] || fail "eval log not in the output dir: $(find . | head)"
[ -f "$OUT/python_infer_cpu_batchsize_1.log" ] || fail "infer log not in the output dir"
# nothing written outside OUT (the old behaviour split the path and wrote a stray file)
stray=$(find . -path "./out dir" -prune -o -type f -print | grep -v -e '^./out.txt$' -e '^./err.txt$')
[ -z "$stray" ] || fail "files written outside the output dir: $stray"
assert_eq "$(find . -mindepth 1 -maxdepth 1 | sort | tr '\n' ' ')" "./err.txt ./out dir ./out.txt " "entries of the work dir"
# a newline in the path (#23): each stage is still one status line, in the results log and on stdout
NL="$PWD/new
line"
"$TIPC" run "$CFG" lite_train_lite_infer --output "$NL" > nl.txt 2> err.txt || fail "exit $? with a newline in --output: $(cat err.txt)"
assert_eq "$(wc -l < "$NL/results_python.log")" 10 "lines in the results log with a newline in --output"
assert_eq "$(grep -c '^Run successfully with command - mobilenet_v3_small - .*!$' "$NL/results_python.log")" 10 "whole status lines"
assert_eq "$(grep -c '^Run ' nl.txt)" "$(grep -c '^Run .*!$' nl.txt)" "status lines on stdout cut by the newline"
grep -qF 'new\nline/norm_train_gpus_0_autocast_False_nodes_1.log' "$NL/results_python.log" || fail "the newline is not shown as \\n: $(head -n 2 "$NL/results_python.log")"
# --dry-run with a '$' or ';' in the path: no config-line error
"$TIPC" run "$CFG" lite_train_lite_infer --dry-run --output "a;b\$c" > out.txt 2> err.txt
assert_eq "$?" 0 "dry run with ';' and '\$' in --output"
echo ok
