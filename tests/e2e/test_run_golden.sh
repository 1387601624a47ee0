# test_run_golden.sh: `tipc run` on 14 real configs x 5 modes with a stub python3.7 that exits 0:
# results_python.log, stdout and the files created must match what the original harness produced
# (tests/fixtures/golden), with Step6 status lines, tipc's first-colon rule and its inference logs
# that do not overwrite an earlier pass's (MODE.cmds.tipc / MODE.files.tipc where they differ).
# tipc's own files (stage logs it keeps, metrics, reports) live in OUTPUT/tipc/, a folder the
# original never makes: it must exist and is left out of the comparison.
. "$ROOT/tests/e2e/lib.sh"
GOLDEN="$ROOT/tests/fixtures/golden"
[ -d "$GOLDEN" ] || skip "no golden fixtures"
n=0
for dir in "$GOLDEN"/*/; do
    [ -f "$dir/config.txt" ] || continue
    model=$(awk 'NF' "$dir/config.txt" | sed -n 2p | cut -d: -f2-)
    for mode in lite_train_lite_infer lite_train_whole_infer whole_infer whole_train_whole_infer klquant_whole_infer; do
        make_root
        mkdir -p cfg && cp "$dir/config.txt" cfg/config.txt
        "$TIPC" run cfg/config.txt "$mode" > out.txt 2> err.txt
        rc=$?
        # .tipc: the original's with tipc's deliberate difference applied (scripts/golden/derive-tipc-logs.py)
        want_cmds="$dir/$mode.cmds"; [ -f "$want_cmds.firstcolon" ] && want_cmds="$want_cmds.firstcolon"
        [ -f "$dir/$mode.cmds.tipc" ] && want_cmds="$dir/$mode.cmds.tipc"
        want_files="$dir/$mode.files"; [ -f "$want_files.tipc" ] && want_files="$want_files.tipc"
        ncmd=$(wc -l < "$want_cmds")
        assert_eq "$rc" 0 "$(basename "$dir") $mode exit code"
        # results log: one Step6 status line per command, in order
        cut -f2- "$want_cmds" | sed "s|^|Run successfully with command - $model - |; s|\$|!|" > want.log
        log="test_tipc/output/$model/$mode/results_python.log"
        if [ "$ncmd" -gt 0 ]; then cmp -s "$log" want.log || { diff "$log" want.log | head; fail "$dir $mode results log"; }
        else [ ! -s "$log" ] || fail "$dir $mode: results log should be empty"; fi
        # stdout: the same status lines, the echo lines the original prints, then the summary
        grep -v 'Run successfully with command' "$dir/$mode.stdout" > want_echo.txt || true
        grep -v -e 'Run successfully with command' -e ' passed, ' out.txt > got_echo.txt || true
        cmp -s got_echo.txt want_echo.txt || { diff got_echo.txt want_echo.txt | head; fail "$dir $mode echo lines"; }
        assert_eq "$(tail -n 1 out.txt)" "$ncmd passed, 0 failed, 0 skipped" "$dir $mode summary"
        # files and directories made under the output root
        own="test_tipc/output/$model/$mode/tipc"
        [ "$ncmd" -eq 0 ] || [ -f "$own/junit.xml" ] || fail "$dir $mode: no $own/junit.xml"
        find test_tipc -mindepth 1 | grep -v -e "^$own\$" -e "^$own/" | sort > got_files.txt
        grep '^test_tipc/' "$want_files" | sed 's|/$||' | grep -v -x 'test_tipc' | sort > want_files.txt
        cmp -s got_files.txt want_files.txt || { diff got_files.txt want_files.txt | head; fail "$dir $mode files"; }
        n=$((n + 1))
    done
done
[ "$n" -ge 60 ] || fail "only $n config x mode runs"
echo "ok: $n runs match the original harness"
