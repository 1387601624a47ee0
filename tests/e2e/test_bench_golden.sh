# test_bench_golden.sh: `tipc run --dialect REPO CONFIG benchmark_train [PARAMS]` against each Paddle
# repo's own test_tipc/benchmark_train.sh. tests/fixtures/golden/benchmark/REPO/*.golden hold what
# the unmodified script (and the repo's harness it runs) did with REPO's configs that carry a
# train_benchmark_params section (scripts/golden/benchmark.sh): per run (no PARAMS, then
# dynamic_bsB_FP_DP_N1C1) the harness runs with their logs and timeouts, each training command
# with its status and the FLAGS_* it got, the analysis arguments, and the files made. tipc runs the
# same config in a folder of the same name with the same stub interpreter (the N1C1 runs; the
# default layouts' runs are compared as planned, by --dry-run, to keep the suite short); the transcripts
# (tests/e2e/bench_transcript.py) must match line by line. Left out, on purpose (README):
# test_tipc/benchmark_train.txt (tipc edits the copy in memory), the speed records (the stub
# analysis writes none) and tipc's own OUTPUT/tipc/ folder; the analysis is `tipc speed` with
# analysis.py's arguments; PaddleSeg's filter_log.py is not run (its LOG_filtered is read as LOG).
# Configs whose section lacks num_workers get the next line's value sed into PaddleClas's training
# command, which the original's eval breaks at ';': tipc refuses those (exit 2, naming the line).
. "$ROOT/tests/e2e/lib.sh"
GOLDEN="$ROOT/tests/fixtures/golden/benchmark"
[ -d "$GOLDEN" ] || skip "no benchmark golden fixtures"
command -v python3 >/dev/null || skip "python3 not installed"
STUB="$ROOT/scripts/golden/stub-python"
declare -A root_name=([clas]=PaddleClas [det]=PaddleDetection [seg]=PaddleSeg)
BIN=${TIPC_REL:-$TIPC}   # hundreds of stages: the release build (the sanitizers run test_bench_run.sh)
[ -x "$BIN" ] || BIN=$TIPC

total=0 bad=0 refused=0 ran=0
for repo in ${BENCH_REPOS:-clas det seg}; do
    for g in "$GOLDEN/$repo"/*.golden; do
        cfg="${g%.golden}.txt"
        py=$(awk 'length($0) > 0' "$cfg" | sed -n 3p | cut -d: -f2-)
        nsec=$(grep -c '^### run ' "$g")
        for k in $(seq 1 "$nsec"); do
            params=$(awk -v k="$k" '/^### run /{n++; if (n==k) print $3}' "$g")
            work=$(mktemp -d "$TMPDIR/bench.XXXXXX")
            mkdir -p "$work/bin" "$work/${root_name[$repo]}/test_tipc/configs/golden" "$work/${root_name[$repo]}/deploy"
            for p in python python3 python3.7 python3.10 $py; do cp "$STUB" "$work/bin/$p"; done
            cd "$work/${root_name[$repo]}" || fail "cd"
            cp "$cfg" test_tipc/configs/golden/config.txt
            args=(run --dialect "$repo" test_tipc/configs/golden/config.txt benchmark_train)
            [ "$params" = - ] || args+=("$params")
            envs=()
            while IFS= read -r e; do envs+=("$e"); done < <(awk -v k="$k" '/^### run /{n++} n==k' "$g" | sed -n 's/^env\t//p')
            env "${envs[@]}" PATH="$work/bin:$PATH" "$BIN" "${args[@]}" --dry-run > ../dry 2> ../dryerr
            rc=$?
            total=$((total + 1))
            # PaddleClas's script seds the next line's value into num_workers when a section has no
            # num_workers line; its eval then breaks the command at ';'. tipc refuses such a config.
            if awk -v k="$k" '/^### run /{n++} n==k' "$g" | grep '^cmd	' | grep -v /scripts/analysis.py \
                   | grep -q 'num_workers=[^ ]*;'; then
                if [ "$rc" = 2 ] && grep -q "has no num_workers line" ../dryerr; then refused=$((refused + 1))
                else echo "$repo $(basename "$g" .golden) [$params]: not refused (exit $rc)"; bad=$((bad + 1)); fi
                cd "$TMPDIR" && rm -rf "$work"
                continue
            fi
            [ "$rc" = 0 ] || { echo "dry run failed: $(head -n 3 ../dryerr)"; bad=$((bad + 1)); continue; }
            if [ "$params" = - ] && [ "${BENCH_RUN_ALL:-0}" != 1 ]; then
                # the default layouts' runs: the plan (a dry run) against the original's commands; the
                # N1C1 run below runs for real (statuses, FLAGS reaching the trainer, files)
                python3 "$ROOT/tests/e2e/bench_transcript.py" golden-plan "$g" "$k" > ../want
                python3 "$ROOT/tests/e2e/bench_transcript.py" tipc ../dry - - "$PWD" - > ../got
            else
                find . | LC_ALL=C sort > ../before
                env "${envs[@]}" GOLDEN_ENV_LOG="$work/envlog" PATH="$work/bin:$PATH" "$BIN" "${args[@]}" > ../out 2> ../err
                rc=$?
                touch "$work/envlog"
                find . | LC_ALL=C sort > ../after
                LC_ALL=C comm -13 ../before ../after | while IFS= read -r p; do
                    if [ -d "$p" ] && [ ! -L "$p" ]; then printf '%s/\n' "${p#./}"; else printf '%s\n' "${p#./}"; fi
                done > ../files
                junit=$(find . -path '*/tipc/junit.xml' | head -n 1)
                python3 "$ROOT/tests/e2e/bench_transcript.py" golden "$g" "$k" > ../want
                if [ -n "$junit" ] && [ "$rc" != 2 ] && [ "$rc" != 70 ]; then
                    python3 "$ROOT/tests/e2e/bench_transcript.py" tipc ../dry "$junit" "$work/envlog" "$PWD" ../files > ../got
                else
                    echo "tipc exit $rc, no report: $(head -n 3 ../err)" > ../got
                fi
                ran=$((ran + 1))
            fi
            if ! cmp -s ../want ../got; then
                bad=$((bad + 1))
                if [ "$bad" -le "${BENCH_SHOW:-4}" ]; then
                    echo "MISMATCH $repo $(basename "$g" .golden) [$params] (tipc exit $rc):"
                    diff ../want ../got | head -n "${BENCH_DIFF_LINES:-12}"
                fi
            fi
            cd "$TMPDIR" && rm -rf "$work"
        done
    done
done
[ "$total" -gt 0 ] || fail "no golden runs found"
[ "$bad" = 0 ] || fail "$bad of $total benchmark runs differ from their repo's benchmark_train.sh"
echo "ok: $((total - refused)) benchmark runs (config x PARAMS) match their repo's benchmark_train.sh ($ran of" \
     "them run, the others planned: BENCH_RUN_ALL=1 runs all); $refused whose commands the script breaks are refused"
