"""torch_mnv3.py: PyTorch's side of the CPU benchmarks (cpu_vs_pytorch.sh, amp_cpu.sh): torchvision's
MobileNetV3-small trained with tipc's recipe (momentum SGD 0.9, wd 1e-5, cross-entropy, synthetic
input) or run for inference, median over timed steps after warm-up.

  torch_mnv3.py train THREADS BATCH RES STEPS [fp32|bf16]   -> median img/s
  torch_mnv3.py infer THREADS RES STEPS                     -> median ms per batch-1 image
"""
import sys
import time

import torch
import torchvision


def train_ips(threads, bs, res, steps, bf16=False, warmup=2):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_small()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-5)
    x = torch.randn(bs, 3, res, res)
    y = torch.arange(bs) % 1000
    lossf = torch.nn.CrossEntropyLoss()
    m.train()
    ts = []
    for i in range(warmup + steps):
        t = time.perf_counter()
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = lossf(m(x), y)
        loss.backward()
        opt.step()
        if i >= warmup:
            ts.append(time.perf_counter() - t)
    return bs / sorted(ts)[len(ts) // 2]


def infer_ms(threads, res, steps, warmup=5):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v3_small().eval()
    x1 = torch.randn(1, 3, res, res)
    ts = []
    with torch.no_grad():
        for i in range(warmup + steps):
            t = time.perf_counter()
            m(x1)
            if i >= warmup:
                ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2] * 1e3


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "train":
        th, bs, res, steps = map(int, args[:4])
        print(f"{train_ips(th, bs, res, steps, bf16=args[4:5] == ['bf16']):.2f}")
    elif what == "infer":
        th, res, steps = map(int, args[:3])
        print(f"{infer_ms(th, res, steps):.3f}")
    else:
        sys.exit(f"usage: {sys.argv[0]} train THREADS BATCH RES STEPS [fp32|bf16] | infer THREADS RES STEPS")
