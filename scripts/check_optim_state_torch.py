#!/usr/bin/python3
"""Loads a minidl optimizer state file into torch.optim, continues training, and writes
PyTorch's state back in the same format (tests/test_optim_state_torch.cpp runs it).

Run with Debian's python3-torch (PyTorch 1.13):
    /usr/bin/python3 scripts/check_optim_state_torch.py --case DIR Adam [--case DIR2 SGD ...] --steps 3

Each case's DIR holds what the C++ side wrote:
  problem.safetensors  a.p0, b.p0, a.p1, b.p1 (the coefficients of
                       loss = sum(a * p * p) + sum(b * p) over p0 and p1) and p0, p1 (the
                       parameters' current values)
  minidl.safetensors   the optimizer's state (minidl/io/optimizer_state_file.hpp): tensors
                       state.<i>.<name>, metadata "optimizer" and "param_groups" (JSON)
This script builds torch.optim.<optimizer> over p0, p1 with a placeholder lr, takes the file
with load_state_dict (the options come from the file, as they do in PyTorch), takes --steps
steps on the loss, and writes
  torch_params.safetensors  p0, p1 after those steps
  torch.safetensors         optimizer.state_dict() in minidl's format
Exits 1 naming what does not fit.
"""

import argparse
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures.common import load_safetensors, save_safetensors  # noqa: E402

NAMES = ["p0", "p1"]


def read_metadata(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n)).get("__metadata__", {})


def read_state(path):
    """minidl's file -> (class name, PyTorch's state_dict)."""
    meta = read_metadata(path)
    groups = json.loads(meta["param_groups"])
    state = {}
    for name, value in load_safetensors(path).items():
        _, index, key = name.split(".", 2)
        state.setdefault(int(index), {})[key] = value
    return meta["optimizer"], {"state": state, "param_groups": groups}


def write_state(path, name, state_dict):
    tensors = []
    for index, entries in sorted(state_dict["state"].items()):
        for key, value in sorted(entries.items()):
            if value is not None:  # SGD without momentum keeps momentum_buffer None
                tensors.append((f"state.{index}.{key}", torch.as_tensor(value, dtype=torch.float32)))
    groups = json.dumps(state_dict["param_groups"])
    save_safetensors(path, tensors, {"optimizer": name, "param_groups": groups})


def continue_in_torch(directory, expected, steps):
    problem = load_safetensors(os.path.join(directory, "problem.safetensors"))
    params = [problem[k].clone().requires_grad_(True) for k in NAMES]
    name, state_dict = read_state(os.path.join(directory, "minidl.safetensors"))
    if name != expected:
        sys.exit(f"MISMATCH: the file holds {name}'s state, not {expected}'s")
    optimizer = getattr(torch.optim, name)(params, lr=123.0)
    optimizer.load_state_dict(state_dict)
    if optimizer.param_groups[0]["lr"] == 123.0:
        sys.exit("MISMATCH: the file's lr did not replace the placeholder")
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = sum((problem["a." + k] * p * p).sum() + (problem["b." + k] * p).sum() for k, p in zip(NAMES, params))
        loss.backward()
        optimizer.step()
    save_safetensors(os.path.join(directory, "torch_params.safetensors"), list(zip(NAMES, params)))
    write_state(os.path.join(directory, "torch.safetensors"), name, optimizer.state_dict())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", nargs=2, action="append", required=True, metavar=("DIR", "OPTIMIZER"),
                        help="a directory and the optimizer (SGD, Adam, AdamW) whose state it holds")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for directory, name in args.case:
        if name not in ("SGD", "Adam", "AdamW"):
            sys.exit(f"unknown optimizer {name} (expected SGD, Adam or AdamW)")
        continue_in_torch(directory, name, args.steps)


if __name__ == "__main__":
    main()
