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

# tiny_recipe EPOCHS: a recipe yaml (stdout) small enough for a whole run in seconds: width 0.25,
# 64 px, 5 classes, 16 synthetic images when ./no_data is absent.
tiny_recipe() {
    cat <<YAML
Global:
  epochs: $1
  print_batch_step: 1
  device: cpu
Arch:
  class_num: 5
  width_mult: 0.25
  image_size: 64
DataLoader:
  data_path: ./no_data
  batch_size: 4
  eval_batch_size: 4
  resize_size: 73
  synthetic: auto
  synthetic_size: 16
YAML
}

# run_expect RC LOG CMD...: run CMD (at most 120 s) with its output in LOG; fail unless it exits RC.
run_expect() {
    local want=$1 log=$2 rc
    shift 2
    timeout 120 "$@" > "$log" 2>&1
    rc=$?
    [ "$rc" -eq "$want" ] || { tail -n 30 "$log"; fail "'$*' exited $rc, expected $want"; }
}
# log_has LOG TEXT / log_lacks LOG TEXT: fail unless LOG holds (does not hold) TEXT (fixed string;
# log_lacks ignores case).
log_has() { grep -qF -- "$2" "$1" || { tail -n 30 "$1"; fail "$1 lacks '$2'"; }; }
log_lacks() { ! grep -qiF -- "$2" "$1" || { grep -iF -- "$2" "$1" | head -5; fail "$1 has '$2'"; }; }
# tiny_model: in the current folder, tiny.yaml (tiny_recipe 1), its training's checkpoints in out/
# and the exported inference model in inf/.
tiny_model() {
    tiny_recipe 1 > tiny.yaml
    run_expect 0 tiny-train.log "$TIPC" train -c tiny.yaml --output-dir out
    run_expect 0 tiny-export.log "$TIPC" export --pretrained out/latest.ckpt --save-inference-dir inf
}
# ckpt_same A B: the two checkpoints are the same training byte for byte, but for the run id each
# run writes into its files (ckpt_diff.py same).
ckpt_same() { python3 "$ROOT/tests/e2e/ckpt_diff.py" "$1" "$2" same > /dev/null 2>&1; }
