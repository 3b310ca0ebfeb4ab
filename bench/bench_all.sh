#!/usr/bin/env bash
# Every benchmark figure side by side with its floor, ratio, target and whether it is met,
# and the machine (CPU, OpenBLAS core type). Builds what it needs first (benchmarks on).
#   bash bench/bench_all.sh [--build DIR] [--repeats N] [--quick] [--markdown] [--what all|charlm]
#   OPENBLAS_CORETYPE=Haswell bash bench/bench_all.sh   # another OpenBLAS kernel
# --markdown prints the table as docs/benchmarks.md holds it. Needs Debian's python3-torch
# for the PyTorch (Python) columns and libtorch-dev for the C++ frontend's (torch_lesson,
# torch_charlm).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
args=()
what=all
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --what) what=$2; args+=("$1" "$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMINIDL_BUILD_BENCHMARKS=ON "${launcher[@]}" > /dev/null
targets=(sgemm_lesson gemm_shim charlm)  # charlm's rows (--what charlm)
[[ $what == charlm ]] || targets+=(bench_lesson bench_lesson_by_hand bench_norm bench_wide bench_conv digits)
found() { cmake --build "$build" --target help | grep -w "$1" > /dev/null; }
found torch_charlm && targets+=(torch_charlm)  # when Torch was found
if [[ $what != charlm ]]; then
  found bench_distributed && targets+=(bench_distributed)  # when MPI was found
  found torch_lesson && targets+=(torch_lesson)
fi
cmake --build "$build" -j2 --target "${targets[@]}" > /dev/null
exec /usr/bin/python3 "$root/bench/bench_all.py" --build "$build" "${args[@]}"
