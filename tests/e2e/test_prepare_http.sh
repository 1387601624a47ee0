#!/usr/bin/env bash
# test_prepare_http.sh: `tipc prepare --url` against a real local HTTP server (httpd.py):
# good download, cache (second run fetches nothing), 404, a connection cut mid-file then
# resumed with Range (same run and next run), a server that ignores Range, wrong sha256, a slow
# server hitting the low-speed timeout, an endless body cut at the size cap (.part removed), a
# user's mismatching file refused, a redirect loop, a refused connection, and --extract of
# a tarball with `../evil`, an absolute path and an escaping symlink (refused, nothing written).
set -u
. "$ROOT/tests/e2e/lib_prepare.sh"
python3 -c "import random; random.seed(3); open('$SRV/blob.bin','wb').write(bytes(random.getrandbits(8) for _ in range(300000)))"
SHA=$(sha256sum "$SRV/blob.bin" | cut -d' ' -f1)
BAD=$(printf '%064d' 0)
start_server
Q="--quiet --backoff-ms 50"

echo "# good download, then cached"
expect 0 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d1" $Q
cmp "$SRV/blob.bin" "$TMPDIR/d1/blob.bin" || fail "downloaded file differs"
n=$(requests "/files/blob.bin")
expect 0 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d1" $Q
contains "$OUT" "already there"
[ "$(requests /files/blob.bin)" -eq "$n" ] || fail "second prepare hit the server"

echo "# offline: --url makes no request"
n=$(requests /files/)
expect 3 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d0" --offline
contains "$OUT" "offline (--offline or TIPC_OFFLINE=1), not fetching"
[ "$(requests /files/)" -eq "$n" ] || fail "--offline made a request"

echo "# 404: clear error, exit 3, nothing left"
expect 3 "$TIPC" prepare --url "$BASE/files/nope.bin" --sha256 "$SHA" --dest "$TMPDIR/d2" $Q
contains "$OUT" "cannot fetch '$BASE/files/nope.bin': server answered HTTP 404"
[ -z "$(ls -A "$TMPDIR/d2")" ] || fail "404 left files: $(ls -A "$TMPDIR/d2")"
[ "$(requests /files/nope.bin)" -eq 1 ] || fail "a 404 must not be retried"

echo "# connection cut mid-file: resumed with Range in the same run"
expect 0 "$TIPC" prepare --url "$BASE/cut/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d3" --retries 2 $Q
cmp "$SRV/blob.bin" "$TMPDIR/d3/blob.bin" || fail "resumed file differs"
[ "$(requests 'GET /cut/blob.bin range=bytes=150000-')" -eq 1 ] || { cat "$LOG"; fail "no Range request resumed the cut download"; }

echo "# cut with no retries: .part kept, the next run resumes it"
expect 3 "$TIPC" prepare --url "$BASE/cut/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d4" --retries 0 $Q
contains "$OUT" "150000 bytes kept in '$TMPDIR/d4/blob.bin.part'"
[ ! -e "$TMPDIR/d4/blob.bin" ] || fail "a partial download was published"
expect 0 "$TIPC" prepare --url "$BASE/cut/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d4" --retries 0 $Q
cmp "$SRV/blob.bin" "$TMPDIR/d4/blob.bin" || fail "resumed file differs"
[ ! -e "$TMPDIR/d4/blob.bin.part" ] || fail ".part left behind"

echo "# a complete .part (interrupted before the rename) is used without a request"
mkdir -p "$TMPDIR/d11" && cp "$SRV/blob.bin" "$TMPDIR/d11/blob.bin.part"
n=$(requests /files/blob.bin)
expect 0 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d11" $Q
[ "$(requests /files/blob.bin)" -eq "$n" ] || fail "a complete .part was downloaded again"
cmp "$SRV/blob.bin" "$TMPDIR/d11/blob.bin" || fail "d11 differs"

echo "# a stale .part and a server that ignores Range: started over"
mkdir -p "$TMPDIR/d5" && head -c 1000 /dev/zero >"$TMPDIR/d5/blob.bin.part"
expect 0 "$TIPC" prepare --url "$BASE/norange/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d5" --retries 0 $Q
cmp "$SRV/blob.bin" "$TMPDIR/d5/blob.bin" || fail "restarted file differs"

echo "# wrong sha256: clear error, file not used"
expect 3 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$BAD" --dest "$TMPDIR/d6" $Q
contains "$OUT" "sha256 mismatch: got $SHA, expected $BAD; the download was deleted"
[ -z "$(ls -A "$TMPDIR/d6")" ] || fail "a file failing its sha256 was left: $(ls -A "$TMPDIR/d6")"

echo "# an endless body is cut at the size cap (TIPC_MAX_DOWNLOAD) and its .part removed"
start=$(date +%s)
TIPC_MAX_DOWNLOAD=1000000 expect 3 timeout 60 "$TIPC" prepare --url "$BASE/endless/blob.bin" --sha256 "$SHA" \
    --dest "$TMPDIR/d12" $Q
contains "$OUT" "the download is larger than 1000000 bytes"
[ -z "$(ls -A "$TMPDIR/d12")" ] || fail "the cut download left: $(ls -A "$TMPDIR/d12")"
[ $(( $(date +%s) - start )) -le 20 ] || fail "the capped download took too long"
[ "$(requests /endless/blob.bin)" -eq 1 ] || fail "a download over the cap must not be retried"

echo "# a declared length over the cap is refused before the body is read"
TIPC_MAX_DOWNLOAD=1000 expect 3 timeout 60 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" \
    --dest "$TMPDIR/d15" $Q
contains "$OUT" "the download is larger than 1000 bytes"
[ -z "$(ls -A "$TMPDIR/d15")" ] || fail "the refused download left: $(ls -A "$TMPDIR/d15")"

echo "# an existing file of the user's that does not match is refused, not replaced"
mkdir -p "$TMPDIR/d13" && echo "mine" >"$TMPDIR/d13/blob.bin"
expect 3 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d13" $Q
contains "$OUT" "exists and is not the expected file (sha256 differs); tipc does not replace it"
[ "$(cat "$TMPDIR/d13/blob.bin")" = "mine" ] || fail "the user's file was replaced"

echo "# slow server: low-speed timeout"
start=$(date +%s)
expect 3 "$TIPC" prepare --url "$BASE/slow/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d7" --retries 0 \
    --low-speed-time 1 --low-speed-limit 10000 $Q
secs=$(( $(date +%s) - start ))
contains "$OUT" "too slow"
[ "$secs" -le 8 ] || fail "the low-speed timeout took ${secs}s"

echo "# a planted .part symlink is not followed (the write would land elsewhere)"
mkdir -p "$TMPDIR/d10" && ln -s /dev/full "$TMPDIR/d10/blob.bin.part"
expect 3 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d10" $Q
contains "$OUT" "cannot write '$TMPDIR/d10/blob.bin.part': Too many levels of symbolic links"
[ -z "$(ls -A "$TMPDIR/d10")" ] || fail "left: $(ls -A "$TMPDIR/d10")"

echo "# disk full while writing (a real 100 KB tmpfs): the path and the reason, nothing left"
mkdir -p "$TMPDIR/d14"
if mount -t tmpfs -o size=100k tmpfs "$TMPDIR/d14" 2>/dev/null; then
    expect 3 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 "$SHA" --dest "$TMPDIR/d14" $Q
    left=$(ls -A "$TMPDIR/d14")
    umount "$TMPDIR/d14"
    contains "$OUT" "cannot write '$TMPDIR/d14/blob.bin.part': No space left on device"
    [ -z "$left" ] || fail "disk full left: $left"
else
    echo "(not checked: cannot mount a tmpfs here)"
fi

echo "# redirect loop, refused connection, bad usage"
expect 3 "$TIPC" prepare --url "$BASE/redirect/0" --sha256 "$SHA" --dest "$TMPDIR/d8" $Q
contains "$OUT" "redirect"
[ "$(requests /redirect/)" -le 7 ] || fail "redirect limit not applied"
start=$(date +%s)
expect 3 "$TIPC" prepare --url "http://127.0.0.1:1/x.tar" --sha256 "$SHA" --dest "$TMPDIR/d9" --retries 1 $Q
[ $(( $(date +%s) - start )) -le 5 ] || fail "a refused connection took too long"
expect 2 "$TIPC" prepare --url "$BASE/files/blob.bin" --dest "$TMPDIR/d9"
expect 3 "$TIPC" prepare --url "$BASE/files/blob.bin" --sha256 abc --dest "$TMPDIR/d9" $Q
contains "$OUT" "no valid sha256"

echo "# --extract: an evil tarball is refused whole, a good one lands atomically"
python3 - "$SRV" "$TMPDIR" <<'PY'
import io, sys, tarfile
srv, tmp = sys.argv[1:3]
def add(t, name, data=b"x", link=None, kind=tarfile.REGTYPE):
    ti = tarfile.TarInfo(name); ti.type = kind
    if link: ti.linkname = link
    else: ti.size = len(data)
    t.addfile(ti, None if link else io.BytesIO(data))
for fname, entries in {
    "dotdot.tar": [("pkg/ok.txt", None), ("../evil", None)],
    "abs.tar": [("pkg/ok.txt", None), (tmp + "/abs-evil", None)],
    "symlink.tar": [("pkg/ok.txt", None), ("pkg/out", "../../../outside")],
    "good.tar": [("pkg/a.txt", None), ("pkg/sub/b.txt", None)],
}.items():
    with tarfile.open(srv + "/" + fname, "w", format=tarfile.GNU_FORMAT) as t:
        for name, link in entries:
            add(t, name, link=link, kind=tarfile.SYMTYPE if link else tarfile.REGTYPE)
PY
for bad in dotdot abs symlink; do
    s=$(sha256sum "$SRV/$bad.tar" | cut -d' ' -f1)
    expect 3 "$TIPC" prepare --url "$BASE/files/$bad.tar" --sha256 "$s" --dest "$TMPDIR/x/$bad" --extract $Q
    contains "$OUT" "refusing entry"
    [ ! -e "$TMPDIR/x/$bad/pkg" ] || fail "$bad.tar: a refused archive was published"
    [ "$(ls -A "$TMPDIR/x/$bad")" = "$bad.tar" ] || fail "$bad.tar left: $(ls -A "$TMPDIR/x/$bad")"
done
[ ! -e "$TMPDIR/x/evil" ] && [ ! -e "$TMPDIR/abs-evil" ] && [ ! -e "$TMPDIR/outside" ] || fail "wrote outside the target"
s=$(sha256sum "$SRV/good.tar" | cut -d' ' -f1)
expect 0 "$TIPC" prepare --url "$BASE/files/good.tar" --sha256 "$s" --dest "$TMPDIR/x/good" --extract $Q
contains "$OUT" "extracted into '$TMPDIR/x/good/pkg'"
[ -f "$TMPDIR/x/good/pkg/sub/b.txt" ] || fail "good.tar not extracted"
echo "PASS"
