#!/usr/bin/env bash
# test_bench_run.sh: `tipc run CONFIG benchmark_train` on our configs, for real: one node
# (train_infer.txt, layout N1C1) and the fleet config on two loopback nodes (2 x 2 ranks, N2C4,
# through `tipc launch` as its ordinary runs). Each node writes its training log under train_log/
# and its speed record under index/, in analysis.py's layout and fields, with a speed, the loss and
# the run time; the results log has the analysis's status line; `tipc speed` reads the same record
# back out of the log; the JUnit report has both stages.
. "$(dirname "$0")/lib_launch.sh"
export TIPC_JOB_TOKEN=bench TIPC_JOB_ID=$JOB
[ -f "$ROOT/$FLEET_CFG" ] || { echo "SKIP $FLEET_CFG not in this tree"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP python3 not installed"; exit 77; }

# check_node DIR LAYOUT NODE: the node's benchmark output
check_node() {
    local out="$W/$1/logs/mobilenet_v3_small/benchmark_train" name rec log
    name=$(basename "$W/$1")_mobilenet_v3_small_bs4_fp32_DP_$2
    rec="$out/index/${name}_speed"
    log="$out/train_log/${name}_log"
    [ -s "$rec" ] || fail "$1: no speed record $rec"
    [ "$(grep -c 'avg_ips: ' "$log")" -ge 13 ] || fail "$1: fewer than 13 per-step speeds in $log"
    python3 - "$rec" "$2" "$1" <<'EOF' || fail "$1: bad record $(cat "$rec")"
import json, sys
raw = open(sys.argv[1]).read()
r = json.loads(raw)
keys = ["model_branch", "model_commit", "model_name", "batch_size", "fp_item", "run_mode", "convergence_value",
        "convergence_key", "ips", "speed_unit", "device_num", "model_run_time", "frame_commit", "frame_version"]
assert list(r) == keys, list(r)                       # analysis.py's fields, in its order
assert raw == json.dumps(r) and not raw.endswith("\n")  # and its formatting
assert r["model_name"] == "mobilenet_v3_small_bs4_fp32_DP" and r["batch_size"] == 4 and r["fp_item"] == "fp32"
assert r["run_mode"] == "DP" and r["device_num"] == sys.argv[2] and r["speed_unit"] == "images/s"
assert isinstance(r["ips"], float) and r["ips"] > 0, r["ips"]
assert float(r["convergence_value"]) > 0 and r["convergence_key"] == "loss:"
assert int(r["model_run_time"]) >= 0 and r["frame_version"]
print("%s: %s ips %.3f %s, loss %s, %s s" % (sys.argv[3], r["device_num"], r["ips"], r["speed_unit"],
                                             r["convergence_value"], r["model_run_time"]))
EOF
    grep -q "^Run successfully with command - mobilenet_v3_small - tipc speed --filename .*${name}_log " \
        "$out/benchmark_log/results.log" || fail "$1: no analysis status line in benchmark_log/results.log"
    grep -q "^Run successfully with command - mobilenet_v3_small - tipc .*train -c " "$out/results_python.log" \
        || fail "$1: no training status line in results_python.log"
    # the record again from the log, by hand: the same bytes (model_run_time as the run set it)
    (cd "$W/$1" && model_run_time=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model_run_time"])' "$rec") \
        frame_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frame_version"])' "$rec") \
        "$TIPC" speed --filename "$log" --speed_log_file "$W/$1.again" --model_name mobilenet_v3_small_bs4_fp32_DP \
        --base_batch_size 4 --run_mode DP --fp_item fp32 --keyword avg_ips: --skip_steps 2 --device_num "$2" \
        --speed_unit images/s --convergence_key loss: > /dev/null) || fail "$1: tipc speed on the log failed"
    cmp -s "$rec" "$W/$1.again" || fail "$1: tipc speed gives $(cat "$W/$1.again"), the run wrote $(cat "$rec")"
    python3 - "$out/tipc/junit.xml" <<'EOF' || fail "$1: JUnit"
import sys, xml.etree.ElementTree as ET
cases = [(c.get("name"), c.find("failure") is None) for c in ET.parse(sys.argv[1]).getroot().iter("testcase")]
assert [n.split(".")[2].split("[")[0] for n, _ in cases] == ["train", "speed"], cases
assert all(ok for _, ok in cases), cases
EOF
}

# one node: our train_infer config's own layout (its first gpu_list item, one device)
fleet_dir n1
t0=$(now)
(cd "$W/n1" && "${TIPC_REL:-$TIPC}" run configs/mobilenet_v3_small/train_infer.txt benchmark_train > "$W/n1.out" 2>&1) \
    || fail "one node: tipc run exit $?"
echo "one node: $(elapsed "$t0") s"
check_node n1 N1C1

# two nodes: the fleet config's layout, each node its own folder, as on two machines
fleet_dir a0; fleet_dir a1
port=$(free_port)
t0=$(now)
for n in a1:127.0.0.2 a0:127.0.0.1; do
    (cd "$W/${n%%:*}" && TIPC_MASTER=127.0.0.1:$port exec "${TIPC_REL:-$TIPC}" run $FLEET_CFG benchmark_train \
        --node_ip "${n#*:}") > "$W/${n%%:*}.out" 2>&1 &
    LAUNCHERS+=($!)
    eval "${n%%:*}_pid=$!"
done
wait_rc rc0 "$a0_pid"; wait_rc rc1 "$a1_pid"
echo "two nodes: $(elapsed "$t0") s"
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || fail "two nodes: tipc run exit codes $rc0 $rc1"
grep -q 'tipc launch --ips=127.0.0.1,127.0.0.2 --gpus=0,1 ' "$W/a0.out" || fail "the fleet benchmark did not launch 2 nodes"
check_node a0 N2C4
check_node a1 N2C4
echo ok
