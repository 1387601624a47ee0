#!/usr/bin/env bash
# Another user cannot lock you out (#23 class 8): a second real Unix user creates the victim's old
# per-user secret folder (/tmp/tipc-UID) first. The victim's loopback jobs (no TIPC_JOB_TOKEN) must
# still run: the host secret lives where only the victim can create it ($XDG_RUNTIME_DIR, else
# ~/.tipc in the victim's own home). With neither usable, the refusal names the squatter and a
# step the victim can take. Needs root (useradd) and setpriv: else skipped.
. "$(dirname "$0")/lib_launch.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create two Unix users"; exit 77; }
command -v useradd >/dev/null && command -v userdel >/dev/null && command -v setpriv >/dev/null ||
    { echo "SKIP: useradd/userdel/setpriv not installed"; exit 77; }
V=tv$$ S=ts$$
VD=$(mktemp -d /tmp/tipc-victim.XXXXXX)   # the victim's own folders (the test's $TMPDIR is private to root)
users_gone() { userdel "$V" 2>/dev/null; userdel "$S" 2>/dev/null; rm -rf "/tmp/tipc-$vuid" "$VD"; cleanup; }
vuid=none
trap users_gone EXIT
useradd -M -d "$VD/home" -s /bin/sh "$V" 2>err && useradd -M -d /nonexistent -s /bin/sh "$S" 2>>err ||
    { echo "SKIP: cannot create users here: $(head -c 200 err)"; exit 77; }
vuid=$(id -u "$V")
[ ! -e "/tmp/tipc-$vuid" ] || fail "/tmp/tipc-$vuid exists before the test"
mkdir -p "$VD/home" "$VD/v" && chown -R "$V:$V" "$VD" && chmod 700 "$VD/home"
setpriv --reuid="$V" --regid="$V" --clear-groups test -x "$TIPC" || { echo "SKIP: $TIPC is not executable by another user"; exit 77; }
# the squatter takes the victim's old folder (and would read a secret put there: its own, 0700)
setpriv --reuid="$S" --regid="$S" --clear-groups mkdir -m 700 "/tmp/tipc-$vuid" || fail "squat"
[ "$(stat -c %U "/tmp/tipc-$vuid")" = "$S" ] || fail "the squat did not take"
# as_victim HOME XDG ARGS...: tipc launch as the victim, in $VD/v (XDG empty: unset)
as_victim() {
    local home=$1 xdg=$2; shift 2
    (cd "$VD/v" && exec setpriv --reuid="$V" --regid="$V" --clear-groups env -u XDG_RUNTIME_DIR \
        ${xdg:+XDG_RUNTIME_DIR=$xdg} HOME="$home" TIPC_JOB_ID="$JOB" "$TIPC" launch "$@")
}
# two_nodes HOME XDG TAG: a 2-node loopback job as the victim; sets rc0 rc1
two_nodes() {
    local port; port=$(free_port)
    as_victim "$1" "$2" --ips=127.0.0.1,127.0.0.2 --node_ip=127.0.0.1 --master=127.0.0.1:$port --log_dir=l$3 true >"$W/$3"0.out 2>&1 &
    local p0=$!
    rc1=0; as_victim "$1" "$2" --ips=127.0.0.1,127.0.0.2 --node_ip=127.0.0.2 --master=127.0.0.1:$port --log_dir=l$3 true >"$W/$3"1.out 2>&1 || rc1=$?
    wait_rc rc0 $p0
}
# 1. home folder: the job runs, the secret is in ~/.tipc (0700), nothing of the victim's in the squat
two_nodes "$VD/home" "" h
[ "$rc0$rc1" = 00 ] || fail "squatted /tmp/tipc-$vuid: the victim's job exits $rc0 $rc1: $(cat h0.out h1.out)"
[ "$(stat -c '%U %a' "$VD/home/.tipc")" = "$V 700" ] && [ "$(stat -c '%U %a' "$VD/home/.tipc/host-secret")" = "$V 600" ] ||
    fail "secret: $(ls -la "$VD/home/.tipc" 2>&1)"
[ -z "$(ls -A "/tmp/tipc-$vuid")" ] || fail "something was written into the squatted folder"
# 2. $XDG_RUNTIME_DIR (a private folder of the victim's) comes first
mkdir -m 700 "$VD/run" && chown "$V:$V" "$VD/run"
two_nodes "$VD/home" "$VD/run" x
[ "$rc0$rc1" = 00 ] && [ -f "$VD/run/tipc/host-secret" ] || fail "XDG_RUNTIME_DIR: exit $rc0 $rc1: $(cat x0.out x1.out)"
# 3. no private place at all (no home, no runtime folder): refused, naming the squatter and a way out
rc=0; as_victim /nonexistent "" --ips=127.0.0.1,127.0.0.2 --node_ip=127.0.0.1 --master=127.0.0.1:1 true >"$W/n.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "no private folder: exit $rc: $(cat n.out)"
grep -q "/tmp/tipc-$vuid.*belongs to user $S" n.out && grep -q 'TIPC_JOB_TOKEN' n.out && grep -q 'XDG_RUNTIME_DIR' n.out ||
    fail "refusal: $(cat n.out)"
echo PASS
