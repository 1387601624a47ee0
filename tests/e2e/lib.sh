# lib.sh: helpers for e2e tests (sourced). Each test runs in its own $TMPDIR (tests/run.sh).
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
assert_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }
# A fake repository root with the stub interpreter first on PATH.
make_root() {
    ROOT_DIR=$(mktemp -d "$TMPDIR/root.XXXXXX")
    export PATH="$ROOT/tests/e2e/stub:$PATH"
    cd "$ROOT_DIR" || fail "cd"
}
# The original's lite dataset beside the repository (CI clones with shared/ next to it): sets TAR,
# or skips the test with the reason.
lite_data_tar() {
    TAR="$ROOT/../shared/data/lite_data.tar"
    [ -f "$TAR" ] || skip "$TAR not found (the original's lite data lives in ../shared beside the repository)"
}
