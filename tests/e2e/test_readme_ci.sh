# test_readme_ci.sh: the README's CI snippets, pasted into a CPU-only job, give a green pipeline with
# the GPU stages shown as skipped (issue #25, Done-when). The GitLab and Jenkins snippets' commands are
# read from README.md and run as their job's shell would, in a checkout-shaped folder, with the
# release binary as bin/tipc (the snippets' first line, install-deps and make, is what built it). Then
# what each CI reads: exit 0, junit.xml with 0 failures and the use_gpu=True inferences skipped
# with the reason, valid against Jenkins' schema, and every artifact path the GitLab job keeps.
# Cost: one lite_train_lite_infer run of train_infer.txt (two 5-epoch trainings, about a minute).
. "$ROOT/tests/e2e/lib.sh"
cd "$TMPDIR" || fail "cd"
command -v python3 > /dev/null || skip "python3 is needed to read README.md and the JUnit report"
command -v xmllint > /dev/null || skip "xmllint not installed (scripts/install-deps.sh installs libxml2-utils)"
python3 - "$ROOT/README.md" > snippets.txt <<'PY' || fail "README.md: the CI snippets are not where this test looks"
import re, sys
readme = open(sys.argv[1], encoding="utf-8").read()
gitlab = re.search(r"GitLab \(`\.gitlab-ci\.yml`\):\n\n```yaml\n(.*?)```", readme, re.S).group(1)
jenkins = re.search(r"Jenkins \(declarative pipeline.*?\n\n```groovy\n(.*?)```", readme, re.S).group(1)
g = [l.strip()[2:] for l in gitlab.splitlines() if re.match(r"\s+- ", l) and "script:" not in l]
g = [c for c in g if not c.startswith("[") and "install-deps" not in c]        # the artifact list, the build
j = [m for m in re.findall(r"^\s+sh '(.*)'$", jenkins, re.M) if "install-deps" not in m]
assert g and g == j, ("the GitLab and Jenkins jobs run different commands", g, j)
print("\n".join(g))
PY
grep -q -- '--skip-gpu' snippets.txt || fail "the CI snippets do not skip the GPU stages: $(cat snippets.txt)"
# a checkout as the CI job sees it (configs, images, bin/tipc), nothing written into the repository
mkdir -p job/bin
ln -s "$ROOT/configs" job/configs
ln -s "$ROOT/images" job/images
ln -s "$TIPC_REL" job/bin/tipc
(cd job && bash -e ../snippets.txt > job.out 2> job.err)
rc=$?
[ "$rc" = 0 ] || fail "the CI job is red: exit $rc: $(tail -n 25 job/job.err)"
cd job || fail cd
xmllint --noout --schema "$ROOT/tests/fixtures/jenkins-junit.xsd" junit.xml 2> xsd.err || fail "schema: $(head -5 xsd.err)"
python3 - junit.xml <<'PY' || fail "junit.xml"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert s.get("failures") == "0" and s.get("tests") == "10" and s.get("skipped") == "2", s.attrib
skipped = [c for c in s.iter("testcase") if c.find("skipped") is not None]
for c in skipped:
    assert "use_gpu=True" in c.get("name"), c.get("name")
    assert c.find("skipped").get("message") == "needs a GPU: CPU runner (--skip-gpu)", c.find("skipped").attrib
PY
# the GitLab job's artifacts: out/tipc/report.html, out/tipc/metrics.jsonl, out/tipc/*.log, out/results_python.log
for f in out/tipc/report.html out/tipc/metrics.jsonl out/results_python.log; do [ -s "$f" ] || fail "artifact $f missing"; done
ls out/tipc/*.log > /dev/null 2>&1 || fail "no out/tipc/*.log"
grep -q 'class="verdict passed"' out/tipc/report.html || fail "the report's verdict is not passed"
echo ok
