"""data_vs_torchvision.py: the peer side of data_vs_torchvision.sh: torchvision's standard
ImageNet training transforms on PIL (RandomResizedCrop(224) + RandomHorizontalFlip + PILToTensor,
uint8 like our loader, normalisation excluded on both sides) over the same files, in one process
with one thread. Prints one line per round: "torchvision: N images in S s: X img/s".

usage: python data_vs_torchvision.py DATA_DIR IMAGES [train|eval] [--serve]
--serve: import once, then run one round per line read on stdin (so the shell script can
alternate rounds with tipc's without paying torch's import time each round)."""
import os
import sys
import time

import torch
from PIL import Image
from torchvision import transforms


def list_images(root, split):
    lst = os.path.join(root, split + "_list.txt")
    if os.path.exists(lst):
        with open(lst) as f:
            return [os.path.join(root, line.rsplit(None, 1)[0]) for line in f if line.strip()]
    out = []
    d = os.path.join(root, split)
    for c in sorted(os.listdir(d)):
        cd = os.path.join(d, c)
        if os.path.isdir(cd):
            out += [os.path.join(cd, n) for n in sorted(os.listdir(cd)) if n.lower().endswith((".jpg", ".jpeg"))]
    return out


def run(paths, tf, n, ev):
    t0 = time.perf_counter()
    for i in range(n):
        with open(paths[i % len(paths)], "rb") as f:
            img = Image.open(f).convert("RGB")
        x = tf(img)
    dt = time.perf_counter() - t0
    assert x.shape == (3, 224, 224) and x.dtype == torch.uint8
    print("torchvision: %d images in %.3f s: %.1f img/s (%s 224px, 1 thread)" % (n, dt, n / dt, "eval" if ev else "train"),
          flush=True)


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    ev = len(sys.argv) > 3 and sys.argv[3] == "eval"
    torch.set_num_threads(1)
    torch.manual_seed(1)
    if ev:
        tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.PILToTensor()])
    else:
        tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                 transforms.PILToTensor()])
    paths = list_images(root, "val" if ev else "train")
    for p in paths[:8]:  # warm-up (file cache, lazy imports)
        tf(Image.open(p).convert("RGB"))
    if "--serve" in sys.argv:
        print("ready", flush=True)
        for _ in sys.stdin:
            run(paths, tf, n, ev)
    else:
        run(paths, tf, n, ev)


if __name__ == "__main__":
    main()
