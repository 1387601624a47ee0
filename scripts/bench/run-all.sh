#!/usr/bin/env bash
# run-all.sh: `make bench`: every side-by-side benchmark in scripts/bench/ (each prints its own
# table with both sides and their ratio; see docs/benchmarks.md for recorded results). The peers
# (PyTorch, torchvision, Pillow, ONNX Runtime) come from PyPI; each script says what it needs.
# Exit status: the number of benchmarks that failed (0 when all ran).
set -u
here=$(cd "$(dirname "$0")" && pwd)
failed=0
for b in "$here"/*.sh; do
    [ "$(basename "$b")" = run-all.sh ] && continue
    echo "# ==== $(basename "$b") ===="
    if ! bash "$b"; then
        echo "# FAILED: $(basename "$b")"
        failed=$((failed + 1))
    fi
done
echo "# benchmarks done: $failed failed"
exit "$failed"
