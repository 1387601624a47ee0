#!/usr/bin/env bash
# The launcher's guards against a hostile or careless environment (#11 items 13, 17):
# a pre-planted workerlog.N symlink (or hard link) is never written through, and --gpus with more
# entries than ranks a node may run is refused (exit 2) before anything starts.
. "$(dirname "$0")/lib_launch.sh"

# workerlog symlink and hard link: the victims keep their content, the logs are fresh files
mkdir -p l
echo "precious" >victim.txt
echo "precious too" >victim2.txt
ln -s "$W/victim.txt" l/workerlog.0
ln victim2.txt l/workerlog.1
rc=0; "$TIPC" launch --job_id="$JOB" --nproc_per_node=2 --log_dir=l sh -c 'echo "rank $RANK wrote this"' >out 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "launch with planted logs: exit $rc: $(cat out)"
[ "$(cat victim.txt)" = precious ] || fail "the symlink was followed: victim.txt is now '$(cat victim.txt)'"
[ "$(cat victim2.txt)" = "precious too" ] || fail "the hard link was written through: '$(cat victim2.txt)'"
[ ! -L l/workerlog.0 ] && grep -q 'rank 0 wrote this' l/workerlog.0 || fail "workerlog.0 is not a fresh log"
grep -q 'rank 1 wrote this' l/workerlog.1 || fail "workerlog.1 is not a fresh log"

# --gpus cap: 1000 entries refused with exit 2, nothing started
list=$(seq -s, 0 999)
rc=0; "$TIPC" launch --job_id="$JOB" --gpus="$list" --log_dir=lg sleep 30 >out 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--gpus with 1000 entries: exit $rc, want 2: $(head -c 300 out)"
grep -q -- '--gpus lists 1000 entries; at most 256 ranks per node' out || fail "message: $(head -c 300 out)"
[ -z "$(job_procs "$JOB")" ] && [ ! -e lg ] || fail "ranks or logs were created for a refused --gpus"
echo PASS
