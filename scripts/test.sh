#!/usr/bin/env bash
# The README's test command: set-up (missing Debian packages, configure, build; see
# scripts/setup.sh), then every test through ctest, then the tests whose figures depend on
# OpenBLAS's kernels once more under each other kernel this CPU can run, and the PyTorch
# cross-checks (ctest label `torch`) under each of those kernels. Extra arguments go to ctest
# alone (and skip the rest), e.g.
#   bash scripts/test.sh -R norm
# The cross-checks need Debian's python3-torch, which set-up installs with the rest; where
# it is missing they are skipped, except in CI (CI=true or MINIDL_REQUIRE_TORCH=1), where that
# fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MINIDL_BUILD_DIR:-$repo/build}"
bash "$repo/scripts/setup.sh" --with-torch
if (($# > 0)); then
  exec ctest --test-dir "$build_dir" --output-on-failure -j2 "$@"
fi
ctest --test-dir "$build_dir" --output-on-failure -j2 -LE torch

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

# The PyTorch cross-checks, once under each core type (the machine's own is among them).
ran=0 skipped=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for core_type in "${core_types[@]}"; do
  echo "test.sh: the PyTorch cross-checks with OPENBLAS_CORETYPE=$core_type"
  OPENBLAS_CORETYPE="$core_type" ctest --test-dir "$build_dir" --output-on-failure -j2 -L torch | tee "$log"
  ran=$((ran + $(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' "$log" || true)))
  skipped=$((skipped + $(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)))
done
echo "PyTorch cross-checks: $ran ran, $skipped skipped (core types: ${core_types[*]})"
