#!/usr/bin/python3
"""The PyTorch side of bench/bench_vs_pytorch.sh (Debian's python3-torch, 1 thread).

  lesson: the lesson's three runs (train 5 epochs + the two evaluations), best of N,
          printed as "pytorch lesson <ms> ms <us> us/step".
  norm:   each norm layer's forward + backward on (4096, 1024) and (256, 64, 8, 8),
          the same cases as bench_norm.
  process: one plain run of the lesson, for /usr/bin/time (wall and peak RSS).
"""
import argparse
import os
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import torch_isa  # noqa: E402,F401  (before torch: oneDNN held to OPENBLAS_CORETYPE's instruction set)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from fixtures.lesson import deep_net, load_digits_split  # noqa: E402  (the lesson's model, one copy)
from fixtures.norms import RMSNormRef  # noqa: E402  (1.13 has no nn.RMSNorm)

torch.set_num_threads(1)
NORMS = {"none": None, "batch": nn.BatchNorm1d, "layer": nn.LayerNorm}


def load(data_dir):
    """X_train, y_train, X_val, y_val: fixtures.lesson's split in the order lesson() takes."""
    X_train, X_val, y_train, y_val = load_digits_split(data_dir)
    return X_train, y_train, X_val, y_val


def lesson(split, runs, verbose=False, batch_size=64, epochs=5):
    X_train, y_train, X_val, y_val = split
    loss_fn = nn.CrossEntropyLoss()
    steps = 0
    for name in runs:
        torch.manual_seed(0)
        model = deep_net(NORMS[name])
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        for _ in range(epochs):
            model.train()
            for xb, yb in DataLoader(TensorDataset(X_train, y_train), batch_size=batch_size, shuffle=True):
                opt.zero_grad()
                loss_fn(model(xb), yb).backward()
                opt.step()
                steps += 1
        model.eval()
        with torch.no_grad():
            acc = (model(X_val).argmax(1) == y_val).float().mean().item()
            loss = loss_fn(model(X_train), y_train).item()
        if verbose:
            print(f"{name:<17} training loss {loss:.3f}   val accuracy {acc:.3f}")
    return steps


def best_seconds(repeats, f, clock=time.perf_counter):
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        f()
        best = min(best, clock() - start)
    return best


def norm_cases(shape):
    c = shape[1]
    rest = list(shape[1:])
    groups = 32 if len(shape) == 2 and c >= 1024 else 8  # the lesson's (64, 64): 8, as digits
    bn = nn.BatchNorm1d(c) if len(shape) == 2 else nn.BatchNorm2d(c)
    return [("BatchNorm", bn), ("LayerNorm", nn.LayerNorm(rest)),
            ("RMSNorm", RMSNormRef(rest)),
            ("GroupNorm", nn.GroupNorm(groups, c))]


def bench_norm(repeats):
    for shape in ((4096, 1024), (256, 64, 8, 8), (64, 64)):
        calls = max(1, (1 << 20) // (shape[0] * shape[1] * (shape[2] * shape[3] if len(shape) == 4 else 1)))
        x = torch.randn(shape, requires_grad=True)
        dy = torch.randn(shape)
        nbytes = 5 * x.numel() * 4
        print(f"pytorch {list(shape)} (CPU time)")
        for name, layer in norm_cases(shape):
            def both():
                for _ in range(calls):
                    x.grad = None
                    layer(x).backward(dy)

            def forward_only():
                for _ in range(calls):
                    layer(x)
            both()
            with torch.no_grad():  # CPU time, as bench/bench_norm reports
                forward = best_seconds(repeats, forward_only, time.process_time) / calls
            total = best_seconds(repeats, both, time.process_time) / calls
            note = " (composite: 1.13 has no RMSNorm)" if name == "RMSNorm" else ""
            print(f"  {name:<9} forward {forward * 1e3:.4f} ms, forward + backward {total * 1e3:.4f} ms: "
                  f"{nbytes / total * 1e-9:.1f} GB/s{note}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["lesson", "norm", "process"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (minidl: --threads)")
    parser.add_argument("--data", default=os.path.join(ROOT, "data"))
    parser.add_argument("--norm", default="none,batch,layer", help="comma list of runs")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.what == "norm":
        bench_norm(args.repeats)
        return
    split = load(args.data)
    runs = args.norm.split(",")
    sizes = {"batch_size": args.batch_size, "epochs": args.epochs}
    if args.what == "process":
        lesson(split, runs, verbose=True, **sizes)
        return
    steps = lesson(split, runs, **sizes)  # warm
    seconds = best_seconds(args.repeats, lambda: lesson(split, runs, **sizes))
    cpu = best_seconds(args.repeats, lambda: lesson(split, runs, **sizes), time.process_time)
    print(f"pytorch lesson {seconds * 1e3:.1f} ms wall, {seconds / steps * 1e6:.1f} us/step, cpu {cpu * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
