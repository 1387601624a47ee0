#!/usr/bin/env bash
# test_bench_scaling.sh: `tipc bench scaling` on loopback, tiny shapes: 1 and 2 real ranks through
# `tipc launch`; the table on stdout and in OUTPUT/scaling.{json,md,svg} agrees with the ranks' own
# figures (rank<R>.json): global img/s = N x batch x steps / the slowest rank's seconds, speed-up
# and efficiency follow from it, the 1-rank run has no communication and the 2-rank run some; the
# SVG is well-formed with both charts, their y axes from 0; a stale rank result is not counted; bad
# values are exit 2.
# (Speed itself is docs/benchmarks.md, not a test.)
set -u
T=${TIPC:?}
export LC_ALL=C
W=${TMPDIR:-/tmp}/scaling.$$
mkdir -p "$W" && cd "$W" || exit 1
fail() { echo "FAIL: $*"; for f in "$W"/out/n*/launch.out; do [ -e "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }
ARGS=(--batch-size 2 --resolution 32 --steps 2 --warmup 1 --threads 1 --num-classes 10)

"$T" bench scaling --ranks 1,2 "${ARGS[@]}" --output out >stdout 2>stderr || fail "bench scaling: exit $? $(cat stderr)"
for f in scaling.json scaling.md scaling.svg n1/rank0.json n2/rank0.json n2/rank1.json n2/log/workerlog.1; do
    [ -s "out/$f" ] || fail "out/$f missing"
done
grep -Eq '^ +1 +[0-9.]+ +[0-9.]+ +1\.00x +100\.0% +0\.0%  none$' stdout || fail "1-rank row: $(cat stdout)"
grep -Eq '^ +2 +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+% +[0-9.]+%  shared memory$' stdout || fail "2-rank row: $(cat stdout)"
grep -q '^# network: loopback; load average' stdout || fail "header: $(cat stdout)"
python3 - out <<'PY' || fail "the table does not follow from the ranks' figures"
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
t = json.load(open(f"{d}/scaling.json"))
rows = {r["ranks"]: r for r in t["rows"]}
assert sorted(rows) == [1, 2], rows
s = t["settings"]
for n, r in rows.items():
    ranks = [json.load(open(f"{d}/n{n}/rank{k}.json")) for k in range(n)]
    assert all(x["world"] == n and x["batch"] == s["batch_per_rank"] == 2 and x["steps"] == 2 for x in ranks), ranks
    want = n * 2 * 2 / max(x["seconds"] for x in ranks)
    assert abs(r["global_ips"] - want) < 1e-6 * want, (r, want)
    assert abs(r["per_rank_ips"] * n - r["global_ips"]) < 1e-6 * want
    share = sum(x["comm_seconds"] / x["seconds"] for x in ranks) / n
    assert abs(r["exposed_comm_share"] - share) < 1e-9, (r, share)
assert rows[1]["exposed_comm_share"] == 0 and rows[2]["exposed_comm_share"] > 0, rows
sp = rows[2]["global_ips"] / rows[1]["global_ips"]
assert abs(rows[2]["speedup"] - sp) < 1e-9 and abs(rows[2]["efficiency"] - sp / 2) < 1e-9, rows[2]
md = open(f"{d}/scaling.md").read()
assert "| 2 | %.2f |" % rows[2]["global_ips"] in md, md
svg = ET.parse(f"{d}/scaling.svg").getroot()
ns = "{http://www.w3.org/2000/svg}"
assert svg.tag == ns + "svg"
lines = [p for p in svg.iter(ns + "polyline")]
assert len(lines) == 4, len(lines)           # measured + linear, efficiency + exposed comm
assert all(len(p.get("points").split()) == 2 for p in lines)
# both charts' y axes start at 0 (one starting at the smallest value would exaggerate differences):
# the lowest y tick label (the largest y coordinate) reads 0
for cls in ("throughput", "efficiency"):
    c = [e for e in svg.iter(ns + "svg") if e.get("class") == cls]
    assert len(c) == 1, (cls, len(c))
    ticks = sorted((float(e.get("y")), e.text) for e in c[0].iter(ns + "text") if e.get("text-anchor") == "end")
    assert 3 <= len(ticks) <= 11 and ticks[-1][1] == "0", (cls, ticks)
    # "nice" ticks (report/svg.c): equal steps of 1, 2 or 5 times a power of ten
    vals = [float(t.rstrip("%x")) for _, t in ticks][::-1]
    step = vals[1] - vals[0]
    assert all(abs((b - a) - step) < 1e-6 * max(1.0, step) for a, b in zip(vals, vals[1:])), (cls, vals)
    mant = step / 10 ** __import__("math").floor(__import__("math").log10(step))
    assert any(abs(mant - m) < 1e-6 for m in (1, 2, 5)), (cls, step)
print("table ok:", {n: round(r["global_ips"], 1) for n, r in rows.items()})
PY

# the blocking mode is carried to the ranks and named in the table
"$T" bench scaling --ranks 2 "${ARGS[@]}" --overlap off --bucket-mb 25 --output off >off.out 2>off.err || fail "--overlap off: $(cat off.err)"
grep -q '25 MB buckets after backward (blocking)' off.out || fail "blocking header: $(cat off.out)"
# ranks x threads beyond this host's CPUs are flagged under the table (their efficiency is the host's)
grep -q '^# note:' stdout && [ "$(nproc)" -ge 2 ] && fail "1,2 ranks x 1 thread flagged on $(nproc) CPUs: $(cat stdout)"
NP=$(nproc)
"$T" bench scaling --ranks 1,2 --batch-size 2 --resolution 32 --steps 2 --warmup 1 --num-classes 10 --threads "$NP" \
    --output over >over.out 2>over.err || fail "--threads $NP: $(cat over.err)"
grep -q "^# note: 2 ranks x $NP threads\? oversubscribe this host's $NP CPUs: there the speed-up cannot pass 1x" over.out ||
    fail "oversubscription not flagged: $(cat over.out)"
grep -q "^Note: 2 ranks x $NP thread" over/scaling.md || fail "oversubscription not in scaling.md"
python3 -c "import json; assert json.load(open('over/scaling.json'))['cpus'] == $NP" || fail "cpus in scaling.json"

# --comm-shm off reaches the ranks: Gloo's TCP on loopback, named in the row
"$T" bench scaling --ranks 2 "${ARGS[@]}" --comm-shm off --output tcp >tcp.out 2>tcp.err || fail "--comm-shm off: $(cat tcp.err)"
grep -Eq '^ +2 .*%  tcp$' tcp.out || fail "--comm-shm off row: $(cat tcp.out)"
python3 -c 'import json; r=json.load(open("tcp/scaling.json"))["rows"][0]; assert r["allreduce_via"] == "tcp", r' || fail "allreduce_via in scaling.json"
grep -q 'tipc bench train.*ranks=2' off/n2/launch.out || fail "ranks' header"
python3 -c 'import json,sys; t=json.load(open("off/scaling.json")); s=t["settings"]; assert s["overlap"] is False and s["bucket_mb"] == 25, s' || fail "settings in scaling.json"
python3 -c 'import json,sys; t=json.load(open("out/scaling.json")); s=t["settings"]; assert s["overlap"] is True and s["bucket_mb"] == 1, s' || fail "default settings in scaling.json"

# a run that does not finish (--timeout) fails naming its logs, and a rank result left by an earlier
# run is removed before the run starts, never counted; every rank is gone afterwards
echo '{"rank":0,"world":1,"seconds":1,"comm_seconds":0,"median_step_seconds":1}' >out/n1/rank0.json
"$T" bench scaling --ranks 1 "${ARGS[@]}" --steps 1000000 --timeout 2 --output out >/dev/null 2>err & P=$!
wait $P; rc=$?
[ "$rc" = 4 ] || fail "timed-out run: exit $rc, want 4: $(cat err)"
grep -q 'the 1-rank run timed out (--timeout) (status 124); its launcher output: out/n1/launch.out' err || fail "timeout message: $(cat err)"
[ ! -e out/n1/rank0.json ] || fail "the earlier run's rank0.json is still there"
[ -z "$(pgrep -f "job_id=scaling${P}n" || true)" ] || fail "ranks left after the timeout: $(pgrep -af "job_id=scaling${P}n")"

for bad in "--ranks 0" "--ranks 2,1" "--ranks x" "--link-rate 1gbit" "--netns --link-delay 5" "--netns --link-rate fast" "--device gpu"; do
    "$T" bench scaling $bad --output out3 >/dev/null 2>err; rc=$?
    [ "$rc" = 2 ] || fail "'$bad': exit $rc, want 2"
done
[ ! -e out3/scaling.json ] || fail "a refused command wrote a table"
"$T" bench train --netns >/dev/null 2>&1; [ $? = 2 ] || fail "--netns outside scaling"
echo ok
