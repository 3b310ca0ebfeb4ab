#!/usr/bin/env bash
# Builds the libFuzzer targets (clang++, ASan + UBSan) into build-fuzz and fuzzes each file
# reader for a bounded time, starting from its seed corpus in tests/fuzz/corpus/<target>.
#
#   scripts/fuzz.sh            # 60 s per target
#   scripts/fuzz.sh 600        # 10 min per target
#   scripts/fuzz.sh 0          # no fuzzing: run each target once over its corpus (CI)
#   FUZZ_TARGETS="safetensors" scripts/fuzz.sh 300    # only some targets
#
# New inputs that reach new code go to build-fuzz/corpus/<target> (not committed; copy the
# interesting small ones into tests/fuzz/corpus/<target>). A crash stops the run and leaves
# build-fuzz/crash-<target>-*; turn it into a regression test (tests/test_regressions.cpp,
# input under tests/regressions/) before fixing it. Exit status: 0 when no target failed.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets="${FUZZ_TARGETS:-digits_csv split_indices batch_order safetensors}"
jobs="${FUZZ_BUILD_JOBS:-2}"

# -O1, the level libFuzzer's documentation builds with: the JSON reader (io/safetensors.cpp)
# compiles in a quarter less CPU time than at RelWithDebInfo's -O2.
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" \
  -DMINIDL_BUILD_FUZZERS=ON -DMINIDL_BUILD_TESTS=OFF -DMINIDL_BUILD_APPS=OFF -DMINIDL_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target $(printf 'fuzz_%s ' $targets)

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=0
for target in $targets; do
  seeds="$root/tests/fuzz/corpus/$target"
  if [[ "$seconds" == 0 ]]; then
    echo "== fuzz_$target: the seed corpus once"
    args=(-runs=0 "$seeds")
  else
    echo "== fuzz_$target: ${seconds}s"
    found="$build/corpus/$target"
    mkdir -p "$found"
    args=(-max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$build/crash-$target-" "$found" "$seeds")
  fi
  if ! "$build/tests/fuzz/fuzz_$target" "${args[@]}"; then
    echo "!! fuzz_$target failed (see the report above; the input is under $build/crash-$target-*)" >&2
    failed=1
  fi
done
exit "$failed"
