# lib_launch.sh: helpers for the tests/e2e/test_launch_*.sh scripts (sourced, not run).
# Every process a test starts carries TIPC_JOB_ID=$JOB (ranks) or is in LAUNCHERS (launchers),
# so the test can prove that none survives and the EXIT trap can clean up whatever did.
set -u
: "${TIPC:?set TIPC}" "${ROOT:?set ROOT}"
export LC_ALL=C
W=${TMPDIR:-/tmp}/work.$$
mkdir -p "$W"
cd "$W" || exit 1
JOB="e2e$$$(basename "$0" .sh | tr -cd 'a-z0-9')"
LAUNCHERS=()
unset TIPC_JOB_TOKEN TIPC_JOB_ID TIPC_MASTER POD_IP PAI_TASK_INDEX SLURM_NODEID SLURM_PROCID NODE_RANK MASTER_ADDR MASTER_PORT

fail() { echo "FAIL: $*"; for f in "$W"/*.out; do [ -e "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }; done; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# pids of every process whose environment says TIPC_JOB_ID=$1
job_procs() {
    local e p
    for e in /proc/[0-9]*/environ; do
        p=${e#/proc/}; p=${p%/environ}
        [ "$p" = "$$" ] && continue
        if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "TIPC_JOB_ID=$1"; then echo "$p"; fi
    done
}
# pids of the ranks of job $1 (processes with TIPC_JOB_ID=$1 and RANK set)
rank_procs() {
    local p
    for p in $(job_procs "$1"); do
        if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -q "^RANK="; then echo "$p"; fi
    done
}
# pid of the rank with RANK=$2 in job $1
rank_pid() {
    local p
    for p in $(job_procs "$1"); do
        if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "RANK=$2"; then echo "$p"; return; fi
    done
}
alive_launchers() { local p; for p in "${LAUNCHERS[@]}"; do kill -0 "$p" 2>/dev/null && echo "$p"; done; }
# wait until no process of job $1 and no launcher is left, at most $2 s; 0 when all gone
wait_gone() {
    local t0; t0=$(now)
    while [ "$(elapsed "$t0" | cut -d. -f1)" -lt "$2" ]; do
        [ -z "$(job_procs "$1")$(alive_launchers)" ] && return 0
        sleep 0.2
    done
    return 1
}
# a TCP port nobody listens on right now
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# launch NAME ARGS...: a launcher in the background, output in $W/NAME.out, pid in LAUNCHERS and ${NAME}_pid
launch_bg() {
    local name=$1; shift
    "$TIPC" launch --job_id="$JOB" "$@" >"$W/$name.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${name}_pid=$!"
}
# wait_rc VAR PID: wait for background PID (not in a subshell: only this shell can wait), VAR=its code
wait_rc() { local _wrc=0; wait "$2" || _wrc=$?; eval "$1=$_wrc"; }
# wait_line FILE PATTERN [SECS]: until FILE has a line matching PATTERN (default 10 s), else fail
wait_line() {
    local _i
    for _i in $(seq $((${3:-10} * 10))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    fail "no line '$2' in $1 after ${3:-10} s"
}
# kill_expect_gone SIG PID SECS WHAT: signal PID; every process of the job and every launcher must be
# gone within SECS s
kill_expect_gone() {
    local t0; t0=$(now)
    kill -"$1" "$2"
    wait_gone "$JOB" "$3" || fail "survivors $3 s after $4: $(job_procs "$JOB") launchers $(alive_launchers)"
    echo "$4: all gone in $(elapsed "$t0") s"
}
# netns_pair TAG NET: namespaces NS0, NS1 joined by a veth pair ($NET.1 in NS0, $NET.2 in NS1), lo up,
# all removed at exit; exit 77 (skip) with the reason where namespaces or veth are not permitted
netns_pair() {
    command -v ip >/dev/null || { echo "SKIP no 'ip' command (iproute2)"; exit 77; }
    NS0=$1$$a NS1=$1$$b V0=${1:0:3}v$$a V1=${1:0:3}v$$b
    trap 'cleanup; ip netns del "$NS0" 2>/dev/null; ip netns del "$NS1" 2>/dev/null' EXIT
    if ! ip netns add "$NS0" 2>"$W/err"; then echo "SKIP network namespaces not permitted here: $(head -c 200 "$W/err")"; exit 77; fi
    ip netns add "$NS1" || fail "second namespace"
    ip link add "$V0" type veth peer name "$V1" 2>"$W/err" || { echo "SKIP veth not permitted here: $(head -c 200 "$W/err")"; exit 77; }
    ip link set "$V0" netns "$NS0" && ip link set "$V1" netns "$NS1" || fail "moving veth ends"
    ip -n "$NS0" addr add "$2.1/24" dev "$V0" && ip -n "$NS1" addr add "$2.2/24" dev "$V1" || fail "addresses"
    ip -n "$NS0" link set lo up && ip -n "$NS1" link set lo up || fail "lo up"
    ip -n "$NS0" link set "$V0" up && ip -n "$NS1" link set "$V1" up || fail "link up"
}
# ---- the fleet chain (`tipc run train_fleet_infer.txt`), one working folder per node ----------------
FLEET_CFG=configs/mobilenet_v3_small/train_fleet_infer.txt
FLEET_RES=logs/mobilenet_v3_small/lite_train_lite_infer
FLEET_MODEL=$FLEET_RES/fleet_train_gpus_0,1_autocast_False_nodes_2.log
fleet_dir() { rm -rf "$W/$1"; mkdir -p "$W/$1"; cp -r "$ROOT/configs" "$ROOT/images" "$W/$1/" || fail "copy to $1"; }
# fleet_run NAME NODE_IP MASTER_PORT: `tipc run` in $W/NAME in the background, output $W/NAME.out
fleet_run() {
    (cd "$W/$1" && TIPC_MASTER=127.0.0.1:$3 exec "${TIPC_REL:-$TIPC}" run $FLEET_CFG lite_train_lite_infer --node_ip "$2") >"$W/$1.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${1}_pid=$!"
}
cleanup() {
    local p
    for p in $(alive_launchers) $(job_procs "$JOB"); do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap cleanup EXIT
# ---- the launchers' tests (test_launcher_*.sh): the model a 2-rank `tipc launch` trains ----------
LAUNCHERS_VENV=${TIPC_LAUNCHERS_VENV:-/opt/tipc-launchers}   # torch and paddlepaddle (scripts/install-deps.sh)
# synthetic_size 80, 2 ranks x batch 4, drop_last: exactly 10 steps per rank (as test_dp_equivalence.sh)
DP_RECIPE="--data-path none -o DataLoader.synthetic_size=80 -o Arch.image_size=64 -o Arch.class_num=4 --epochs 1 --seed 3 --threads 1 --print-freq 5 --batch-size 4"
# dp_reference: `tipc launch --nproc_per_node=2 train $DP_RECIPE` into $W/ref
dp_reference() {
    TIPC_JOB_TOKEN=ref "${TIPC_REL:-$TIPC}" launch --job_id="$JOB" --nproc_per_node=2 --log_dir=lref train $DP_RECIPE \
        --output-dir ref >ref.out 2>&1 || fail "tipc launch: exit $?"
}
# same_as_launch DIR WHAT: DIR/latest.ckpt equals ref's within test_dp_equivalence.sh's tolerance
same_as_launch() {
    local part
    for part in params stats; do
        python3 "$ROOT/tests/e2e/ckpt_diff.py" ref/latest.ckpt "$1/latest.ckpt" $part 1e-4 >diff.out ||
            fail "$2 vs tipc launch ($part): $(cat diff.out)"
    done
    echo "$2 vs tipc launch: $(cat diff.out)"
}
# wait_listening PORT: until something accepts on 127.0.0.1:PORT (at most 10 s)
wait_listening() {
    for _ in $(seq 100); do
        python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
