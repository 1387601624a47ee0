#!/usr/bin/env python3
"""dump_fixtures.py: reference tensors from PyTorch for tests/unit/test_model.c.

Needs torch + torchvision (pip install torch torchvision); the tests never run Python.
A reduced torchvision mobilenet_v3_small (width 0.25, 10 classes, 64 px, batch 4, dropout 0,
label smoothing 0.1) in train mode: initial parameters and BN statistics, the input, logits,
loss, all gradients, and parameters/statistics after 2 SGD steps (lr 0.1, momentum 0.9,
weight decay 1e-4) on the same batch, plus eval-mode logits after those steps.

File format (little endian): magic b"TIPCFIX1", u32 version (1), u32 count, then per tensor:
name (32 bytes, NUL padded), u32 ndim, u32 dims[4], float32 data. Activations are NHWC.
Usage: scripts/dump_fixtures.py [OUT] (default tests/fixtures/mbv3_small_w025.bin)
"""
import struct
import sys

import torch
import torchvision

W, K, R, B, LS = 0.25, 10, 64, 4, 0.1
LR, MU, WD = 0.1, 0.9, 1e-4


def pack(name, t):
    t = t.detach().to(torch.float32).contiguous()
    dims = list(t.shape)[:4] + [0] * (4 - min(4, t.dim()))
    assert t.dim() <= 4
    hdr = name.encode().ljust(32, b"\0") + struct.pack("<5I", t.dim(), *dims)
    return hdr + t.numpy().astype("<f4").tobytes()


def flat(ts):
    return torch.cat([t.detach().reshape(-1) for t in ts])


def stats(m):
    out = []
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            out += [mod.running_mean, mod.running_var]
    return flat(out)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/mbv3_small_w025.bin"
    torch.manual_seed(0)
    torch.set_num_threads(1)
    m = torchvision.models.mobilenet_v3_small(num_classes=K, width_mult=W, dropout=0.0)
    m.train()
    x = torch.randn(B, 3, R, R)
    y = torch.tensor([1, 7, 3, 9])
    params = list(m.parameters())
    rec = [pack("params", flat(params)), pack("stats", stats(m)),
           pack("input", x.permute(0, 2, 3, 1)), pack("labels", y.float())]
    lossf = torch.nn.CrossEntropyLoss(label_smoothing=LS)
    opt = torch.optim.SGD(params, lr=LR, momentum=MU, weight_decay=WD)
    for step in range(2):
        opt.zero_grad()
        logits = m(x)
        loss = lossf(logits, y)
        loss.backward()
        if step == 0:
            rec += [pack("logits", logits), pack("loss", loss.reshape(1)),
                    pack("grads", flat([p.grad for p in params]))]
        opt.step()
    rec += [pack("params_step2", flat(params)), pack("stats_step2", stats(m))]
    m.eval()
    with torch.no_grad():
        rec.append(pack("logits_eval", m(x)))
    with open(out, "wb") as f:
        f.write(b"TIPCFIX1" + struct.pack("<2I", 1, len(rec)) + b"".join(rec))
    print(f"wrote {out}: {len(rec)} tensors, {sum(p.numel() for p in params)} parameters")


if __name__ == "__main__":
    main()
