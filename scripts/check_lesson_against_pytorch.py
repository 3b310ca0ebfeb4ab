#!/usr/bin/python3
"""Reproduces PyTorch's lesson runs with minidl's digits CLI and checks them in PyTorch.

  /usr/bin/python3 scripts/check_lesson_against_pytorch.py [--digits build/apps/digits/digits]

1. Runs `digits --init-from tests/fixtures/lesson/init --batch-order tests/fixtures/lesson/batch_order.txt`
   (PyTorch's initial weights and batch order, written by scripts/fixtures/lesson.py) with
   --curves, --summary and --save into a temporary folder.
2. Compares minidl's loss at every optimizer step with PyTorch float64's from the same weights in
   the same order (tests/fixtures/lesson/<run>_losses_float64.txt): within 1e-4 over the steps a
   float32 implementation can be held to (`compared_steps` in pytorch_results.json, see
   scripts/float32_horizon.py), and how far over all.
3. Loads each checkpoint minidl saved into the lesson's nn.Sequential (load_state_dict with
   strict=True), evaluates it in PyTorch ("minidl, in torch") and prints those figures beside
   the ones minidl reported and the ones PyTorch's own run reached.

Needs Debian's python3-torch (PyTorch 1.13). Exit code 1 when a compared step loss is more than
1e-4 from float64's, a checkpoint does not load, or PyTorch's figures for minidl's weights differ
from minidl's report (val accuracy by more than 1e-6, training loss by more than 1e-4).
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures.common import REPO, load_safetensors  # noqa: E402
from fixtures.lesson import LESSON_RUNS, deep_net, load_digits_split  # noqa: E402

LESSON = os.path.join(REPO, "tests", "fixtures", "lesson")
STEP_TOLERANCE = 1e-4  # over the compared steps, against float64


def run_digits(digits, out_dir, runs):
    command = [digits, "--seeds", "0", "--norm", ",".join(runs), "--init-from", os.path.join(LESSON, "init"),
               "--batch-order", os.path.join(LESSON, "batch_order.txt"), "--save", out_dir,
               "--curves", os.path.join(out_dir, "curves.csv"), "--summary", os.path.join(out_dir, "summary.json"),
               "--data", os.path.join(REPO, "data")]
    print("$", " ".join(command))
    subprocess.run(command, check=True)
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    curves = {}
    with open(os.path.join(out_dir, "curves.csv")) as f:
        for row in csv.DictReader(f):
            curves.setdefault(row["run"], []).append(float(row["loss"]))
    return summary, curves


def summary_of(summary, run):
    """The CLI's summary entry for a run, whether the JSON is a list or keyed by run."""
    entries = summary.get("runs", summary) if isinstance(summary, dict) else summary
    if isinstance(entries, dict):
        return entries[run]
    return next(e for e in entries if run in (e.get("run"), e.get("norm")))


def evaluate(model, X, y):
    model.eval()
    with torch.no_grad():
        out = model(X)
        return nn.CrossEntropyLoss()(out, y).item(), (out.argmax(1) == y).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--digits", default=os.path.join(REPO, "build", "apps", "digits", "digits"))
    parser.add_argument("--runs", default="none,batch,layer")
    args = parser.parse_args()
    torch.set_num_threads(1)
    runs = args.runs.split(",")
    X_train, X_val, y_train, y_val = load_digits_split(os.path.join(REPO, "data"))
    with open(os.path.join(LESSON, "pytorch_results.json")) as f:
        pytorch = json.load(f)["runs"]
    ok = True
    with tempfile.TemporaryDirectory() as out_dir:
        summary, curves = run_digits(args.digits, out_dir, runs)
        print()
        print(f"{'run':<17} {'step losses, max |minidl - float64|':<38} {'figures of':>17} {'train loss':>10} {'val acc':>8}")
        for run, name, norm in LESSON_RUNS:
            if run not in runs:
                continue
            with open(os.path.join(LESSON, f"{run}_losses_float64.txt")) as f:
                reference = [float(line) for line in f]
            mine = curves.get(run, [])
            diffs = [abs(a - b) for a, b in zip(mine, reference)]
            compared = pytorch[run]["compared_steps"]  # the float32 horizon (fixtures/lesson.py)
            steps = (f"first {compared}: {max(diffs[:compared]):.1e}, all {len(diffs)}: {max(diffs):.1e}"
                     if len(diffs) == len(reference) else f"{len(mine)} curve rows, PyTorch {len(reference)}")
            if len(diffs) != len(reference) or max(diffs[:compared]) > STEP_TOLERANCE:
                print(f"  MISMATCH: {run}: step losses {steps} from PyTorch float64, more than {STEP_TOLERANCE} "
                      f"within the first {compared}")
                ok = False
            model = deep_net(norm)
            model.load_state_dict({k: v for k, v in load_safetensors(os.path.join(out_dir, f"{run}.safetensors")).items()},
                                  strict=True)
            train_loss, _ = evaluate(model, X_train, y_train)
            _, val_acc = evaluate(model, X_val, y_val)
            reported = summary_of(summary, run)
            reported_acc = reported.get("val_accuracy")
            reported_loss = reported.get("train_loss")
            print(f"{name:<17} {steps:<38} {'minidl, reported':>17} {reported_loss:>10.6f} {reported_acc:>8.4f}")
            print(f"{'':<17} {'':<38} {'minidl, in torch':>17} {train_loss:>10.6f} {val_acc:>8.4f}")
            print(f"{'':<17} {'':<38} {'PyTorch own run':>17} {pytorch[run]['train_loss']:>10.6f} "
                  f"{pytorch[run]['val_accuracy']:>8.4f}")
            if reported_acc is None or abs(reported_acc - val_acc) > 1e-6 or abs(reported_loss - train_loss) > 1e-4:
                print(f"  MISMATCH: PyTorch gives training loss {train_loss}, val accuracy {val_acc} for minidl's "
                      f"{run} checkpoint; minidl reported {reported_loss}, {reported_acc}")
                ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
