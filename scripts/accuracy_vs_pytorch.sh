#!/usr/bin/env bash
# accuracy_vs_pytorch.sh: the same recipe trained by `tipc train` and by PyTorch (torchvision
# mobilenet_v3_small, torchvision transforms) on the same synthetic JPEG dataset (tipc prepare
# --synthetic, PaddleClas lists); prints both runs' final top-1/top-5 and the difference.
# Env: PYTHON (needs torch, torchvision, pillow), CLASSES (10), TRAIN (50 per class), VAL (20 per
# class), EPOCHS (8), BS (32), RES (128), LR (0.1), THREADS (all cores), SEED (1),
# ANTIALIAS (1: PyTorch resizes PIL images, antialiased as usual; 0: tensors without antialias,
# as tipc's resampler does), SIDES (both | pytorch: skip the tipc run).
# Not part of `make test` or `make bench` (minutes of CPU).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=${TIPC_REL:-$ROOT/bin/tipc}
PY=${PYTHON:-python3}
CLASSES=${CLASSES:-10}; TRAIN=${TRAIN:-50}; VAL=${VAL:-20}; EPOCHS=${EPOCHS:-8}; BS=${BS:-32}; RES=${RES:-128}
LR=${LR:-0.1}; TH=${THREADS:-$(nproc)}; SEED=${SEED:-1}; AA=${ANTIALIAS:-1}; SIDES=${SIDES:-both}
RESIZE=$(( (RES * 256 + 112) / 224 ))
W=${WORKDIR:-$(mktemp -d)}
"$PY" -c 'import torch, torchvision, PIL' || { echo "SKIP: needs torch, torchvision, pillow for $PY"; exit 77; }
"$T" prepare --synthetic "$W/data" --classes "$CLASSES" --train-per-class "$TRAIN" --val-per-class "$VAL" --seed "$SEED" >/dev/null
echo "# accuracy_vs_pytorch: $(date -u '+%Y-%m-%d %H:%M UTC'), data: synthetic $CLASSES classes x ($TRAIN train + $VAL val), $RES px, bs $BS, $EPOCHS epochs, lr $LR cosine, momentum 0.9, wd 1e-5, dropout 0.2"
[ "$SIDES" = pytorch ] || "$T" train --data-path "$W/data" -o Arch.class_num="$CLASSES" -o Arch.image_size="$RES" -o DataLoader.resize_size="$RESIZE" \
    --batch-size "$BS" --epochs "$EPOCHS" --lr "$LR" --seed "$SEED" --threads "$TH" --print-freq 1000 --output-dir "$W/tipc" \
    | tee "$W/tipc.log" | grep 'Acc@1'
"$PY" - "$W/data" "$CLASSES" "$RES" "$RESIZE" "$BS" "$EPOCHS" "$LR" "$TH" "$SEED" "$AA" <<'PYEOF' | tee "$W/torch.log"
import math, sys, torch, torchvision
from torchvision import transforms as T
from PIL import Image
root, K, res, resize, bs, epochs, lr, th, seed, aa = sys.argv[1], *map(int, sys.argv[2:5]), int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9]), sys.argv[10] == "1"
torch.set_num_threads(th); torch.manual_seed(seed)
norm = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
class Lst(torch.utils.data.Dataset):
    def __init__(s, f, tf):
        s.items = [(l.split()[0], int(l.split()[1])) for l in open(f"{root}/{f}") if l.strip()]; s.tf = tf
    def __len__(s): return len(s.items)
    def __getitem__(s, i):
        p, y = s.items[i]; return s.tf(Image.open(f"{root}/{p}").convert("RGB")), y
if aa:
    tr = Lst("train_list.txt", T.Compose([T.RandomResizedCrop(res), T.RandomHorizontalFlip(), T.ToTensor(), norm]))
    va = Lst("val_list.txt", T.Compose([T.Resize(resize), T.CenterCrop(res), T.ToTensor(), norm]))
else:
    tr = Lst("train_list.txt", T.Compose([T.ToTensor(), T.RandomResizedCrop(res, antialias=False), T.RandomHorizontalFlip(), norm]))
    va = Lst("val_list.txt", T.Compose([T.ToTensor(), T.Resize(resize, antialias=False), T.CenterCrop(res), norm]))
dl = torch.utils.data.DataLoader(tr, batch_size=bs, shuffle=True, drop_last=True, num_workers=0)
dv = torch.utils.data.DataLoader(va, batch_size=bs, num_workers=0)
m = torchvision.models.mobilenet_v3_small(num_classes=K)
opt = torch.optim.SGD(m.parameters(), lr=lr, momentum=0.9, weight_decay=1e-5)
steps = len(dl); lossf = torch.nn.CrossEntropyLoss()
for e in range(epochs):
    m.train()
    for i, (x, y) in enumerate(dl):
        for g in opt.param_groups: g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * (e + i / steps) / epochs))
        opt.zero_grad(); lossf(m(x), y).backward(); opt.step()
    m.eval(); h1 = h5 = n = 0
    with torch.no_grad():
        for x, y in dv:
            top = m(x).topk(5, 1).indices
            h1 += (top[:, 0] == y).sum().item(); h5 += (top == y[:, None]).any(1).sum().item(); n += len(y)
    print(f" * Acc@1 {100 * h1 / n:.3f} Acc@5 {100 * h5 / n:.3f} (pytorch epoch {e + 1})", flush=True)
PYEOF
[ "$SIDES" = pytorch ] && { grep 'Acc@1' "$W/torch.log" | tail -1; exit 0; }
a=$(grep 'Acc@1' "$W/tipc.log" | tail -1 | awk '{print $3}'); b=$(grep 'Acc@1' "$W/torch.log" | tail -1 | awk '{print $3}')
awk -v a="$a" -v b="$b" 'BEGIN { printf "final top-1: tipc %.2f, pytorch %.2f, difference %.2f points (target: within 2)\n", a, b, a - b }'
