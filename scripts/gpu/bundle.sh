#!/usr/bin/env bash
# bundle.sh: build tipc with CUDA here and pack it for a GPU machine that has NVIDIA's libraries
# (driver, CUDA runtime, cuBLAS, cuDNN, NCCL: from /usr/local/cuda or Python's nvidia/* packages)
# but not tipc's other system libraries and nothing to install them with (the device machines).
#   scripts/gpu/bundle.sh [OUT]    (default: .gpubundle.tar.xz in the repo root, git-ignored)
# The archive holds gpubundle/{bin/tipc, bin/test_cuda_* (every tests/unit/test_cuda*.c, no
# sanitizers), lib/ (every shared library they load except glibc, libstdc++/libgcc and NVIDIA's),
# env.sh, find_nvidia.sh, COMMIT (the commit it was built from, "+dirty" with local changes)}.
# On the GPU machine, in the repo root: bash scripts/gpu/verify.sh (docs/engine.md's runbook), or
# by hand: tar xJf .gpubundle.tar.xz -C /tmp && . /tmp/gpubundle/env.sh
# The default portable build (x86-64-v2 baseline, CPU kernels for v2/v3/v4 picked at start-up:
# engine/ops/cpu_isa.h), CUDA for sm_$GPU_ARCH + PTX. Needs CUDA detected here.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/.gpubundle.tar.xz}
B=$(mktemp -d)
trap 'rm -rf "$B"' EXIT
mkdir -p "$B/src" "$B/gpubundle/bin" "$B/gpubundle/lib"
(cd "$ROOT" && git ls-files -co --exclude-standard | tar -cf - -T -) | tar -C "$B/src" -xf -
tests=$(cd "$ROOT" && ls tests/unit/test_cuda*.c | sed 's|^tests/unit/\(.*\)\.c$|build/rel/tests/\1|')
# shellcheck disable=SC2086
make -C "$B/src" -j"${JOBS:-2}" features bin/tipc $tests >"$B/make.log" 2>&1 ||
    { tail -30 "$B/make.log"; echo "bundle: build failed" >&2; exit 1; }
grep -q '✓ cuda' "$B/make.log" || { echo "bundle: CUDA was not detected here (make features)" >&2; exit 1; }
cp "$B/src/bin/tipc" "$B"/src/build/rel/tests/test_cuda* "$B/gpubundle/bin/"
rm -f "$B"/gpubundle/bin/*.d
echo "$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo +dirty)" \
    >"$B/gpubundle/COMMIT"
# what the GPU machine may lack: everything but glibc, the C++ runtime and NVIDIA's libraries
skip='^(linux-vdso|libc|libm|libpthread|libdl|librt|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc)\.so'
for exe in "$B"/gpubundle/bin/*; do ldd "$exe"; done | awk '/=> \// {print $1, $3}' | sort -u |
    while read -r name path; do
        [[ $name =~ $skip ]] || cp -L "$path" "$B/gpubundle/lib/$name"
    done
cp "$ROOT/scripts/gpu/env.sh" "$ROOT/scripts/gpu/find_nvidia.sh" "$B/gpubundle/"
tar -C "$B" -cJf "$OUT" gpubundle
echo "bundle: $OUT ($(du -h "$OUT" | cut -f1)): $(ls "$B/gpubundle/lib" | wc -l) libraries"
