# env.sh: source on the GPU machine after unpacking scripts/gpu/bundle.sh's archive:
#   tar xJf .gpubundle.tar.xz -C /tmp && . /tmp/gpubundle/env.sh
# Finds NVIDIA's libraries (/usr/local/cuda and Python's nvidia/* packages), puts them and the
# bundle's lib/ on LD_LIBRARY_PATH, and exports TIPC and TIPC_REL (the bundle's tipc) for the e2e
# tests and benchmarks. Prints what it found and what is missing.
GPUB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_dirs=""
for _lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2; do
    _hit=$( { ls /usr/local/cuda/lib64/$_lib /usr/local/cuda/targets/x86_64-linux/lib/$_lib 2>/dev/null;
              for _sp in $(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
                  [ -d "$_sp/nvidia" ] && find "$_sp/nvidia" -name "$_lib" 2>/dev/null
              done; } | head -1)
    if [ -n "$_hit" ]; then
        echo "gpubundle: $_lib: $_hit"
        case ":$_dirs:" in *":$(dirname "$_hit"):"*) ;; *) _dirs="$_dirs:$(dirname "$_hit")" ;; esac
    else
        echo "gpubundle: $_lib: NOT FOUND" >&2
    fi
done
export LD_LIBRARY_PATH="$GPUB/lib${_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TIPC="$GPUB/bin/tipc" TIPC_REL="$GPUB/bin/tipc"
unset _lib _hit _sp _dirs
