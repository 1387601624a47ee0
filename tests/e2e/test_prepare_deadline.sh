#!/usr/bin/env bash
# test_prepare_deadline.sh: a download that never ends is ended (prepare/fetch.h). A real local
# server (httpd.py /trickle/) sends 1200 bytes/s with no Content-Length, forever: above curl's
# low-speed limit (1024 B/s), so only the new limits stop it.
#  1. defaults only: given up as too slow (average below 10240 B/s after 15 s), exit 3, within 25 s;
#  2. --min-rate 4096 --low-speed-time 2: given up after about 2 s, the .part kept for a later try;
#  3. --download-timeout 3 with the rate check off (--min-rate 0): given up after about 3 s, no retry;
#     TIPC_DOWNLOAD_TIMEOUT=3 does the same for `tipc prepare` without the flag;
#  4. a bad value (--download-timeout -1, TIPC_MIN_RATE=abc): exit 2 before any request;
#  5. a file:// URL of a FIFO (curl blocked in open() forever) or of /dev/zero (endless): exit 3 at
#     once; a FIFO planted as the .part: exit 3 at once, and it is left where it was.
set -u
. "$ROOT/tests/e2e/lib_prepare.sh"
python3 -c "import random; random.seed(5); open('$SRV/blob.bin','wb').write(bytes(random.getrandbits(8) for _ in range(200000)))"
SHA=$(sha256sum "$SRV/blob.bin" | cut -d' ' -f1)
start_server
URL=$BASE/trickle/blob.bin
# timed RC MAX CMD...: expect (lib_prepare.sh) under `timeout 60`, and at most MAX seconds
timed() {
    local want=$1 max=$2 t0 secs
    shift 2
    t0=$(date +%s)
    expect "$want" timeout 60 "$@"
    secs=$(( $(date +%s) - t0 ))
    [ "$secs" -le "$max" ] || fail "'$*' took ${secs}s, more than ${max}s"
    echo "  ${secs}s"
}

echo "# 1. defaults"
timed 3 25 "$TIPC" prepare --url "$URL" --sha256 "$SHA" --dest "$TMPDIR/d1" --quiet
contains "$OUT" "too slow: "
contains "$OUT" "below the minimum of 10240"
[ "$(requests /trickle/)" -eq 1 ] || fail "a too slow download was retried"

echo "# 2. --min-rate"
timed 3 8 "$TIPC" prepare --url "$URL" --sha256 "$SHA" --dest "$TMPDIR/d2" --quiet --min-rate 4096 --low-speed-time 2
contains "$OUT" "below the minimum of 4096"
[ -s "$TMPDIR/d2/blob.bin.part" ] || fail "the .part of a download given up was not kept"
contains "$OUT" "the next try resumes from there"

echo "# 3. --download-timeout, and TIPC_DOWNLOAD_TIMEOUT"
n=$(requests /trickle/)
timed 3 8 "$TIPC" prepare --url "$URL" --sha256 "$SHA" --dest "$TMPDIR/d3" --quiet --min-rate 0 --download-timeout 3 \
    --retries 3 --backoff-ms 50
contains "$OUT" "did not finish within 3 s"
[ "$(requests /trickle/)" -eq $((n + 1)) ] || fail "the download was retried after its deadline"
TIPC_DOWNLOAD_TIMEOUT=3 TIPC_MIN_RATE=0 timed 3 8 "$TIPC" prepare --url "$URL" --sha256 "$SHA" --dest "$TMPDIR/d4" --quiet
contains "$OUT" "did not finish within 3 s"

echo "# 4. bad values"
n=$(requests /)
expect 2 "$TIPC" prepare --url "$URL" --sha256 "$SHA" --dest "$TMPDIR/d5" --download-timeout -1
TIPC_MIN_RATE=abc expect 2 "$TIPC" prepare --url "$URL" --sha256 "$SHA" --dest "$TMPDIR/d5"
contains "$OUT" "TIPC_MIN_RATE"
[ "$(requests /)" -eq "$n" ] || fail "a bad value still made a request"

echo "# 5. file:// of a FIFO and of /dev/zero; a FIFO as the .part"
mkfifo "$TMPDIR/fifo"
timed 3 5 "$TIPC" prepare --url "file://$TMPDIR/fifo" --sha256 "$SHA" --dest "$TMPDIR/d6" --quiet
contains "$OUT" "is a FIFO (named pipe), not a regular file"
timed 3 5 "$TIPC" prepare --url "file:///dev/zero" --sha256 "$SHA" --dest "$TMPDIR/d6" --quiet
contains "$OUT" "'/dev/zero' is a character device, not a regular file"
mkdir -p "$TMPDIR/d7" && mkfifo "$TMPDIR/d7/blob.bin.part"
timed 3 5 "$TIPC" prepare --url "file://$SRV/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d7" --quiet
contains "$OUT" "blob.bin.part': it exists and is not a regular file"
[ -p "$TMPDIR/d7/blob.bin.part" ] || fail "the planted FIFO was removed"
echo "ok"
