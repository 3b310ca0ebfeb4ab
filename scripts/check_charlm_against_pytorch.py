#!/usr/bin/python3
"""Replays minidl's `charlm` against the same model in PyTorch, and moves checkpoints both ways.

Run with Debian's python3-torch (PyTorch 1.13), after building the charlm program:
    /usr/bin/python3 scripts/check_charlm_against_pytorch.py [--charlm build/apps/charlm/charlm]
        [--norm layer,rms,batch,batch-masked,none,dyt] [--position pre,post] [--steps 20]

For each norm and position (scripts/charlm_model.py builds the model):
  PyTorch -> minidl  PyTorch trains the model a few steps (BatchNorm's running statistics off their
                     defaults) and saves it; `charlm --init-from` starts from it and takes --steps
                     AdamW steps in a batch order written here. Its first step loss matches
                     PyTorch float32's to 1e-5, and every step loss is within 1e-4 of PyTorch
                     float64's over the steps where no float32 run of PyTorch's ensemble leaves
                     float64 by more than 2.5e-5 (the rule of scripts/float32_horizon.py: here the
                     ensemble is the plain run, the words of each batch reordered, and initial
                     weights nudged by about one ulp).
  minidl -> PyTorch  `charlm --save` writes the trained model; PyTorch loads it with strict=True and
                     gives, in eval mode, the validation loss charlm's --summary reports (1e-4).
Exits 1 naming the first mismatch.
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

import charlm_model as cm  # noqa: E402
import float32_horizon as horizon_rule  # noqa: E402
from fixtures.common import REPO, load_safetensors, save_safetensors  # noqa: E402

BATCH = 32
WARM_STEPS = 3  # PyTorch's steps before the saved state, so running statistics have moved


def check(condition, message):
    if not condition:
        sys.exit("MISMATCH: " + message)


def charlm(binary, *args):
    # One thread, as PyTorch here: ctest runs the norms' tests side by side on the cores.
    done = subprocess.run([binary, "--quiet", "--seeds", "0", "--threads", "1", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"charlm {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def run_name(config):
    return f"{config.norm}-{config.position}"


def replay(config, state, batches, train, dtype=torch.float32):
    """The step losses of makemore's AdamW from `state` over `batches` (lists of word indices)."""
    model = cm.CharLM(config).to(dtype)
    model.load_state_dict(state)
    model.train()
    opt, losses = cm.adamw(model), []
    for batch in batches:
        x, y = cm.make_batch([train[i] for i in batch])
        opt.zero_grad()
        loss = cm.loss_of(model, x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def float32_ensemble(config, state, batches, train):
    runs = [replay(config, state, batches, train)]
    for seed in horizon_rule.ENSEMBLE_SEEDS:
        generator = torch.Generator().manual_seed(seed)
        reordered = [[batch[i] for i in torch.randperm(len(batch), generator=generator).tolist()] for batch in batches]
        runs.append(replay(config, state, reordered, train))
    for seed in horizon_rule.NUDGE_SEEDS:
        runs.append(replay(config, horizon_rule.nudged(state, seed), batches, train))
    return runs


def warmed_model(config, train):
    torch.manual_seed(1)
    model = cm.CharLM(config)
    opt = cm.adamw(model)
    for _ in range(WARM_STEPS):
        x, y = cm.make_batch([train[i] for i in torch.randint(0, len(train), (BATCH,)).tolist()])
        opt.zero_grad()
        cm.loss_of(model, x, y).backward()
        opt.step()
    return model


def read_curve(path, run):
    with open(path) as f:
        next(f)
        return [float(row.split(",")[-1]) for row in f if row.startswith(run + ",")]  # run,seed,...,loss


def torch_to_minidl(binary, config, words, steps, work):
    train, _ = words
    name = run_name(config)
    state = warmed_model(config, train).state_dict()
    init = os.path.join(work, "init")
    os.makedirs(init, exist_ok=True)
    save_safetensors(os.path.join(init, f"{name}.safetensors"), list(state.items()))
    order = torch.randperm(len(train), generator=torch.Generator().manual_seed(2)).tolist()
    order_file = os.path.join(work, "order.txt")
    with open(order_file, "w") as f:
        f.write(" ".join(str(i) for i in order) + "\n")
    batches = cm.batches_of(order, BATCH)[:steps]

    losses64 = replay(config, state, batches, train, dtype=torch.float64)
    ensemble = float32_ensemble(config, state, batches, train)
    horizon = horizon_rule.horizon(losses64, ensemble)
    curves = os.path.join(work, f"curves_{name}.csv")
    charlm(binary, "--norm", config.norm, "--norm-position", config.position, "--steps", str(steps),
           "--init-from", init, "--batch-order", order_file, "--curves", curves)
    ours = read_curve(curves, name)
    check(len(ours) == steps, f"{name}: charlm took {len(ours)} steps, asked for {steps}")
    check(abs(ours[0] - ensemble[0][0]) < 1e-5, f"{name}: first step loss charlm {ours[0]} vs PyTorch {ensemble[0][0]}")
    check(horizon >= 1, f"{name}: PyTorch's float32 runs leave float64 by more than "
          f"{horizon_rule.ENSEMBLE_LIMIT} at the first step")
    for step, (a, b) in enumerate(zip(ours[:horizon], losses64[:horizon]), start=1):
        check(abs(a - b) <= horizon_rule.TOLERANCE,
              f"{name}: step {step} loss charlm {a} vs PyTorch float64 {b}, more than {horizon_rule.TOLERANCE} "
              f"apart within the {horizon} steps where PyTorch's float32 ensemble stays within "
              f"{horizon_rule.ENSEMBLE_LIMIT} of float64")
    worst = max((abs(a - b) for a, b in zip(ours[:horizon], losses64[:horizon])), default=0.0)
    print(f"  PyTorch -> minidl  {name:<18} strict load ok; the first {horizon} of {steps} step losses "
          f"(PyTorch float32 ensemble within {horizon_rule.spread(losses64, ensemble, horizon):.1e} of float64 "
          f"there) within {worst:.1e} of float64")


def minidl_to_torch(binary, config, words, steps, work):
    _, val = words
    name = run_name(config)
    save, summary = os.path.join(work, "saved"), os.path.join(work, f"summary_{name}.json")
    charlm(binary, "--norm", config.norm, "--norm-position", config.position, "--steps", str(steps),
           "--save", save, "--summary", summary)
    state = load_safetensors(os.path.join(save, f"{name}.safetensors"))
    model = cm.CharLM(config)
    model.load_state_dict(state, strict=True)  # raises on a missing, unexpected or misshapen entry
    loss = cm.val_loss(model, val)
    with open(summary) as f:
        reported = json.load(f)["runs"][0]["val_loss"]
    check(abs(reported - loss) < 1e-4, f"{name}: val loss charlm {reported} vs PyTorch {loss}")
    print(f"  minidl -> PyTorch  {name:<18} strict load ok; val loss {loss:.6f} (charlm {reported:.6f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--charlm", default=os.path.join(REPO, "build", "apps", "charlm", "charlm"))
    parser.add_argument("--norm", default=",".join(cm.NORMS))
    parser.add_argument("--position", default="pre,post")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    if not os.access(args.charlm, os.X_OK):
        sys.exit(f"{args.charlm}: no charlm program there (build it, or pass --charlm PATH)")
    torch.set_num_threads(1)
    words = cm.load_words()
    with tempfile.TemporaryDirectory() as work:
        for norm in args.norm.split(","):
            for position in args.position.split(","):
                config = cm.Config(norm=norm, position=position)
                torch_to_minidl(args.charlm, config, words, args.steps, work)
                minidl_to_torch(args.charlm, config, words, args.steps, work)
    print("charlm replays PyTorch's steps, and its checkpoints move both ways")


if __name__ == "__main__":
    main()
