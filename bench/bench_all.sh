#!/usr/bin/env bash
# Every benchmark figure side by side with its floor and ratio, the current targets with
# met / NOT met, and the machine (CPU, OpenBLAS core type). Builds what it needs first
# (benchmarks on).
#   bash bench/bench_all.sh [--build DIR] [--repeats N] [--quick] [--markdown] [--what all|charlm|lesson]
#   OPENBLAS_CORETYPE=Haswell bash bench/bench_all.sh   # another OpenBLAS kernel
# --markdown prints the table as docs/benchmarks.md holds it; --help lists the options and
# the targets without building. Needs Debian's python3-torch for the PyTorch (Python)
# columns and libtorch-dev for the C++ frontend's (torch_lesson, torch_charlm).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
args=()
what=all
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) exec /usr/bin/python3 "$root/bench/bench_all.py" --help ;;
    --build)
      [[ $# -ge 2 ]] || { echo "bench_all.sh: --build needs a directory" >&2; exit 2; }
      build=$2; shift 2 ;;
    --what)
      [[ $# -ge 2 ]] || { echo "bench_all.sh: --what needs all, charlm or lesson" >&2; exit 2; }
      what=$2; args+=("$1" "$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
case $what in
  all | charlm | lesson) ;;
  *) echo "bench_all.sh: --what must be all, charlm or lesson, got $what" >&2; exit 2 ;;
esac
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMINIDL_BUILD_BENCHMARKS=ON "${launcher[@]}" > /dev/null
found() { cmake --build "$build" --target help | grep -w "$1" > /dev/null; }
targets=(sgemm_lesson)
case $what in
  charlm) targets+=(gemm_shim charlm) ;;
  lesson) targets+=(bench_lesson digits) ;;
  all) targets+=(gemm_shim charlm bench_lesson bench_lesson_by_hand bench_norm bench_wide bench_conv digits) ;;
esac
if [[ $what != lesson ]]; then
  found torch_charlm && targets+=(torch_charlm)  # when Torch was found
fi
if [[ $what != charlm ]]; then
  found torch_lesson && targets+=(torch_lesson)
fi
if [[ $what == all ]]; then
  found bench_distributed && targets+=(bench_distributed)  # when MPI was found
fi
cmake --build "$build" -j2 --target "${targets[@]}" > /dev/null
exec /usr/bin/python3 "$root/bench/bench_all.py" --build "$build" "${args[@]}"
