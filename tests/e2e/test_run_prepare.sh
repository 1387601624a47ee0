# test_run_prepare.sh: `tipc run --prepare` runs the repo's own test_tipc/prepare.sh CONFIG MODE
# first, as an argv (a config path full of shell syntax reaches it as one word and runs nothing),
# stops with exit 3 when it fails, and refuses (exit 2) when there is no prepare.sh.
. "$ROOT/tests/e2e/lib.sh"
CFG="$ROOT/tests/fixtures/golden/dialects/tmpl/tutorials__train_infer_python.txt"
[ -f "$CFG" ] || skip "no template config fixture"
make_root
mkdir -p bin test_tipc "cfg dir"
cp "$ROOT/scripts/golden/stub-python" bin/python3.7
cp "$ROOT/scripts/golden/stub-python" bin/python
weird='cfg dir/$(touch pwned) `touch pwned2`;x.txt'
cp "$CFG" "$weird"
cat > test_tipc/prepare.sh <<'P'
printf '%s\n' "$#" "$1" "$2" > prepare.args
[ -n "${PREPARE_FAIL:-}" ] && exit 4
echo prepared > prepare.done
P
PATH="$PWD/bin:$PATH" "$TIPC" run --prepare --dialect tmpl "$weird" lite_train_lite_infer > out.txt 2> err.txt
rc=$?
assert_eq "$rc" 0 "prepare + chain exit code"
assert_eq "$(sed -n 1p prepare.args)" 2 "prepare.sh argument count"
assert_eq "$(sed -n 2p prepare.args)" "$weird" "the config path, one word"
assert_eq "$(sed -n 3p prepare.args)" lite_train_lite_infer "the mode"
[ ! -e pwned ] && [ ! -e "cfg dir/pwned" ] && [ ! -e pwned2 ] || fail "the config path went through a shell"
[ -s test_tipc/output/results_python.log ] || fail "the chain did not run after prepare"
head -n 1 out.txt | grep -q '^prepare: bash test_tipc/prepare.sh ' || fail "no prepare line first: $(head -n 1 out.txt)"
# prepare fails: exit 3, the chain does not start
rm -rf test_tipc/output prepare.done
PREPARE_FAIL=1 PATH="$PWD/bin:$PATH" "$TIPC" run --prepare --dialect tmpl "$weird" lite_train_lite_infer > out.txt 2> err.txt
assert_eq "$?" 3 "failed prepare exit code"
grep -q 'exited with status 4' err.txt || fail "no status in: $(cat err.txt)"
[ ! -e test_tipc/output/results_python.log ] || fail "the chain ran after a failed prepare"
# no prepare.sh: exit 2, nothing run
rm test_tipc/prepare.sh
PATH="$PWD/bin:$PATH" "$TIPC" run --prepare --dialect tmpl "$weird" lite_train_lite_infer > out.txt 2> err.txt
assert_eq "$?" 2 "missing prepare.sh exit code"
grep -q 'test_tipc/prepare.sh' err.txt || fail "error does not name prepare.sh: $(cat err.txt)"
# --dry-run lists the prepare step and runs nothing
printf 'exit 9\n' > test_tipc/prepare.sh
PATH="$PWD/bin:$PATH" "$TIPC" run --prepare --dry-run --dialect tmpl "$weird" lite_train_lite_infer > out.txt 2> err.txt
assert_eq "$?" 0 "dry run exit code"
grep -q '0 prepare      bash test_tipc/prepare.sh' out.txt || fail "dry run does not show prepare"
echo ok
