#!/usr/bin/env bash
# On a machine without a GPU (or a build without CUDA), every engine command asked for the GPU exits
# 7, and every option its hint names is one that command accepts: re-run with the hinted option in
# place of the GPU request, the command is no usage error (exit 2) and no GPU failure (exit 7).
. "$ROOT/tests/e2e/lib.sh"
T=${TIPC_REL:-$TIPC}
cd "$TMPDIR" || fail cd
TINY="--data-path none -o Arch.class_num=4 -o Arch.width_mult=0.25 -o Arch.image_size=32 --batch-size 2 --epochs 1 -o DataLoader.synthetic_size=4"
"$T" train $TINY --device cpu --output-dir o >cpu.txt 2>&1 || fail "CPU training: $(tail -n 5 cpu.txt)"
"$T" export --pretrained o/latest.ckpt --save-inference-dir m >cpu.txt 2>&1 || fail "CPU export: $(tail -n 5 cpu.txt)"
checked=0
# NAME | GPU request | the rest of the command line
while IFS='|' read -r name gpu rest; do
    "$T" $name $gpu $rest >out.txt 2>err.txt
    rc=$?
    if [ "$rc" != 7 ]; then
        [ "$name" = train ] && skip "a GPU is present (train $gpu exited $rc): the hint is for machines without one"
        [ "$rc" != 2 ] || fail "$name refuses $gpu: $(cat err.txt)"
        echo "$name $gpu -> exit $rc: runs without the GPU, nothing to hint"
        continue
    fi
    hints=$(grep '^hint:' err.txt | grep -o -e '--device cpu' -e '--use-gpu False' | sort -u)
    [ -n "$hints" ] || fail "$name: no option named in the hint: $(cat err.txt)"
    while read -r h; do
        "$T" $name $h $rest >out2.txt 2>err2.txt
        rc2=$?
        [ "$rc2" != 2 ] && [ "$rc2" != 7 ] || fail "$name: the hinted '$h' does not work (exit $rc2): $(cat err2.txt)"
        echo "$name $gpu -> exit 7; hint '$h' accepted (exit $rc2)"
        checked=$((checked + 1))
    done <<<"$hints"
done <<EOT
train|--device gpu|$TINY --output-dir o2
export|--device gpu|--pretrained o/latest.ckpt --save-inference-dir e
infer|--use-gpu True|--model-dir m
bench infer|--device gpu|--steps 1 --warmup 0 --batch-size 1 --resolution 32 --num-classes 4
EOT
[ "$checked" -ge 4 ] || fail "only $checked hints checked"
echo ok
