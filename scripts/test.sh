#!/usr/bin/env bash
# The README's test command: set-up (missing Debian packages, configure, build; see
# scripts/setup.sh), then every ctest once under each OpenBLAS core type this CPU can run:
# Haswell (AVX2), SkylakeX (AVX-512) and Sandybridge (AVX without FMA). OpenBLAS picks its
# kernels by CPU at run time and each rounds differently, so a test that held only with this
# machine's kernels would fail on another CPU: each pass is the whole suite, the PyTorch
# cross-checks (ctest label `torch`) included. Extra arguments go to ctest alone, once, under
# OpenBLAS's own choice (and skip the rest), e.g.
#   bash scripts/test.sh -R norm
# The cross-checks need Debian's python3-torch, which set-up installs with the rest; where
# it is missing they are skipped, except in CI (CI=true or MINIDL_REQUIRE_TORCH=1), where that
# fails.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MINIDL_BUILD_DIR:-$repo/build}"
bash "$repo/scripts/setup.sh" --with-torch
# ctest -j2 runs two tests at once, each with two OpenMP threads on the two cores: a thread
# that spin-waits at a barrier holds the core its partner needs. Waiting threads sleep instead
# (the same threads and results; the test cases take a third less time, docs/build-time.md).
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

if (($# > 0)); then
  exec ctest --test-dir "$build_dir" --output-on-failure -j2 "$@"
fi

core_types=()
grep -qw avx2 /proc/cpuinfo && core_types+=(Haswell)
grep -qw avx512f /proc/cpuinfo && core_types+=(SkylakeX)
core_types+=(Sandybridge)  # runs on every x86-64 CPU this project targets

# The quick lab compares its verdicts across these passes: each pass runs it under its own
# core type (tests/lab_core_types.sh), so the verdicts of the earlier passes must be this run's.
rm -rf "$build_dir/tests/lab_quick"
ran=0 skipped=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for core_type in "${core_types[@]}"; do
  echo "test.sh: every test with OPENBLAS_CORETYPE=$core_type"
  start=$SECONDS
  OPENBLAS_CORETYPE="$core_type" ctest --test-dir "$build_dir" --output-on-failure -j2 | tee "$log"
  echo "test.sh: the pass under $core_type took $((SECONDS - start)) s"
  torch_tests="$(ctest --test-dir "$build_dir" -N -L torch | grep -oE 'Test +#[0-9]+: +[^ ]+' | awk '{print $3}')"
  for name in $torch_tests; do
    grep -qE "Test +#[0-9]+: $name \.+ +Passed" "$log" && ran=$((ran + 1))
    grep -qE "Test +#[0-9]+: $name \.+\*+Skipped" "$log" && skipped=$((skipped + 1))
  done
done
echo "PyTorch cross-checks: $ran ran, $skipped skipped (core types: ${core_types[*]})"
