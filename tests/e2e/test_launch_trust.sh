#!/usr/bin/env bash
# No outsider in, no job merges (#11 items 14, 15; #23): a second job meeting the first on its master
# port is refused (exit 4) naming both sides, the first runs on; the token is a secret (the old derivable one is refused and
# cannot stop the job); several hosts without a secret are refused (exit 2); TIPC_JOB_TOKEN_FILE
# must be private.
. "$(dirname "$0")/lib_launch.sh"
IPS=--ips=127.0.0.1,127.0.0.2

# 1. two unrelated jobs, same port, same job id, one shared TIPC_JOB_TOKEN, different commands: the
#    second job's node is refused (exit 4) naming both commands, before it writes anything; the
#    first job runs to its end (#23: a second job never harms the first)
port=$(free_port)
export TIPC_JOB_TOKEN=shared-by-two-jobs-$$
launch_bg a0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=la sleep 5
launch_bg a1 $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=la sleep 5
for _ in $(seq 100); do [ -e la/workerlog.1 ] && break; sleep 0.1; done
rc=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 \
    --log_dir=lb true >b1.out 2>&1 || rc=$?
wait_rc rc0 "$a0_pid"; wait_rc rc1 "$a1_pid"
unset TIPC_JOB_TOKEN
[ "$rc0$rc1$rc" = 004 ] || fail "two jobs on one port: exit $rc0 $rc1 (first job) $rc (second), want 0 0 4"
grep -q "two different jobs met on one rendezvous store (job id '$JOB')" b1.out || fail "b1.out: $(cat b1.out)"
grep -q "runs 'sleep 5'" b1.out && grep -q "runs 'true'" b1.out || fail "b1.out does not name both sides: $(cat b1.out)"
grep -q "pid $a0_pid on" b1.out || fail "b1.out does not name the first job's node 0: $(cat b1.out)"
[ ! -e lb/workerlog.1 ] || fail "the second job started a rank"

# 2. the token the old launcher derived from job id + endpoint is refused (403) and cannot post a
#    failure: the job ends 0 on both nodes
port=$(free_port)
launch_bg g0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=lg sleep 4
launch_bg g1 $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=lg sleep 4
wait_line g0.out 'ranks (0..0 of 2)' 20
forged=$(python3 - "$JOB" "127.0.0.1" "$port" <<'PY'
import sys
seed = "tipc|%s|%s:%s" % (sys.argv[1], sys.argv[2], sys.argv[3])
M = (1 << 64) - 1
h1, h2 = 1469598103934665603, (1099511628211 * 31) & M
for ch in seed.encode():
    h1 = ((h1 ^ ch) * 1099511628211) & M
    h2 = ((h2 ^ h1) * 0x9E3779B97F4A7C15) & M
print((h1.to_bytes(8, "little") + h2.to_bytes(8, "little")).hex())
PY
)
for tok in "$forged" default ""; do
    code=$(python3 - "$port" "$JOB" "$tok" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
h = {"X-Tipc-Token": sys.argv[3]} if sys.argv[3] else {}
c.request("PUT", "/kv/%s/fail" % sys.argv[2], body=b"rank 0 failed (forged)", headers=h)
print(c.getresponse().status)
PY
)
    [ "$code" = 403 ] || fail "a forged token '$tok' got HTTP $code"
done
wait_rc rc0 "$g0_pid"; wait_rc rc1 "$g1_pid"
[ "$rc0$rc1" = 00 ] || fail "forged notice stopped the job: exit $rc0 $rc1: $(cat g0.out g1.out)"
grep -q forged g0.out g1.out && fail "the forged notice was read"

# 3. several hosts, no secret: refused before anything starts
rc=0; "$TIPC" launch --job_id="$JOB" --ips=10.9.9.1,10.9.9.2 --node_ip=10.9.9.1 sleep 30 >out 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'a job over several hosts needs a shared secret' out && grep -q 'TIPC_JOB_TOKEN_FILE' out ||
    fail "no secret: exit $rc: $(cat out)"

# 4. TIPC_JOB_TOKEN_FILE: a readable-by-others file is refused; a 0600 one is the job's token
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >tok
chmod 644 tok
rc=0; TIPC_JOB_TOKEN_FILE=$W/tok "$TIPC" launch --job_id="$JOB" --ips=10.9.9.1,10.9.9.2 --node_ip=10.9.9.1 sleep 30 >out 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "TIPC_JOB_TOKEN_FILE '$W/tok' is not private" out || fail "0644 token file: exit $rc: $(cat out)"
chmod 600 tok
port=$(free_port)
export TIPC_JOB_TOKEN_FILE=$W/tok
launch_bg f0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=lf sh -c 'echo "token=$TIPC_JOB_TOKEN"'
rc1=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=lf \
    sh -c 'echo "token=$TIPC_JOB_TOKEN"' >f1.out 2>&1 || rc1=$?
wait_rc rc0 "$f0_pid"
unset TIPC_JOB_TOKEN_FILE
[ "$rc0$rc1" = 00 ] || fail "0600 token file: exit $rc0 $rc1: $(cat f0.out f1.out)"
grep -qx "token=$(cat tok)" lf/workerlog.0 && grep -qx "token=$(cat tok)" lf/workerlog.1 || fail "ranks did not get the file's token"
echo PASS
