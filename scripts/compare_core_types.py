#!/usr/bin/python3
"""How far the lesson's figures move between OpenBLAS kernels.

OpenBLAS picks its sgemm kernel by CPU at run time, and each kernel rounds differently. This
runs `digits` (the build's, by default over seeds 0-4 and all five norms) once under each
OPENBLAS_CORETYPE this CPU can run, then prints per norm the mean over seeds of each figure
under each kernel and the largest difference between two kernels. Standard library only.

  scripts/compare_core_types.py [--digits build/apps/digits/digits] [--core-types Haswell,SkylakeX]
                                [-- extra digits arguments]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = [("train_loss", "training loss"), ("val_loss", "validation loss"), ("val_accuracy", "val accuracy")]


def runnable_core_types():
    flags = open("/proc/cpuinfo").read().split()
    types = ["Prescott", "Sandybridge"]  # SSE3 and AVX: every x86-64 CPU this project targets runs them
    if "avx2" in flags:
        types.append("Haswell")
    if "avx512f" in flags:
        types.append("SkylakeX")
    return types


def means(digits, core_type, extra):
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "summary.json")
        env = dict(os.environ, OPENBLAS_CORETYPE=core_type)
        args = [digits, "--quiet", "--norm", "none,batch,layer,rms,group", "--summary", summary] + extra
        done = subprocess.run(args, env=env, stdout=subprocess.DEVNULL)
        if done.returncode not in (0, 1):
            sys.exit(f"compare_core_types.py: {' '.join(args)} exited {done.returncode}")
        with open(summary) as f:
            data = json.load(f)
    seeds = data["settings"]["seeds"]
    return seeds, {row["name"]: {k: (row[k] or {}).get("mean") for k, _ in FIGURES} for row in data["norms"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--digits", default=os.path.join(REPO, "build", "apps", "digits", "digits"))
    parser.add_argument("--core-types", help="comma list (default: those this CPU can run)")
    parser.add_argument("extra", nargs="*", help="more digits arguments (after --)")
    args = parser.parse_args()
    types = args.core_types.split(",") if args.core_types else runnable_core_types()
    results = {t: means(args.digits, t, args.extra) for t in types}
    seeds = results[types[0]][0]
    print(f"mean over seeds {seeds[0]}-{seeds[-1]} ({len(seeds)} seeds) under each OPENBLAS_CORETYPE; "
          "last column: the largest difference between two kernels")
    for key, label in FIGURES:
        print(f"\n{label:<18}" + "".join(f"{t:>13}" for t in types) + "    largest move")
        for norm in results[types[0]][1]:
            values = [results[t][1][norm][key] for t in types]
            finite = [v for v in values if v is not None]
            move = max(finite) - min(finite) if finite else float("nan")
            print(f"{norm:<18}" + "".join(f"{v:>13.4f}" if v is not None else f"{'-':>13}" for v in values) +
                  f"    {move:.4f}")


if __name__ == "__main__":
    main()
