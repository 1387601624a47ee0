#!/usr/bin/env bash
# test_cli.sh: the command line as a user meets it, through the one option parser (core/options.c):
# did-you-mean for commands and options, "missing MODE" before the usage, a value out of range is
# exit 2 naming the option and the range, `tipc help launch` lists every launch flag (Paddle's and
# torchrun's), the exit-code table only in `tipc help` / `tipc help exit-codes`, `CMD --help` and
# `tipc help CMD` agree, and `tipc launch ... CMD --help` is CMD's help, not launch's.
. "$ROOT/tests/e2e/lib.sh"
T=${TIPC:?}
cd "$TMPDIR" || fail "cd"

rc=0; "$T" runn >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "'runn' is not a tipc command" err && grep -q "did you mean 'run'?" err || fail "runn: rc=$rc $(cat err)"
rc=0; "$T" train --epoch 3 >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "unknown option '--epoch'" err && grep -q "did you mean '--epochs'?" err || fail "--epoch: rc=$rc $(cat err)"
rc=0; "$T" run cfg.txt lite_train_lite_infer --dryrun >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "did you mean '--dry-run'?" err || fail "--dryrun: rc=$rc $(cat err)"

rc=0; "$T" run cfg.txt >out 2>err || rc=$?
[ "$rc" = 2 ] || fail "run without MODE: rc=$rc"
[ "$(head -1 err)" = "tipc: error: run: missing MODE" ] || fail "first line is not 'missing MODE': $(head -2 err)"
sed -n 2p err | grep -q '^usage: tipc run CONFIG MODE' || fail "usage does not follow: $(head -3 err)"

rc=0; "$T" launch --nproc_per_node=0 true >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "launch: --nproc_per_node '0': want 1..256, auto, cpu or gpu" err || fail "range: rc=$rc $(cat err)"
rc=0; "$T" prepare --synthetic d --classes 5000 >out 2>err || rc=$?
[ "$rc" = 2 ] && grep -q "prepare: option '--classes' must be in 1..1000, got 5000" err || fail "prepare range: rc=$rc $(cat err)"
[ ! -e d ] || fail "a refused command line wrote output"

"$T" help launch >help.txt || fail "help launch"
for f in --ips --gpus --devices --selected_gpus --nproc_per_node --nproc-per-node --nnodes --node_rank --node-rank \
         --node_ip --host --master --rdzv-endpoint --master_addr --master-addr --master_port --master-port \
         --log_dir --job_id --rdzv-id --join_timeout --heartbeat_timeout --grace --echo --help; do
    grep -qe "$f[ ,]" help.txt || fail "help launch does not list $f"
done
grep -q 'env TIPC_JOB_ID' help.txt || fail "help launch does not name TIPC_JOB_ID"
"$T" launch --help >help2.txt || fail "launch --help"
cmp -s help.txt help2.txt || fail "'tipc help launch' and 'tipc launch --help' differ"

grep -q '^exit codes:' help.txt && fail "the exit-code table is appended to a command's help"
"$T" help | grep -q '^  130  interrupted' || fail "tipc help has no exit-code table"
"$T" help exit-codes >codes.txt || fail "help exit-codes"
[ "$(head -1 codes.txt)" = "exit codes:" ] && grep -q '^  2    bad command line' codes.txt || fail "help exit-codes: $(cat codes.txt)"

# launch passes CMD's --help through: the rank prints version's usage, launch does not print its own
rc=0; "$T" launch --job_id="cli$$" --nproc_per_node=1 --log_dir=logs version --help >out 2>err || rc=$?
[ "$rc" = 0 ] || fail "launch ... version --help: rc=$rc $(cat err)"
grep -q 'usage: tipc version' out || fail "CMD's --help did not reach CMD: $(cat out)"
grep -q 'usage: tipc launch' out err && fail "launch answered CMD's --help itself"
echo ok
