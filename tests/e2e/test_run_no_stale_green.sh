#!/usr/bin/env bash
# No stale green (#23 class 3): a run that is killed (kill -9: a CI timeout, the OOM killer) or
# refused (exit 2: a config or option error) leaves no passing report behind. The previous run's
# green OUTPUT/tipc/junit.xml, OUTPUT/tipc/report.html and --junit file are replaced, as the run
# starts, by a failing "incomplete" version, and by a failing "refused" one when the run is refused;
# the real reports are written at the end; a run interrupted after a passing stage is not green
# either. Real runs of a 32-line config (stub interpreter).
. "$ROOT/tests/e2e/lib.sh"
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
[ -f "$CFG" ] || skip "no golden fixtures"
make_root
OUT=test_tipc/output/mobilenet_v3_small/lite_train_lite_infer
# verdict FILE...: "green" when every JUnit file has tests and no failure or error and the HTML says
# passed; else "red: why"
verdict() {
    python3 - "$@" <<'PY'
import sys, xml.etree.ElementTree as ET
why = []
for p in sys.argv[1:]:
    if p.endswith(".html"):
        t = open(p, encoding="utf-8").read()
        if 'class="verdict passed"' not in t: why.append("%s not passed" % p)
        continue
    r = ET.parse(p).getroot()
    suites = [r] if r.tag == "testsuite" else r.findall("testsuite")
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    if bad or not sum(int(s.get("tests", 0)) for s in suites): why.append("%s: %d failing" % (p, bad))
print("red: " + "; ".join(why) if why else "green")
PY
}
REPORTS=("j.xml" "$OUT/tipc/junit.xml" "$OUT/tipc/report.html")
green_run() {
    "$TIPC" run "$CFG" lite_train_lite_infer --junit j.xml >out.txt 2>err.txt || fail "the passing run: $(tail -5 err.txt)"
    [ "$(verdict "${REPORTS[@]}")" = green ] || fail "a passing run's reports: $(verdict "${REPORTS[@]}")"
}
# all_red WHAT WORD: no report passes, and each says WORD
all_red() {
    local f v
    for f in "${REPORTS[@]}"; do
        v=$(verdict "$f")
        [ "${v%%:*}" = red ] || fail "$1: $f still passes (a stale green report)"
        grep -q "$2" "$f" || fail "$1: $f does not say '$2': $(head -c 600 "$f")"
    done
}

# 1. kill -9 in the middle of a run, after a green one
green_run
STUB_SLEEP=30 "$TIPC" run "$CFG" lite_train_lite_infer --junit j.xml >out.txt 2>err.txt &
pid=$!
for _ in $(seq 100); do grep -q '^\[1/' err.txt && break; sleep 0.1; done
grep -q '^\[1/' err.txt || fail "the run did not start its first stage: $(cat err.txt)"
kill -9 $pid; wait $pid 2>/dev/null
all_red "kill -9" incomplete
echo "kill -9: $(verdict "${REPORTS[@]}")"

# 2. a config error (shell syntax in a command: exit 2, nothing run), after a green one
green_run
mkdir -p bad && sed 's/^norm_train:train.py$/norm_train:train.py; touch pwned/' "$CFG" >bad/config.txt
rc=0; "$TIPC" run bad/config.txt lite_train_lite_infer --junit j.xml >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] || fail "broken config: exit $rc, want 2: $(cat err.txt)"
all_red "config error" refused
grep -q 'shell' j.xml || fail "the refused report does not give the reason: $(cat j.xml)"

# 3. an option error (exit 2 before the config is read): the --junit file
green_run
rc=0; "$TIPC" run "$CFG" lite_train_lite_infer --junit j.xml --stage-timeout 5x >out.txt 2>err.txt || rc=$?
[ "$rc" = 2 ] || fail "bad option: exit $rc"
v=$(verdict j.xml); [ "${v%%:*}" = red ] && grep -q refused j.xml || fail "bad option: j.xml still passes: $v"

# 4. SIGTERM (a CI cancel) while a stage runs that catches it and exits 0: exit 130, and no report
#    says passed (the stage that ran did pass; the run did not)
green_run
mkdir -p trap && cat > trap/python3.7 <<'SH'
#!/bin/sh
trap 'exit 0' TERM
sleep 30 & wait
SH
chmod +x trap/python3.7
PATH="$PWD/trap:$PATH" "$TIPC" run "$CFG" lite_train_lite_infer --junit j.xml >out.txt 2>err.txt &
pid=$!
for _ in $(seq 100); do grep -q '^\[1/' err.txt && break; sleep 0.1; done
sleep 0.3
kill -TERM $pid; rc=0; wait $pid || rc=$?
[ "$rc" = 130 ] || fail "SIGTERM: exit $rc, want 130: $(tail -5 err.txt)"
all_red "SIGTERM" interrupted

# 5. the next passing run is green again
green_run
echo PASS
