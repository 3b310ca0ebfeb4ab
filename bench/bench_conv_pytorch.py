#!/usr/bin/python3
"""The PyTorch side of bench/bench_conv_vs_pytorch.sh (Debian's python3-torch 1.13).

  layer --threads N: Conv2d forward + backward on (32, 64, 32, 32), 3x3, 64 -> 64, padding 1,
                     best of N, printed as "pytorch layer threads N  wall <ms> ms".
  cnn --norm LIST:   the digits' CNN (scripts/check_checkpoints_torch.py's cnn()) training
                     step at batch 64, 1 thread: "pytorch cnn <norm>  <us> us/step".
The same work as bench_conv; the shell script runs the two in turn and keeps minima.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import torch_isa  # noqa: E402,F401  (before torch: oneDNN held to OPENBLAS_CORETYPE's instruction set)

import torch  # noqa: E402
from torch import nn  # noqa: E402

from check_checkpoints_torch import cnn  # noqa: E402  (the digits' CNN, one copy)


def best(repeats, f):
    """The least wall and the least CPU time (all threads) of `repeats` runs of f."""
    f()
    wall, cpu = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    return min(wall), min(cpu)


def layer(repeats):
    torch.manual_seed(0)
    conv = nn.Conv2d(64, 64, 3, padding=1)
    x = torch.randn(32, 64, 32, 32, requires_grad=True)
    gout = torch.randn(32, 64, 32, 32)

    def step():
        conv.zero_grad()
        x.grad = None
        conv(x).backward(gout)

    wall, cpu = best(repeats, step)
    print(f"pytorch layer threads {torch.get_num_threads()}  wall {wall * 1e3:.2f} ms | cpu {cpu * 1e3:.2f} ms")


def cnn_step(norm, repeats, steps):
    torch.manual_seed(0)
    model = cnn(norm)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    x, y = torch.rand(64, 64), torch.randint(0, 10, (64,))

    def epoch():
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()

    wall, cpu = best(repeats, epoch)
    print(f"pytorch cnn {norm}  wall {wall / steps * 1e6:.1f} us/step | cpu {cpu / steps * 1e6:.1f} us/step  "
          f"(best of {repeats} x {steps} steps, batch 64)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["layer", "cnn"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--norm", default="none,batch,group")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=22)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.what == "layer":
        layer(args.repeats)
    else:
        for norm in args.norm.split(","):
            cnn_step(norm, args.repeats, args.steps)


if __name__ == "__main__":
    main()
