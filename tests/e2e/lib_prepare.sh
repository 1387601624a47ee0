# lib_prepare.sh: shared by the test_prepare*.sh scripts: start tests/e2e/httpd.py on a free
# 127.0.0.1 port serving $SRV, stop it on exit, and small assertion helpers. Sourced, not run.
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (the local HTTP server needs it)"; exit 77; }
SRV=$TMPDIR/srv
mkdir -p "$SRV"
LOG=$TMPDIR/access.log

start_server() {
    python3 "$ROOT/tests/e2e/httpd.py" "$SRV" "$TMPDIR/port" "$LOG" &
    SERVER_PID=$!
    trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null' EXIT
    for _ in $(seq 100); do [ -s "$TMPDIR/port" ] && break; sleep 0.05; done
    [ -s "$TMPDIR/port" ] || { echo "FAIL: the test HTTP server did not start"; exit 1; }
    BASE="http://127.0.0.1:$(cat "$TMPDIR/port")"
}

fail() { echo "FAIL: $*"; exit 1; }
# expect RC CMD...: run CMD, keep stdout+stderr in $OUT, fail unless it exits with RC
expect() {
    local want=$1; shift
    OUT=$("$@" 2>&1); local rc=$?
    [ "$rc" -eq "$want" ] || { echo "$OUT"; fail "'$*' exited $rc, expected $want"; }
}
contains() { grep -qF -- "$2" <<<"$1" || { echo "$1"; fail "output lacks '$2'"; }; }
requests() { grep -c -- "$1" "$LOG" || true; }
