#!/usr/bin/env bash
# Two jobs of one user on one host and port, no TIPC_JOB_TOKEN (#23 class 7): the second job is
# refused with a message naming the first (its node 0's pid), and the first runs to its end, exit 0.
#  1. the second job runs another command (same job id): its node 0 finds the port taken, its node 1
#     is answered 403 by the first job's store (the derived token is the job's own);
#  2. the second job is the very same command: its node 0 finds the port taken, its node 1 finds
#     node 1 taken; neither writes into the first job's store;
#  3. the derived token differs per job: two jobs with other commands see other tokens.
. "$(dirname "$0")/lib_launch.sh"
IPS=--ips=127.0.0.1,127.0.0.2
# first_job NAME PORT SECS: job A (2 nodes, `sleep SECS`) in the background; returns once both ranks run
first_job() {
    launch_bg "${1}0" $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$2 --nproc_per_node=1 --log_dir="l$1" sleep "$3"
    launch_bg "${1}1" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$2 --nproc_per_node=1 --log_dir="l$1" sleep "$3"
    for _ in $(seq 100); do [ -e "l$1/workerlog.0" ] && [ -e "l$1/workerlog.1" ] && return; sleep 0.1; done
    fail "job $1 did not start its ranks"
}
for case in 1 2; do
    port=$(free_port)
    first_job a$case "$port" 6
    eval "pid0=\$a${case}0_pid"
    if [ $case = 1 ]; then cmd=(true); else cmd=(sleep 6); fi
    rb0=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 \
        --log_dir=lb "${cmd[@]}" >b0.out 2>&1 || rb0=$?
    rb1=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 \
        --join_timeout=5 --log_dir=lb "${cmd[@]}" >b1.out 2>&1 || rb1=$?
    eval "wait_rc ra0 \$a${case}0_pid; wait_rc ra1 \$a${case}1_pid"
    cat b0.out b1.out
    [ "$ra0$ra1" = 00 ] || fail "case $case: the first job was harmed by the second: exit $ra0 $ra1: $(cat a${case}0.out a${case}1.out)"
    [ "$rb0$rb1" = 44 ] || fail "case $case: the second job: exit $rb0 $rb1, want 4 4"
    for f in b0.out b1.out; do
        grep -q "pid $pid0\b" $f || fail "case $case: $f does not name the first job's node 0 (pid $pid0): $(cat $f)"
    done
    grep -q "job '$JOB'" b1.out || fail "case $case: b1.out does not name the job: $(cat b1.out)"
    [ ! -e lb/workerlog.0 ] && [ ! -e lb/workerlog.1 ] || fail "case $case: the second job started ranks"
done

# 3. two jobs with other commands get other tokens (the ranks see theirs in TIPC_JOB_TOKEN)
for c in c d; do
    port=$(free_port)
    launch_bg ${c}0 $IPS --node_ip=127.0.0.1 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=l$c sh -c "echo $c=\$TIPC_JOB_TOKEN"
    rc1=0; "$TIPC" launch --job_id="$JOB" $IPS --node_ip=127.0.0.2 --master=127.0.0.1:$port --nproc_per_node=1 --log_dir=l$c \
        sh -c "echo $c=\$TIPC_JOB_TOKEN" >${c}1.out 2>&1 || rc1=$?
    eval "wait_rc rc0 \$${c}0_pid"
    [ "$rc0$rc1" = 00 ] || fail "job $c: exit $rc0 $rc1"
done
tc=$(sed -n 's/^c=//p' lc/workerlog.0) td=$(sed -n 's/^d=//p' ld/workerlog.0)
[ -n "$tc" ] && [ -n "$td" ] && [ "$tc" = "$(sed -n 's/^c=//p' lc/workerlog.1)" ] || fail "job c's ranks: '$tc' '$(cat lc/workerlog.1)'"
[ "$tc" != "$td" ] || fail "two jobs with other commands share the derived token"
echo PASS
