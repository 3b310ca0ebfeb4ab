#!/usr/bin/env bash
# Runs the digits demo once under valgrind's memcheck: no invalid read or write, no use of
# uninitialised memory, no leak. Exit status 0 when clean.
#
#   scripts/valgrind_demo.sh                 # uses build/examples/digits/digits
#   BUILD_DIR=build-debug scripts/valgrind_demo.sh
#
# One epoch and one thread keep it to a minute or two (valgrind runs ~50x slower). The only
# suppressions (scripts/valgrind.supp) are for the runtimes' own thread pools: libgomp's and
# OpenBLAS's worker threads and their thread-local buffers are created once and kept for the
# life of the process by design, which memcheck reports as "possibly lost".
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
digits="$build/examples/digits/digits"
[[ -x "$digits" ]] || { echo "valgrind_demo: build $digits first (cmake --build $build --target digits)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
valgrind --tool=memcheck --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect,possible \
  --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes \
  --suppressions="$root/scripts/valgrind.supp" \
  "$digits" --epochs 1 --threads 1 --curves "$out/curves.csv" --summary "$out/summary.json" --save "$out/save" \
  "$@"
echo "valgrind_demo: memcheck clean"
