#!/usr/bin/python3
"""Checks that checkpoints move between minidl's `digits` program and PyTorch, both ways.

Run with Debian's python3-torch (PyTorch 1.13), after building the digits program:
    /usr/bin/python3 scripts/check_checkpoints_torch.py [--digits build/examples/digits/digits] [--norm none,batch,...]
        [--arch mlp|cnn]

--arch picks the network as digits' --arch does: the lesson's deep_net (mlp, the default; norms
none, batch, layer, rms, group) or the digits' CNN (cnn(); norms none, batch, layer, group,
instance). For each norm (default: all of the arch's):
  minidl -> PyTorch  `digits --save` writes <run>.safetensors after one epoch; PyTorch's
                     deep_net(norm) (or cnn(norm)) takes it with load_state_dict(strict=True), and in eval mode
                     gives the validation loss and accuracy that digits' --summary reports.
  PyTorch -> minidl  PyTorch trains deep_net(norm) a few steps (so BatchNorm's running statistics
                     and num_batches_tracked are not at their defaults) and saves it; `digits
                     --init` starts from it and replays one epoch in a batch order written here;
                     its first step loss matches PyTorch's to 1e-5, and every later one stays as
                     close to PyTorch float32 as PyTorch float32 stays to float64 (x4).
Exits 1 naming the first mismatch. The files are written by hand (json + struct): the
`safetensors` package is not in Debian.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import REPO, load_digits_split, load_safetensors, save_safetensors  # noqa: E402

NORMS = {"mlp": ["none", "batch", "layer", "rms", "group"], "cnn": ["none", "batch", "layer", "group", "instance"]}
WIDTH, GROUPS = 64, 8


class RMSNorm(nn.Module):
    """torch.nn.RMSNorm (PyTorch 2.4) for 1.13: y = x / sqrt(mean(x^2) + eps) * weight."""

    def __init__(self, size, eps=None):
        super().__init__()
        self.eps = torch.finfo(torch.float32).eps if eps is None else eps
        self.weight = nn.Parameter(torch.ones(size))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def make_norm(norm):
    return {"none": None, "batch": nn.BatchNorm1d, "layer": nn.LayerNorm, "rms": RMSNorm,
            "group": lambda width: nn.GroupNorm(GROUPS, width)}[norm]


def deep_net(norm, depth=8, width=WIDTH):
    """The lesson's model, with the norm layer chosen by its short name."""
    layer, layers, n_in = make_norm(norm), [], 64
    for _ in range(depth):
        layers += [nn.Linear(n_in, width)] + ([layer(width)] if layer else []) + [nn.Tanh()]
        n_in = width
    return nn.Sequential(*layers, nn.Linear(width, 10))


def cnn(norm, groups=GROUPS):
    """The digits' CNN (examples/digits/lesson/cnn.hpp): three 3x3 convolutions, each followed by
    the norm and ReLU, global average pooling, Linear(32, 10). layer = GroupNorm(1, C),
    instance = GroupNorm(C, C)."""
    make = {"none": None, "batch": nn.BatchNorm2d, "layer": lambda c: nn.GroupNorm(1, c),
            "group": lambda c: nn.GroupNorm(groups, c), "instance": lambda c: nn.GroupNorm(c, c)}[norm]
    layers = [nn.Unflatten(1, (1, 8, 8))]
    for conv in (nn.Conv2d(1, 16, 3, padding=1), nn.Conv2d(16, 32, 3, stride=2, padding=1),
                 nn.Conv2d(32, 32, 3, padding=1)):
        layers += [conv] + ([make(conv.out_channels)] if make else []) + [nn.ReLU()]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


ARCH = "mlp"  # --arch: which network model() builds and digits trains


def model(norm):
    return cnn(norm) if ARCH == "cnn" else deep_net(norm)


def digits(binary, *args):
    done = subprocess.run([binary, "--quiet", "--seeds", "0", "--arch", ARCH, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"digits {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def read_curve(path, run):
    with open(path) as f:
        next(f)
        return [float(row.split(",")[4]) for row in f if row.startswith(run + ",")]  # run,seed,epoch,step,loss


def check(condition, message):
    if not condition:
        sys.exit("MISMATCH: " + message)


def minidl_to_torch(binary, norm, data, work):
    X_train, X_val, y_train, y_val = data
    save, summary = os.path.join(work, "saved"), os.path.join(work, f"summary_{norm}.json")
    digits(binary, "--norm", norm, "--epochs", "1", "--save", save, "--summary", summary)
    state = load_safetensors(os.path.join(save, f"{norm}.safetensors"))
    net = model(norm)
    net.load_state_dict(state, strict=True)  # raises on a missing, unexpected or misshapen entry
    for name, value in net.state_dict().items():
        check(value.dtype == state[name].dtype, f"{name}: dtype {state[name].dtype}, PyTorch has {value.dtype}")
    net.eval()
    with torch.no_grad():
        logits = net(X_val)
        val_loss = nn.functional.cross_entropy(logits, y_val).item()
        accuracy = (logits.argmax(1) == y_val).float().mean().item()
    with open(summary) as f:
        run = json.load(f)["runs"][0]
    check(abs(run["val_loss"] - val_loss) < 1e-4, f"{norm}: val loss digits {run['val_loss']} vs PyTorch {val_loss}")
    check(abs(run["val_accuracy"] - accuracy) < 1e-6, f"{norm}: val accuracy {run['val_accuracy']} vs {accuracy}")
    print(f"  minidl -> PyTorch  {norm:<6} strict load ok; val loss {val_loss:.6f} (digits {run['val_loss']:.6f})")


def torch_to_minidl(binary, norm, data, work):
    X_train, X_val, y_train, y_val = data
    torch.manual_seed(1)
    net = model(norm)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(3):  # move the running statistics off their defaults
        batch = torch.randint(0, len(X_train), (64,))
        opt.zero_grad()
        loss_fn(net(X_train[batch]), y_train[batch]).backward()
        opt.step()
    init = os.path.join(work, "init")
    os.makedirs(init, exist_ok=True)
    save_safetensors(os.path.join(init, f"{norm}.safetensors"), list(net.state_dict().items()))

    order = torch.randperm(len(X_train))
    order_file = os.path.join(work, "order.txt")
    with open(order_file, "w") as f:
        f.write(" ".join(str(int(i)) for i in order) + "\n")
    # The same epoch in PyTorch, in float32 and in float64 from the same weights: how far the
    # two drift apart measures how much this stack amplifies rounding.
    twin = model(norm).double()
    twin.load_state_dict({k: v.double() if v.is_floating_point() else v for k, v in net.state_dict().items()})
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.05)
    losses, losses64 = [], []
    for start in range(0, len(order), 64):  # one epoch, the same batches digits will take
        batch = order[start:start + 64]
        for m, optimizer, out, x in ((net, opt, losses, X_train), (twin, twin_opt, losses64, X_train.double())):
            optimizer.zero_grad()
            loss = loss_fn(m(x[batch]), y_train[batch])
            loss.backward()
            optimizer.step()
            out.append(loss.item())

    curves = os.path.join(work, f"curves_{norm}.csv")
    digits(binary, "--norm", norm, "--epochs", "1", "--init", init, "--batch-order", order_file, "--curves", curves)
    ours = read_curve(curves, norm)
    check(len(ours) == len(losses), f"{norm}: digits took {len(ours)} steps, PyTorch {len(losses)}")
    # The first step shows the loaded weights are PyTorch's, to rounding. After it, minidl is held
    # within 1e-4 only over the steps where PyTorch float32 and float64 agree within 1e-5: past
    # them the stack amplifies rounding (deep tanh with LayerNorm or GroupNorm), and any float32
    # implementation that rounds differently may drift as far as PyTorch's two runs do.
    check(abs(ours[0] - losses[0]) < 1e-5, f"{norm}: first step loss digits {ours[0]} vs PyTorch {losses[0]}")
    stable = next((i for i, (b, b64) in enumerate(zip(losses, losses64)) if abs(b - b64) > 1e-5), len(losses))
    worst = max((abs(a - b) for a, b in zip(ours[:stable], losses[:stable])), default=0.0)
    for step, (a, b) in enumerate(zip(ours[:stable], losses[:stable]), start=1):
        check(abs(a - b) <= 1e-4, f"{norm}: step {step} loss digits {a} vs PyTorch {b}, more than 1e-4 apart within "
              f"the {stable} steps PyTorch float32 and float64 agree on")
    print(f"  PyTorch -> minidl  {norm:<6} strict load ok; the first {stable} of {len(ours)} step losses (where PyTorch "
          f"float32 and float64 agree within 1e-5) within {worst:.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--digits", default=os.path.join(REPO, "build", "examples", "digits", "digits"))
    parser.add_argument("--arch", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--norm", help="comma list (default: every norm of the arch)")
    args = parser.parse_args()
    global ARCH
    ARCH = args.arch
    if not os.access(args.digits, os.X_OK):
        sys.exit(f"{args.digits}: no digits program there (build it, or pass --digits PATH)")
    torch.set_num_threads(1)
    data = load_digits_split(os.path.join(REPO, "data"))
    with tempfile.TemporaryDirectory() as work:
        for norm in (args.norm or ",".join(NORMS[ARCH])).split(","):
            minidl_to_torch(args.digits, norm, data, work)
            torch_to_minidl(args.digits, norm, data, work)
    print(f"checkpoints of --arch {ARCH} move between minidl and PyTorch both ways")


if __name__ == "__main__":
    main()
