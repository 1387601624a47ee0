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

# A golden section without its env lines, statuses as words (0 = ok), deliberate differences out:
# after a failed train or export, tipc skips the eval/export/inference that need its output (README,
# "skipped after a failure"), so those commands, up to the next train, are not in its results log.
want_section() { # GOLDEN_FILE INDEX REPO
    local train; train=$(awk -v k="$2" '/^### run /{n++} n==k' "$1" | sed -n 's/^env\tGOLDEN_TRAIN=//p')
    awk -v k="$2" '/^### run /{n++} n==k' "$1" | grep -v '^env	' \
        | awk -F'\t' -v OFS='\t' -v train="$train" '
            /^### run / { split($0, h, " "); deps = (h[4] == "train" || h[4] == "export") }
            $1 == "cmd" {
                is_train = index(" " $3 " ", " " train " ") > 0
                if (skipping && !is_train) { nskip++; next }
                skipping = 0
                if ($2 != "0" && deps) skipping = 1
                $2 = ($2 == "0") ? "ok" : "failed"
            }
            { print }
            END { if (nskip) print "skipped " nskip }' \
        | if [ "$3" = clas ]; then grep -v -x -e 'file	inference.pdmodel' -e 'file	inference.pdiparams'; else cat; fi
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
                if [ -n "$res" ]; then
                    awk -v m="$model" -v r="$PWD" -v hdr="$([ "$repo" = seg ] && echo 1)" '
                        function rep(s,  i, o) { o = ""; while ((i = index(s, r)) > 0) { o = o substr(s, 1, i - 1) "@ROOT@"; s = substr(s, i + length(r)) } return o s }
                        hdr && FNR == 1 && /^-+ [a-z_]+ -+$/ { next }
                        { w = ""; ok = "Run successfully with command - " m " - "; no = "Run failed with command - " m " - "
                          if (index($0, ok) == 1) { w = "ok"; c = substr($0, length(ok) + 1) }
                          else if (index($0, no) == 1) { w = "failed"; c = substr($0, length(no) + 1) }
                          else { print "unparsed\t" $0; next }
                          sub(/!$/, "", c); print "cmd\t" w "\t" rep(c) }' "$res"
                fi
                # tipc's own folder OUTPUT/tipc (stage logs, metrics, JUnit) is not the original's
                LC_ALL=C comm -13 ../before.$$ ../after.$$ | grep -v -x -e './bin' -e './bin/.*' \
                    | grep -v -E '^\./test_tipc/output/([^/]+/[^/]+/)?tipc(/|$)' | while IFS= read -r p; do
                    if [ -d "$p" ] && [ ! -L "$p" ]; then printf 'file\t%s/\n' "${p#./}"; else printf 'file\t%s\n' "${p#./}"; fi
                done
                nsk=$(grep -c ': skipped (' ../err.$$)
                [ "$nsk" -gt 0 ] && echo "skipped $nsk"
            } > ../got.$$
            want_section "$g" "$k" "$repo" > ../want.$$
            nrun=$((nrun + 1))
            same=0
            if cmp -s ../got.$$ ../want.$$; then same=1
            elif grep -q '^skipped ' ../want.$$; then
                # the skipped stages' logs are not made: every other line equal, files a subset
                if cmp -s <(grep -v '^file	' ../got.$$) <(grep -v '^file	' ../want.$$) &&
                   [ -z "$(LC_ALL=C comm -23 <(grep '^file	' ../got.$$ | LC_ALL=C sort) <(grep '^file	' ../want.$$ | LC_ALL=C sort))" ]; then
                    same=1
                fi
            fi
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
