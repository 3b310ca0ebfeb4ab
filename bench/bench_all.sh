#!/usr/bin/env bash
# Every benchmark figure side by side with its floor, ratio, target and whether it is met,
# and the machine (CPU, OpenBLAS core type). Builds what it needs first (benchmarks on).
#   bash bench/bench_all.sh [--build DIR] [--repeats N] [--quick] [--markdown]
#   OPENBLAS_CORETYPE=Haswell bash bench/bench_all.sh   # another OpenBLAS kernel
# --markdown prints the table as docs/benchmarks.md holds it. Needs Debian's python3-torch
# for the PyTorch (Python) columns and libtorch-dev for the C++ frontend's (torch_lesson).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMINIDL_BUILD_BENCHMARKS=ON "${launcher[@]}" > /dev/null
targets=(bench_lesson bench_lesson_by_hand bench_norm bench_wide bench_conv sgemm_lesson digits)
cmake --build "$build" --target help | grep -w bench_distributed > /dev/null && targets+=(bench_distributed)  # when MPI was found
cmake --build "$build" --target help | grep -w torch_lesson > /dev/null && targets+=(torch_lesson)  # when Torch was found
cmake --build "$build" -j2 --target "${targets[@]}" > /dev/null
exec /usr/bin/python3 "$root/bench/bench_all.py" --build "$build" "${args[@]}"
