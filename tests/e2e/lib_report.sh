# lib_report.sh: helpers for the tests of what a person sees (sourced after lib.sh): a tiny copy of
# our train_infer.txt that trains in seconds, the end table without its times, JUnit's cases in
# one line each, and golden files (UPDATE_GOLDEN=1 rewrites them).

# tiny_config GPU_LIST [EPOCHS]: in the current folder, configs/m/tiny.txt (our train_infer.txt
# with the tiny recipe, GPU_LIST as gpu_list, inference on CPU and GPU), configs/m/tiny.yaml,
# configs/datasets.yaml and images/demo.jpg.
tiny_config() {
    mkdir -p configs/m images
    tiny_recipe "${2:-2}" > configs/m/tiny.yaml
    cp "$ROOT/configs/datasets.yaml" configs/
    cp "$ROOT/images/demo.jpg" images/
    sed -e "s/^gpu_list:.*/gpu_list:$1/" -e 's#configs/mobilenet_v3_small/mobilenet_v3_small.yaml#configs/m/tiny.yaml#' \
        -e "s/^--epochs:.*/--epochs:lite_train_lite_infer=${2:-2}/" \
        "$ROOT/configs/mobilenet_v3_small/train_infer.txt" > configs/m/tiny.txt
}

# end_table FILE: the end-of-run table of a run's stderr, host and seconds replaced (stable text)
end_table() {
    sed -n '/^mobilenet_v3_small\.[a-z_]* on /,$p' "$1" |
        sed -E -e 's/ on [^ ]+:$/ on HOST:/' -e 's/ [0-9]+\.[0-9]( |$)/ S.S\1/g'
}

# junit_cases FILE: "name | outcome | message" per testcase
junit_cases() {
    python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
for c in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    f, s = c.find("failure"), c.find("skipped")
    e = f if f is not None else s
    print(c.get("name"), "|", "failed" if f is not None else "skipped" if s is not None else "passed", "|",
          e.get("message") if e is not None else "")
PY
}

# golden NAME FILE: FILE must equal tests/fixtures/report/NAME (UPDATE_GOLDEN=1: write it)
golden() {
    local want="$ROOT/tests/fixtures/report/$1"
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then cp "$2" "$want"; return; fi
    diff -u "$want" "$2" > "$1.diff" || fail "$1 differs from the golden file (UPDATE_GOLDEN=1 rewrites it): $(cat "$1.diff")"
}
