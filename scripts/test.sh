#!/usr/bin/env bash
# The README's test command: set-up (missing Debian packages, configure, build; see
# scripts/setup.sh), then every test through ctest, then the tests whose figures depend on
# OpenBLAS's kernels once more under each other kernel this CPU can run. Extra arguments go
# to ctest alone (and skip the second part), e.g.
#   bash scripts/test.sh -R norm
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MINIDL_BUILD_DIR:-$repo/build}"
bash "$repo/scripts/setup.sh"
ctest --test-dir "$build_dir" --output-on-failure -j2 "$@"
(($# == 0)) || exit 0

# OpenBLAS picks its sgemm kernel by CPU at run time and each rounds differently: a test that
# holds only with this machine's kernel would fail on another. These tags compare against
# PyTorch's figures, across thread counts, or against double-precision references.
kernel_tags="[pytorch],[determinism],[threads],[norm],[lesson],[fixtures],[gemm]"
core_types=()
grep -qw avx2 /proc/cpuinfo && core_types+=(Haswell)
grep -qw avx512f /proc/cpuinfo && core_types+=(SkylakeX)
core_types+=(Sandybridge)  # AVX without FMA: runs on every x86-64 CPU this project targets
for core_type in "${core_types[@]}"; do
  echo "test.sh: the kernel-sensitive tests again with OPENBLAS_CORETYPE=$core_type"
  OPENBLAS_CORETYPE="$core_type" "$build_dir/tests/minidl_tests" "$kernel_tags"
done
