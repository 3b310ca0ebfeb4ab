#!/usr/bin/python3
"""Checks that checkpoints move between minidl's `digits` program and PyTorch, both ways.

Run with Debian's python3-torch (PyTorch 1.13), after building the digits program:
    /usr/bin/python3 scripts/check_checkpoints_torch.py [--digits build/apps/digits/digits] [--norm none,batch,...]
        [--arch mlp,resmlp-pre,resmlp-post,cnn]

For each arch (default: mlp, resmlp-pre, resmlp-post) and each of its norms (mlp: the five; cnn: none,
batch, layer, group, instance, the digits' CNN of cnn(); resmlp-pre and
resmlp-post: layer and rms, with 2 blocks and --dropout 0.1 so the Dropout layers are in the
model; their PyTorch classes are those of scripts/fixtures/layers.py):
  minidl -> PyTorch  `digits --save` writes <run>.safetensors after one epoch; PyTorch's
                     deep_net(norm) (or cnn(norm)) takes it with load_state_dict(strict=True), and in eval mode
                     gives the validation loss and accuracy that digits' --summary reports.
  PyTorch -> minidl  PyTorch trains deep_net(norm) a few steps (so BatchNorm's running statistics
                     and num_batches_tracked are not at their defaults) and saves it; `digits
                     --init-from` starts from it and replays one epoch in a batch order written here;
                     its first step loss matches PyTorch's to 1e-5, and every step loss within
                     1e-4 of PyTorch float64's over the steps where no float32 run of PyTorch's
                     ensemble leaves float64 by more than 2.5e-5 (scripts/float32_horizon.py).
Exits 1 naming the first mismatch. The files are written by hand (json + struct): the
`safetensors` package is not in Debian.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_isa  # noqa: E402,F401 (before torch: PyTorch's kernels at OPENBLAS_CORETYPE's instruction set)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from fixtures import lesson  # noqa: E402
from fixtures.common import REPO, load_safetensors, save_safetensors  # noqa: E402
from fixtures.layers import NORMS as BLOCK_NORMS, PostNormBlock, PreNormBlock  # noqa: E402
import float32_horizon as horizon_rule  # noqa: E402

NORMS = {"mlp": ["none", "batch", "layer", "rms", "group"], "cnn": ["none", "batch", "layer", "group", "instance"]}
WIDTH, GROUPS = 64, 8


def make_norm(norm):
    return {"none": None, "batch": nn.BatchNorm1d, "layer": nn.LayerNorm, "rms": BLOCK_NORMS["rms"],
            "group": lambda width: nn.GroupNorm(GROUPS, width)}[norm]


def deep_net(norm):
    """The lesson's model, with the norm layer chosen by its short name."""
    return lesson.deep_net(make_norm(norm), width=WIDTH)


def cnn(norm, groups=GROUPS):
    """The digits' CNN (apps/common/models/cnn.hpp): three 3x3 convolutions, each followed by
    the norm and ReLU, global average pooling, Linear(32, 10). layer = GroupNorm(1, C),
    instance = GroupNorm(C, C)."""
    make = {"none": None, "batch": nn.BatchNorm2d, "layer": lambda c: nn.GroupNorm(1, c),
            "group": lambda c: nn.GroupNorm(groups, c), "instance": lambda c: nn.GroupNorm(c, c)}[norm]
    layers = [nn.Unflatten(1, (1, 8, 8))]
    for conv in (nn.Conv2d(1, 16, 3, padding=1), nn.Conv2d(16, 32, 3, stride=2, padding=1),
                 nn.Conv2d(32, 32, 3, padding=1)):
        layers += [conv] + ([make(conv.out_channels)] if make else []) + [nn.ReLU()]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


RESMLP = {"blocks": 2, "expansion": 4, "dropout": 0.1}
RESMLP_ARGS = ["--blocks", str(RESMLP["blocks"]), "--expansion", str(RESMLP["expansion"]),
               "--dropout", str(RESMLP["dropout"])]


def res_mlp(arch, norm, width=WIDTH):
    """digits --arch resmlp-pre|resmlp-post: a stem Linear, the blocks, (pre: a final norm), the head."""
    block = PreNormBlock if arch == "resmlp-pre" else PostNormBlock
    layers = [nn.Linear(64, width)]
    layers += [block(width, RESMLP["expansion"], norm, "gelu", RESMLP["dropout"]) for _ in range(RESMLP["blocks"])]
    layers += [BLOCK_NORMS[norm](width)] if arch == "resmlp-pre" else []
    return nn.Sequential(*layers, nn.Linear(width, 10))


def without_dropout(model):
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    return model


class Model:
    """One arch and norm: how PyTorch builds it and the digits options that build the same."""

    def __init__(self, arch, norm):
        self.arch, self.norm = arch, norm
        residual = arch.startswith("resmlp")
        self.args = ["--arch", arch, "--norm", norm] + (RESMLP_ARGS if residual else [])
        self.replay_args = self.args[:-1] + ["0"] if residual else self.args  # --dropout 0
        self.label = f"{arch}/{norm}"

    def build(self):
        if self.arch == "cnn":
            return cnn(self.norm)
        return deep_net(self.norm) if self.arch == "mlp" else res_mlp(self.arch, self.norm)


def digits(binary, *args):
    done = subprocess.run([binary, "--quiet", "--seeds", "0", *args], capture_output=True, text=True)
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


def minidl_to_torch(binary, spec, data, work):
    X_train, X_val, y_train, y_val = data
    norm = spec.norm
    save, summary = os.path.join(work, "saved"), os.path.join(work, f"summary_{norm}.json")
    digits(binary, *spec.args, "--epochs", "1", "--save", save, "--summary", summary)
    state = load_safetensors(os.path.join(save, f"{norm}.safetensors"))
    model = spec.build()
    model.load_state_dict(state, strict=True)  # raises on a missing, unexpected or misshapen entry
    for name, value in model.state_dict().items():
        check(value.dtype == state[name].dtype, f"{name}: dtype {state[name].dtype}, PyTorch has {value.dtype}")
    model.eval()
    with torch.no_grad():
        logits = model(X_val)
        val_loss = nn.functional.cross_entropy(logits, y_val).item()
        accuracy = (logits.argmax(1) == y_val).float().mean().item()
    with open(summary) as f:
        run = json.load(f)["runs"][0]
    check(abs(run["val_loss"] - val_loss) < 1e-4, f"{norm}: val loss digits {run['val_loss']} vs PyTorch {val_loss}")
    check(abs(run["val_accuracy"] - accuracy) < 1e-6, f"{norm}: val accuracy {run['val_accuracy']} vs {accuracy}")
    print(f"  minidl -> PyTorch  {spec.label:<18} strict load ok; val loss {val_loss:.6f} (digits {run['val_loss']:.6f})")


def torch_to_minidl(binary, spec, data, work):
    X_train, X_val, y_train, y_val = data
    norm = spec.norm
    torch.manual_seed(1)
    model = spec.build()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(3):  # move the running statistics off their defaults
        batch = torch.randint(0, len(X_train), (64,))
        opt.zero_grad()
        loss_fn(model(X_train[batch]), y_train[batch]).backward()
        opt.step()
    init = os.path.join(work, "init")
    os.makedirs(init, exist_ok=True)
    save_safetensors(os.path.join(init, f"{norm}.safetensors"), list(model.state_dict().items()))

    order = torch.randperm(len(X_train))
    order_file = os.path.join(work, "order.txt")
    with open(order_file, "w") as f:
        f.write(" ".join(str(int(i)) for i in order) + "\n")
    # The same epoch in PyTorch float64 (the reference) and in the float32 runs of the
    # ensemble (scripts/float32_horizon.py), all from the same weights: the horizon is how many
    # steps no float32 summation order moves by more than TOLERANCE / 4. The replay compares
    # losses step by step: no dropout masks on either side (digits --dropout 0).
    state = model.state_dict()
    batches = [order[start:start + 64] for start in range(0, len(order), 64)]  # the batches digits will take
    build = lambda: without_dropout(spec.build())  # noqa: E731
    losses64 = horizon_rule.replay(build, state, batches, X_train, y_train, dtype=torch.float64)
    ensemble = horizon_rule.float32_ensemble(build, state, batches, X_train, y_train)
    steps = horizon_rule.horizon(losses64, ensemble)

    curves = os.path.join(work, f"curves_{norm}.csv")
    digits(binary, *spec.replay_args, "--epochs", "1", "--init-from", init, "--batch-order", order_file, "--curves", curves)
    ours = read_curve(curves, norm)
    check(len(ours) == len(losses64), f"{norm}: digits took {len(ours)} steps, PyTorch {len(losses64)}")
    # The first step shows the loaded weights are PyTorch's, to rounding; over the horizon,
    # minidl stays within TOLERANCE of float64 (four times the ensemble's farthest member).
    check(abs(ours[0] - ensemble[0][0]) < 1e-5, f"{norm}: first step loss digits {ours[0]} vs PyTorch {ensemble[0][0]}")
    check(steps >= 1, f"{norm}: PyTorch's float32 runs leave float64 by more than {horizon_rule.ENSEMBLE_LIMIT} "
          "at the first step")
    for step, (a, b) in enumerate(zip(ours[:steps], losses64[:steps]), start=1):
        check(abs(a - b) <= horizon_rule.TOLERANCE,
              f"{spec.label}: step {step} loss digits {a} vs PyTorch float64 {b}, more than {horizon_rule.TOLERANCE} "
              f"apart within the {steps} steps where PyTorch's float32 ensemble stays within "
              f"{horizon_rule.ENSEMBLE_LIMIT} of float64")
    worst = max((abs(a - b) for a, b in zip(ours[:steps], losses64[:steps])), default=0.0)
    print(f"  PyTorch -> minidl  {spec.label:<18} strict load ok; the first {steps} of {len(ours)} step losses "
          f"(PyTorch float32 ensemble within {horizon_rule.spread(losses64, ensemble, steps):.1e} of float64 there) "
          f"within {worst:.1e} of float64")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--digits", default=os.path.join(REPO, "build", "apps", "digits", "digits"))
    parser.add_argument("--norm", default=None, help="default: every norm the arch takes")
    parser.add_argument("--arch", default="mlp,resmlp-pre,resmlp-post")
    args = parser.parse_args()
    if not os.access(args.digits, os.X_OK):
        sys.exit(f"{args.digits}: no digits program there (build it, or pass --digits PATH)")
    torch.set_num_threads(1)
    data = lesson.load_digits_split(os.path.join(REPO, "data"))
    with tempfile.TemporaryDirectory() as work:
        for arch in args.arch.split(","):
            norms = NORMS.get(arch, list(BLOCK_NORMS))
            for norm in args.norm.split(",") if args.norm else norms:
                minidl_to_torch(args.digits, Model(arch, norm), data, work)
                torch_to_minidl(args.digits, Model(arch, norm), data, work)
    print("checkpoints move between minidl and PyTorch both ways")


if __name__ == "__main__":
    main()
