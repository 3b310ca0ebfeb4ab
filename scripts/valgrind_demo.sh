#!/usr/bin/env bash
# Runs the digits demo once under valgrind's memcheck: no invalid read or write, no use of
# uninitialised memory, no leak. Exit status 0 when clean.
#
#   scripts/valgrind_demo.sh                 # builds build-valgrind/ and runs its digits
#   BUILD_DIR=build-debug scripts/valgrind_demo.sh
#
# valgrind 3.19 cannot run AVX-512 instructions, so the program it runs is built without
# -march=native (MINIDL_NATIVE_ARCH=OFF, in its own build directory) and OpenBLAS is held to
# its Haswell kernels (OPENBLAS_CORETYPE=Haswell, AVX2) even on an AVX-512 CPU.
#
# One epoch and one thread keep it to a minute or two (valgrind runs ~50x slower). The only
# suppressions (scripts/valgrind.supp) are for the runtimes' own thread pools: libgomp's and
# OpenBLAS's worker threads and their thread-local buffers are created once and kept for the
# life of the process by design, which memcheck reports as "possibly lost".
# MINIDL_NO_MEMORY_CACHING=1 turns minidl's own caches off (tensor buffers, tensor headers,
# graph nodes), so every freed block goes back to malloc and memcheck sees a use after free.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-valgrind}"
command -v valgrind >/dev/null || { echo "valgrind_demo: needs valgrind (apt-get install -y valgrind)" >&2; exit 2; }
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMINIDL_NATIVE_ARCH=OFF -DMINIDL_BUILD_TESTS=OFF \
  -DMINIDL_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target digits >/dev/null
digits="$build/apps/digits/digits"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell MINIDL_NO_MEMORY_CACHING=1
valgrind --tool=memcheck --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect,possible \
  --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
  --suppressions="$root/scripts/valgrind.supp" \
  "$digits" --epochs 1 --seeds 0 --threads 1 --curves "$out/curves.csv" --summary "$out/summary.json" --save "$out/save" \
  "$@"
echo "valgrind_demo: memcheck clean"
