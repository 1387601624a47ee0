#!/usr/bin/env bash
# test_bench_scaling_netns.sh: `tipc bench scaling --netns`: one rank per network namespace (a hub
# namespace with a bridge, veth links shaped by tc), tiny shapes. The 2-node run meets over the
# namespaces' addresses and fills the table; --link-delay works where the kernel has netem and is
# exit 7 naming it where not; SIGINT mid-run is exit 130 with no namespace and no rank left; after a
# SIGKILL the next run removes the namespaces the killed one left. Skips (77) where namespaces or
# veth are not permitted.
set -u
T=${TIPC:?}
export LC_ALL=C
W=${TMPDIR:-/tmp}/scalingns.$$
mkdir -p "$W" && cd "$W" || exit 1
fail() { echo "FAIL: $*"; for f in "$W"/*/n*/node*.out "$W"/*.err; do [ -e "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done; exit 1; }
command -v ip >/dev/null && command -v tc >/dev/null || { echo "SKIP: no ip/tc (iproute2)"; exit 77; }
probe=tipcprobe$$
trap 'ip netns del $probe 2>/dev/null' EXIT
ip netns add $probe 2>err || { echo "SKIP: network namespaces not permitted here: $(head -c 200 err)"; exit 77; }
ip -n $probe link add name pa type veth peer name pb 2>err || { echo "SKIP: veth not permitted here: $(head -c 200 err)"; exit 77; }
netem=0; tc -n $probe qdisc add dev pa root netem delay 1ms 2>/dev/null && netem=1
ip netns del $probe
ours() { ip netns list | grep -o "^tipcsc$1[hn][0-9]*" || true; }
ARGS=(--batch-size 2 --resolution 32 --steps 2 --warmup 1 --threads 1 --num-classes 10)

"$T" bench scaling --netns --link-rate 1gbit --ranks 2 "${ARGS[@]}" --output a >a.out 2>a.err & P=$!
wait $P || fail "netns run: exit $?"
grep -q '^# network: network namespaces on a bridge, links: delay none, rate 1gbit' a.out || fail "header: $(cat a.out)"
grep -Eq '^ +2 +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+% +[0-9.]+%  tcp$' a.out || fail "2-rank row (each rank its own host: TCP): $(cat a.out)"
grep -q 'node 1/2 (10.77.0.2)' a/n2/node1.out || fail "node 1 did not find itself in its namespace: $(cat a/n2/node1.out)"
[ -s a/n2/rank1.json ] && [ -s a/scaling.svg ] || fail "outputs"
[ -z "$(ours $P)" ] || fail "namespaces left: $(ours $P)"

"$T" bench scaling --netns --link-delay 1ms --ranks 2 "${ARGS[@]}" --output d >d.out 2>d.err & P=$!
wait $P; rc=$?
if [ $netem = 1 ]; then
    [ $rc = 0 ] || fail "--link-delay with netem present: exit $rc"
    grep -q 'links: delay 1ms' d.out || fail "delay header"
else
    [ $rc = 7 ] || fail "--link-delay without netem: exit $rc, want 7"
    grep -q "this kernel has no 'netem' qdisc" d.err || fail "netem message: $(cat d.err)"
    echo "(no netem in this kernel: --link-delay is exit 7, as documented)"
fi
[ -z "$(ours $P)" ] || fail "namespaces left after the delay run: $(ours $P)"

# SIGINT while the ranks train: exit 130, nothing left
"$T" bench scaling --netns --ranks 2 "${ARGS[@]}" --steps 1000000 --output i >i.out 2>i.err & P=$!
for _ in $(seq 300); do grep -q 'ranks=2' i/n2/node0.out 2>/dev/null && break; sleep 0.1; done
grep -q 'ranks=2' i/n2/node0.out || fail "the ranks did not start within 30 s"
[ -n "$(ours $P)" ] || fail "no namespaces while running"
kill -INT $P
wait $P; rc=$?
[ $rc = 130 ] || fail "SIGINT: exit $rc, want 130"
[ -z "$(ours $P)" ] || fail "namespaces left after SIGINT: $(ours $P)"
[ -z "$(pgrep -f "job_id=scaling${P}n" || true)" ] || fail "ranks left after SIGINT"

# SIGKILL leaves the namespaces (nobody is left to remove them); the next run removes them
"$T" bench scaling --netns --ranks 2 "${ARGS[@]}" --steps 1000000 --output k >k.out 2>k.err & P=$!
for _ in $(seq 300); do grep -q 'ranks=2' k/n2/node0.out 2>/dev/null && break; sleep 0.1; done
grep -q 'ranks=2' k/n2/node0.out || fail "the ranks did not start within 30 s"
kill -9 $P; wait $P 2>/dev/null
for _ in $(seq 50); do [ -z "$(pgrep -f "job_id=scaling${P}n" || true)" ] && break; sleep 0.2; done
[ -z "$(pgrep -f "job_id=scaling${P}n" || true)" ] || fail "ranks survived the SIGKILL of bench scaling"
[ -n "$(ours $P)" ] || fail "expected the killed run's namespaces"
"$T" bench scaling --netns --ranks 1 "${ARGS[@]}" --output s >s.out 2>s.err || fail "run after the kill"
grep -q "removing network namespace tipcsc${P}h left by process $P" s.err || fail "sweep message: $(cat s.err)"
[ -z "$(ours $P)" ] || fail "the killed run's namespaces are still there: $(ours $P)"
echo ok
