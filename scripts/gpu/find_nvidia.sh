#!/usr/bin/env bash
# find_nvidia.sh: where NVIDIA's libraries are on this machine: /usr/local/cuda, the system, or
# Python's nvidia/* packages (nvidia-cudnn-cu13, nvidia-nccl-cu13, nvidia-cublas, ...), whose
# folders have no unversioned libX.so for the linker and no shared include folder.
#   scripts/gpu/find_nvidia.sh            print make variables: make $(scripts/gpu/find_nvidia.sh)
#                                         (CUDNN_HOME/NCCL_HOME = a shim folder, default /tmp/nvshim,
#                                         of links: include/ the headers, lib/ every library file of
#                                         cuDNN, NCCL and cuBLAS plus libX.so names)
#   scripts/gpu/find_nvidia.sh --libdirs  print the library folders, ':'-separated (LD_LIBRARY_PATH)
# What it cannot find is named on stderr.
set -u
SHIM=${NVSHIM:-/tmp/nvshim}
CUDA=${CUDA_HOME:-/usr/local/cuda}
roots=("$CUDA/lib64" "$CUDA/targets/x86_64-linux/lib" /usr/lib/x86_64-linux-gnu)
for sp in $(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
    [ -d "$sp/nvidia" ] && roots+=("$sp/nvidia")
done
find_lib() { # first file named $1 under the roots
    local r
    for r in "${roots[@]}"; do
        [ -d "$r" ] || continue
        find -L "$r" -maxdepth 4 -name "$1" 2>/dev/null | head -1 | grep . && return 0
    done
    return 1
}
declare -A dir
for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2; do
    if p=$(find_lib "$lib"); then dir[$lib]=$(dirname "$p"); else echo "find_nvidia: $lib not found" >&2; fi
done
if [ "${1:-}" = --libdirs ]; then
    printf '%s\n' "${dir[@]}" | awk '!seen[$0]++' | paste -sd: -
    exit 0
fi
rm -rf "$SHIM" && mkdir -p "$SHIM/include" "$SHIM/lib"
for lib in libcudnn.so.9 libnccl.so.2 libcublas.so.13 libcublasLt.so.13; do
    d=${dir[$lib]:-}
    [ -n "$d" ] || continue
    for f in "$d"/lib*.so*; do ln -sf "$f" "$SHIM/lib/"; done
    for f in "$d"/lib*.so.[0-9]*; do ln -sf "$f" "$SHIM/lib/$(basename "$f" | sed 's/\.so\..*/.so/')"; done
    inc=$(cd "$d/.." && pwd)/include
    [ -d "$inc" ] && for h in "$inc"/*.h; do [ -e "$SHIM/include/$(basename "$h")" ] || ln -s "$h" "$SHIM/include/"; done
done
[ -e "$SHIM/include/cudnn.h" ] || echo "find_nvidia: cudnn.h not found" >&2
[ -e "$SHIM/include/nccl.h" ] || echo "find_nvidia: nccl.h not found" >&2
echo "CUDNN_HOME=$SHIM NCCL_HOME=$SHIM"
