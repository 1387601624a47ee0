#!/usr/bin/env bash
# loopback.sh: run a multi-node TIPC config on ONE machine, one `tipc run` per node of its gpu_list
# (e.g. 127.0.0.1,127.0.0.2;0,1), each told its address with --node_ip and given its own output
# directory, exactly as you would run `tipc run CONFIG MODE` on each real machine.
#   scripts/multinode/loopback.sh CONFIG MODE [extra tipc run options]
# Exit status: 0 when every node passed, else the first failing node's status.
set -u
[ $# -ge 2 ] || { echo "usage: $0 CONFIG MODE [tipc run options]" >&2; exit 2; }
cfg=$1; mode=$2; shift 2
here=$(cd "$(dirname "$0")/../.." && pwd)
tipc=${TIPC:-$here/bin/tipc}
[ -x "$tipc" ] || { echo "$0: '$tipc' not built; run make" >&2; exit 2; }
[ -r "$cfg" ] || { echo "$0: cannot read '$cfg'" >&2; exit 2; }
# gpu_list is the 4th non-empty line; take the IP list of its first 'ips;devices' item
item=$(awk 'NF' "$cfg" | sed -n 4p | cut -d: -f2- | tr '|' '\n' | grep ';' | head -n 1)
[ -n "$item" ] || { echo "$cfg: gpu_list has no 'IP1,IP2;DEVICES' item; run 'tipc run' directly" >&2; exit 2; }
model=$(awk 'NF' "$cfg" | sed -n 2p | cut -d: -f2-)
IFS=, read -r -a ips <<< "${item%%;*}"
# the rendezvous master (node 0): a free port, so two jobs on this host do not meet on the default
if [ -z "${TIPC_MASTER:-}" ]; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
        { echo "$0: cannot pick a free port; set TIPC_MASTER=${ips[0]}:PORT" >&2; exit 2; }
    export TIPC_MASTER="${ips[0]}:$port"
fi
# one secret per job, shared by the nodes (real nodes: set the same TIPC_JOB_TOKEN on each)
[ -n "${TIPC_JOB_TOKEN:-}" ] || export TIPC_JOB_TOKEN=$(od -An -tx8 -N16 /dev/urandom | tr -d ' \n')
pids=()
for i in "${!ips[@]}"; do
    out="./logs/$model/$mode/node$i"
    echo "loopback: node $i (${ips[$i]}) -> $out, master $TIPC_MASTER"
    "$tipc" run "$cfg" "$mode" --node_ip "${ips[$i]}" --output "$out" "$@" &
    pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null' INT TERM
rc=0
for i in "${!pids[@]}"; do
    wait "${pids[$i]}"; s=$?
    echo "loopback: node $i exited $s"
    [ "$rc" -eq 0 ] && rc=$s
done
exit "$rc"
