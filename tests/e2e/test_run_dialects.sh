# test_run_dialects.sh: `tipc run --dialect REPO` against each Paddle repo's own harness.
# tests/fixtures/golden/dialects/REPO/*.golden hold what the unmodified harness of REPO did with
# REPO's configs (scripts/golden/dialects.sh): per run (4 modes, then train/export/inference
# failing) the results-log path, every command with its status word, in order, and the files
# created. tipc runs the same config with the same stub interpreter; the transcripts must match
# line by line. Deliberate differences (README) are the only lines left out:
#  - clas whole_infer: the original's `ln -s` lands in the repo root when the quant model folder
#    is missing; tipc makes the links only inside that folder.
#  - after a failed train or export tipc skips what needs its output (the original runs it): those
#    commands are expected as "skipped N" (counted on stderr), and the files are then a subset.
#  - OUTPUT/tipc/, tipc's own folder (stage logs, metrics, JUnit), is not compared.
. "$ROOT/tests/e2e/lib.sh"
GOLDEN="$ROOT/tests/fixtures/golden/dialects"
[ -d "$GOLDEN" ] || skip "no dialect golden fixtures"
REPOS=${DIALECT_REPOS:-clas det seg ocr tmpl}
STUB="$ROOT/scripts/golden/stub-python"

# A golden section without its env lines, statuses as words (0 = ok), deliberate differences out.
want_section() { # GOLDEN_FILE INDEX REPO
    awk -v k="$2" '/^### run /{n++} n==k' "$1" | grep -v '^env	' \
        | awk -F'\t' -v OFS='\t' '$1=="cmd"{ $2 = ($2=="0") ? "ok" : "failed" } {print}' \
        | if [ "$3" = clas ]; then grep -v -x -e 'file	inference.pdmodel' -e 'file	inference.pdiparams'; else cat; fi
}

# tipc skips what needs a failed train's or export's output (the original runs it): a command tipc
# reports skipped matches the original's at the same place whatever its status there; the logs of
# skipped commands are not made, so the files are then a subset of the original's.
same_run() { # GOT WANT
    cmp -s "$1" "$2" && return 0
    grep -q '^cmd	skipped	' "$1" || return 1
    [ "$(grep -c '^cmd	' "$1")" = "$(grep -c '^cmd	' "$2")" ] || return 1
    cmp -s <(grep -v -e '^cmd	' -e '^file	' "$1") <(grep -v -e '^cmd	' -e '^file	' "$2") || return 1
    paste <(grep '^cmd	' "$1") <(grep '^cmd	' "$2") | awk -F'\t' '$3 != $6 || ($2 != $5 && $2 != "skipped") { bad = 1 } END { exit bad }' \
        || return 1
    [ -z "$(LC_ALL=C comm -23 <(grep '^file	' "$1" | LC_ALL=C sort) <(grep '^file	' "$2" | LC_ALL=C sort))" ]
}

total=0 bad=0
for repo in $REPOS; do
    nrun=0 nbad=0
    for g in "$GOLDEN/$repo"/*.golden; do
        cfg="${g%.golden}.txt"
        model=$(awk 'length($0) > 0' "$cfg" | sed -n 2p | cut -d: -f2-)
        py=$(awk 'length($0) > 0' "$cfg" | sed -n 3p | cut -d: -f2-)
        nsec=$(grep -c '^### run ' "$g")
        # To keep the suite short on 2 cores, the sanitizer build runs each config's plain
        # lite_train_lite_infer and whole_infer (every code path: train, eval, export, inference,
        # whole_infer), the release build the other runs and the configs with hundreds of commands.
        # DIALECT_FULL=1 runs everything under the sanitizers.
        heavy=0
        [ "$(grep -c '^cmd' "$g")" -gt 200 ] && heavy=1
        for k in $(seq 1 "$nsec"); do
            header=$(awk -v k="$k" '/^### run /{n++; if (n==k) print}' "$g")
            mode=$(echo "$header" | cut -d' ' -f3)
            bin=$TIPC
            if [ "${DIALECT_FULL:-0}" != 1 ] && [ -x "${TIPC_REL:-}" ]; then
                case "$header" in "### run lite_train_lite_infer -"|"### run whole_infer -") [ $heavy = 1 ] && bin=$TIPC_REL ;;
                                  *) bin=$TIPC_REL ;; esac
            fi
            make_root
            mkdir -p bin deploy test_tipc/configs/golden
            for p in python python3 python3.7 python3.10 $py; do cp "$STUB" "bin/$p"; done
            cp "$cfg" test_tipc/configs/golden/config.txt
            find . | LC_ALL=C sort > ../before.$$
            envs=()
            while IFS= read -r e; do envs+=("$e"); done < <(awk -v k="$k" '/^### run /{n++} n==k' "$g" | sed -n 's/^env\t//p')
            env "${envs[@]}" PATH="$PWD/bin:$PATH" "$bin" run --dialect "$repo" test_tipc/configs/golden/config.txt "$mode" \
                > ../out.$$ 2> ../err.$$
            rc=$?
            find . | LC_ALL=C sort > ../after.$$
            {
                echo "$header"
                res=$(find . -name results_python.log | sed 's|^\./||' | LC_ALL=C sort | head -n1)
                printf 'results %s\n' "${res:-none}"
                if [ -n "$res" ] && [ "$repo" = seg ]; then # PaddleSeg's harness heads its log with the mode
                    [ "$(head -n 1 "$res")" = "------------------------ $mode ------------------------" ] \
                        || echo "header missing: $(head -n 1 "$res")"
                fi
                # every command in order with its status, skipped ones too: tipc's own JUnit report
                junit=$(find . -path '*/tipc/junit.xml' | head -n 1)
                [ -n "$junit" ] && python3 "$ROOT/tests/e2e/junit_cmds.py" "$junit" "$PWD"
                LC_ALL=C comm -13 ../before.$$ ../after.$$ | grep -v -x -e './bin' -e './bin/.*' \
                    | grep -v -E '^\./test_tipc/output/([^/]+/[^/]+/)?tipc(/|$)' | while IFS= read -r p; do
                    if [ -d "$p" ] && [ ! -L "$p" ]; then printf 'file\t%s/\n' "${p#./}"; else printf 'file\t%s\n' "${p#./}"; fi
                done
            } > ../got.$$
            # tipc does not let a later pass overwrite an earlier pass's inference log: it prefixes
            # the pass (README, `pass tag`); undo that prefix, and count each file once, to compare
            sed -E 's#/[^/ \t]*_(python_infer_)#/\1#g' ../got.$$ | awk '!/^file\t/ || !seen[$0]++' > ../got2.$$
            mv ../got2.$$ ../got.$$
            want_section "$g" "$k" "$repo" > ../want.$$
            nrun=$((nrun + 1))
            same=0
            same_run ../got.$$ ../want.$$ && same=1
            if [ $same = 0 ]; then
                nbad=$((nbad + 1))
                if [ "$nbad" -le 3 ]; then
                    echo "MISMATCH $repo $(basename "$g" .golden) [$header] (tipc exit $rc):"
                    diff ../want.$$ ../got.$$ | head -n 8
                    head -n 3 ../err.$$
                fi
            elif grep -q '^cmd	failed' ../want.$$; then
                [ "$rc" = 1 ] || { echo "$repo $(basename "$g") [$header]: a stage failed but tipc exited $rc"; nbad=$((nbad + 1)); }
            else
                [ "$rc" = 0 ] || { echo "$repo $(basename "$g") [$header]: tipc exited $rc"; nbad=$((nbad + 1)); }
            fi
            cd "$TMPDIR" && rm -rf "$ROOT_DIR"
        done
    done
    echo "$repo: $((nrun - nbad)) of $nrun config x run transcripts match the harness line by line"
    total=$((total + nrun)); bad=$((bad + nbad))
done
[ "$total" -gt 0 ] || fail "no golden runs found for $REPOS"
[ "$bad" = 0 ] || fail "$bad of $total runs differ from their repo's harness"
echo "ok: $total runs match"
