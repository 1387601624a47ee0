# test_run_why.sh: a failed run says why wherever a person looks, and a CPU runner can skip the
# stages that need a GPU (issue #25, items 1 and 2):
#  1. a real tipc failure (a bad -o value in the config's training line): the end table shows the
#     reason and the error line itself, JUnit's failure message is "reason: error line" (golden
#     files for both), the JUnit file validates, report.html shows the error and links the log;
#  2. a Python program's failure (the stub interpreter prints a traceback): its exception line;
#  3. --skip-gpu REASON: the use_gpu=True inference is skipped with the reason (table, JUnit,
#     report: golden), the run passes (exit 0); without it, on this machine (no GPU), that stage
#     fails and says why: exit 7 "unavailable" and the CUDA message.
. "$ROOT/tests/e2e/lib.sh"
. "$ROOT/tests/e2e/lib_report.sh"
command -v python3 > /dev/null || skip "python3 is needed to read the JUnit report"
command -v xmllint > /dev/null || skip "xmllint not installed (scripts/install-deps.sh installs libxml2-utils)"
XSD="$ROOT/tests/fixtures/jenkins-junit.xsd"
make_root
tiny_config -1 1

# 1. tipc train refuses a recipe value: the error line, not only "exit status 2 (tipc: usage)"
sed 's#^norm_train:train -c configs/m/tiny.yaml#& -o Optimizer.momentum=abc#' configs/m/tiny.txt > configs/m/bad.txt
"$TIPC" run configs/m/bad.txt lite_train_lite_infer --no-prepare --output out --junit bad.xml > out.txt 2> err.txt
assert_eq "$?" 1 "exit code of a failed run"
end_table err.txt > bad.table
golden why_tipc.table bad.table
junit_cases bad.xml > bad.cases
golden why_tipc.junit bad.cases
xmllint --noout --schema "$XSD" bad.xml 2> xsd.err || fail "schema: $(head -5 xsd.err)"
python3 - out/tipc/report.html <<'PY' || fail "report.html"
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.hrefs, s.text, s.errors = [], [], []
        s.tags = []
    def handle_starttag(s, tag, attrs):
        s.tags.append((tag, dict(attrs)))
        if tag == "a": s.hrefs.append(dict(attrs).get("href"))
    def handle_data(s, d):
        s.text.append(d)
        if s.tags and s.tags[-1][1].get("class") == "error": s.errors.append(d)
    def handle_endtag(s, tag):
        if s.tags: s.tags.pop()
p = P(); p.feed(open(sys.argv[1], encoding="utf-8").read())
want = "-o: bad value 'abc' for 'Optimizer.momentum'"
assert want in p.errors, p.errors                     # the error line, in the table and the failures section
assert p.errors.count(want) == 2, p.errors
assert "01_train.log" in p.hrefs, p.hrefs             # the log, linked relative to the page
assert "#failure-1" in p.hrefs, p.hrefs               # the table's reason leads to the failure
assert "Failures" in p.text, "no failures section"
PY

# 2. a Python program's failure: the exception its traceback ends with
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
printf 'Traceback (most recent call last):\n  File "tools/export_model.py", line 42, in <module>\n    main()\nValueError: the weights file latest.pdparams does not exist\n' > tb.txt
STUB_FAIL=export_model.py STUB_CAT="$PWD/tb.txt" "$TIPC" run "$CFG" lite_train_lite_infer --junit py.xml > out.txt 2> err.txt
assert_eq "$?" 1 "exit code of a run whose export failed"
end_table err.txt > py.table
golden why_python.table py.table
junit_cases py.xml > py.cases
golden why_python.junit py.cases

# 3. a CPU runner: --skip-gpu skips the GPU inference with the reason, the run passes
rm -rf out
"$TIPC" run configs/m/tiny.txt lite_train_lite_infer --no-prepare --output out --junit skip.xml \
    --skip-gpu "CPU runner" > out.txt 2> err.txt
assert_eq "$?" 0 "exit code with --skip-gpu"
assert_eq "$(tail -n 1 out.txt)" "4 passed, 0 failed, 1 skipped" "summary with --skip-gpu"
# (a stage's warnings, shown under it, are test_finite_or_fail's: the tiny training's "loss never
# fell" carries losses whose last digits differ by CPU level, so they stay out of this golden table)
end_table err.txt | grep -v '^ *tipc: warning: ' > skip.table
golden skip_gpu.table skip.table
junit_cases skip.xml > skip.cases
golden skip_gpu.junit skip.cases
grep -q 'needs a GPU: CPU runner (--skip-gpu)' out/tipc/report.html || fail "report.html lacks the skip reason"
grep -q 'class="verdict passed"' out/tipc/report.html || fail "report.html's verdict is not passed"
# the same from the environment, and --dry-run says which stages it would skip
TIPC_SKIP_GPU="CPU runner" "$TIPC" run configs/m/tiny.txt lite_train_lite_infer --no-prepare --output out --dry-run > dry.txt
grep -q '^               skipped: needs a GPU: CPU runner (--skip-gpu)$' dry.txt || fail "dry run: $(cat dry.txt)"

# without it, on this machine (no GPU), the GPU inference fails and says why
if ! nvidia-smi -L > /dev/null 2>&1; then
    rm -rf out
    "$TIPC" run configs/m/tiny.txt lite_train_lite_infer --no-prepare --output out > out.txt 2> err.txt
    assert_eq "$?" 1 "exit code without --skip-gpu on a machine without a GPU"
    grep -q 'reason: exit status 7 (tipc: unavailable)$' err.txt || fail "exit 7's name: $(grep reason err.txt)"
    grep -Eq '^        error:  (no CUDA device|device .gpu.: this tipc was built without CUDA)' err.txt ||
        fail "no error line for the GPU inference: $(grep -A2 FAILED err.txt)"
fi
echo ok
