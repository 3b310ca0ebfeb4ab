#!/usr/bin/python3
"""Writes PyTorch reference fixtures for minidl's tests into tests/fixtures/.

Run with Debian's python3-torch (PyTorch 1.13):   /usr/bin/python3 scripts/make_fixtures.py
Options: --only layers | lesson   (default: both), --out DIR (default: tests/fixtures),
--sensitivity (writes nothing: prints how far runs of the lesson that differ only by rounding
drift apart: float32 against float64, and against itself with some initial weights' last bit
flipped).

The cases live in the package scripts/fixtures/: common.py writes the files (its docstring
gives their layout), each area module writes its cases with cases(out), lesson.py the
lesson's runs. A new area is a module there with a cases(out) function, taking its helpers
from fixtures.common, and its name in AREAS. Every case seeds torch from its own name, so a
rerun on one machine gives byte-identical files (`diff -r` against a copy of the folder).
"""

import argparse
import importlib
import os

import torch

from fixtures import lesson
from fixtures.common import REPO

AREAS = ["ops", "layers", "norms", "conv", "optim", "sequence", "attention"]  # modules of scripts/fixtures/, each with cases(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["layers", "lesson"])
    parser.add_argument("--sensitivity", action="store_true",
                        help="write nothing; print how far float32 and float64 runs of the lesson drift apart")
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures"))
    parser.add_argument("--data", default=os.path.join(REPO, "data"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.sensitivity:
        lesson.lesson_sensitivity(args.data)
        return
    os.makedirs(args.out, exist_ok=True)
    if args.only != "lesson":
        for area in AREAS:
            importlib.import_module("fixtures." + area).cases(args.out)
    if args.only != "layers":
        lesson.lesson_fixtures(args.out, args.data)


if __name__ == "__main__":
    main()
