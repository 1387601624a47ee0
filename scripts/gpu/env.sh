# env.sh: source on the GPU machine after unpacking scripts/gpu/bundle.sh's archive:
#   tar xJf .gpubundle.tar.xz -C /tmp && . /tmp/gpubundle/env.sh
# Puts the bundle's lib/ and NVIDIA's library folders (find_nvidia.sh: /usr/local/cuda, the
# system, Python's nvidia/* packages) on LD_LIBRARY_PATH, and exports TIPC and TIPC_REL (the
# bundle's tipc) for the e2e tests and benchmarks.
GPUB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_nv=$(bash "$GPUB/find_nvidia.sh" --libdirs)
echo "gpubundle: NVIDIA libraries in ${_nv:-(none found)}"
export LD_LIBRARY_PATH="$GPUB/lib${_nv:+:$_nv}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TIPC="$GPUB/bin/tipc" TIPC_REL="$GPUB/bin/tipc"
unset _nv
