# test_special_files.sh: a target that exists and is not a regular file is written through, never
# renamed over (core/staged.h); a failed write to it is an error.
#  1. `infer --output-raw FIFO` with a reader: the reader gets the same bytes as a regular file
#     holds, the FIFO stays a FIFO; without a reader: exit 5 at once ("no process reads"), no hang;
#  2. `--output-raw /dev/fd/1` into a file and a pipe: the bytes land in the stream;
#  3. character devices (as root: private nodes made here, so a broken build cannot replace the
#     host's /dev/null or /dev/full; else the host's): `prepare --demo-jpeg NULL` exit 0, the device
#     stays; `--output-raw FULL` exit 5 "No space left on device", the device stays;
#  4. `tipc run --junit` onto a FIFO and onto /dev/stdout (a pipe): the JUnit XML arrives whole;
#     `--output-raw /dev/stdout` and `prepare --demo-jpeg /dev/stdout` into a pipe: the bytes whole,
#     prepare's note on stderr (after 1-3: an old build fails before touching /dev);
#  5. a folder and a dangling link as --output-raw: exit 2, left as they were.
. "$ROOT/tests/e2e/lib.sh"
W=$(mktemp -d "$TMPDIR/special.XXXXXX")
cd "$W" || fail "cd"
tiny_model
python3 -c "import struct, sys; sys.stdout.buffer.write(struct.pack('<12288f', *[0.25] * 12288))" > in.raw
RAW=(infer --model-dir inf --input-raw in.raw)
run_expect 0 ref.log "$TIPC" "${RAW[@]}" --output-raw ref.bin
[ "$(stat -c %s ref.bin)" -eq 40 ] || fail "ref.bin: $(stat -c %s ref.bin) bytes, want 40 (5 probs + 5 logits)"
kind() { stat -c %F "$1"; }

echo "# 1. a FIFO"
mkfifo fifo
timeout 20 cat fifo > from-fifo & reader=$!
run_expect 0 fifo.log "$TIPC" "${RAW[@]}" --output-raw fifo
wait "$reader" || fail "the FIFO's reader did not end"
cmp -s from-fifo ref.bin || fail "the FIFO's reader got $(stat -c %s from-fifo) bytes, not the regular file's"
assert_eq "$(kind fifo)" "fifo" "fifo after the write"
run_expect 5 fifo-noreader.log "$TIPC" "${RAW[@]}" --output-raw fifo
log_has fifo-noreader.log "cannot write 'fifo' (a FIFO): no process reads that FIFO"
assert_eq "$(kind fifo)" "fifo" "fifo after the refused write"

echo "# 2. /dev/fd/1"
"$TIPC" "${RAW[@]}" --output-raw /dev/fd/1 > to-file.bin 2> fd1.err || { cat fd1.err; fail "--output-raw /dev/fd/1 > file"; }
cmp -s to-file.bin ref.bin || fail "--output-raw /dev/fd/1 into a file: $(stat -c %s to-file.bin) bytes"
"$TIPC" "${RAW[@]}" --output-raw /dev/fd/1 2> fd1p.err | cat > to-pipe.bin
cmp -s to-pipe.bin ref.bin || { cat fd1p.err; fail "--output-raw /dev/fd/1 into a pipe: $(stat -c %s to-pipe.bin) bytes"; }

echo "# 3. character devices"
if [ "$(id -u)" = 0 ]; then
    NULL=$W/null FULL=$W/full
    mknod "$NULL" c 1 3 && mknod "$FULL" c 1 7 || skip "cannot make device nodes here (mknod failed as root)"
else
    NULL=/dev/null FULL=/dev/full
fi
run_expect 0 demo-null.log "$TIPC" prepare --demo-jpeg "$NULL"
assert_eq "$(kind "$NULL")" "character special file" "$NULL after --demo-jpeg"
run_expect 5 full.log "$TIPC" "${RAW[@]}" --output-raw "$FULL"
log_has full.log "cannot write '$FULL': No space left on device"
assert_eq "$(kind "$FULL")" "character special file" "$FULL after --output-raw"

echo "# 4. tipc run --junit FIFO and /dev/stdout; --output-raw /dev/stdout"
CFG="$ROOT/tests/fixtures/golden/s6_train_infer/config.txt"
make_root
timeout 30 cat "$W/fifo" > junit-fifo.xml & reader=$!
"$TIPC" run "$CFG" lite_train_lite_infer --junit "$W/fifo" > run-fifo.out 2> run-fifo.err ||
    { tail run-fifo.err; fail "tipc run --junit FIFO"; }
wait "$reader" || fail "the JUnit FIFO's reader did not end"
python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" junit-fifo.xml || fail "JUnit through the FIFO"
assert_eq "$(kind "$W/fifo")" "fifo" "fifo after --junit"
"$TIPC" run "$CFG" lite_train_lite_infer --junit /dev/stdout 2> run-stdout.err | cat > run-stdout.out
sed -n '/^<?xml/,/<\/testsuites>/p' run-stdout.out > junit-stdout.xml
python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); assert r.tag == 'testsuites'" \
    junit-stdout.xml || { tail run-stdout.out run-stdout.err; fail "JUnit on /dev/stdout"; }
cd "$W" || fail "cd"
"$TIPC" "${RAW[@]}" --output-raw /dev/stdout 2> stdout.err | cat > to-stdout.bin
cmp -s to-stdout.bin ref.bin || { cat stdout.err; fail "--output-raw /dev/stdout into a pipe"; }
"$TIPC" prepare --demo-jpeg /dev/stdout 2> demo.err | cat > demo.jpg
[ "$(head -c 2 demo.jpg | od -An -tx1 | tr -d ' ')$(tail -c 2 demo.jpg | od -An -tx1 | tr -d ' ')" = ffd8ffd9 ] ||
    fail "--demo-jpeg /dev/stdout is not one whole JPEG on stdout ($(stat -c %s demo.jpg) bytes)"
log_has demo.err "prepare: wrote '/dev/stdout'"
[ -L /dev/stdout ] || fail "/dev/stdout is no longer a symbolic link"

echo "# 5. refused: a folder, a dangling link"
mkdir -p adir && ln -s "$W/nowhere/x" dangling
run_expect 2 dir.log "$TIPC" "${RAW[@]}" --output-raw adir
log_has dir.log "it is a folder"
run_expect 2 dangling.log "$TIPC" "${RAW[@]}" --output-raw dangling
[ -d adir ] && [ -L dangling ] && [ ! -e nowhere ] || fail "a refused target was changed"
echo "ok"
