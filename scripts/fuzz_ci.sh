#!/usr/bin/env bash
# CI's fuzz step: builds the libFuzzer targets (scripts/fuzz.sh), runs each over its seed
# corpus and the regression inputs the fuzzers once found (tests/regressions/<target>_*),
# then fuzzes each briefly. Needs clang++ and libclang-rt-dev.
#
#   scripts/fuzz_ci.sh        # corpus + regressions, then 10 s per target
#   scripts/fuzz_ci.sh 0      # corpus + regressions only
set -euo pipefail

seconds="${1:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"

"$root/scripts/fuzz.sh" 0
shopt -s nullglob
for target in digits_csv split_indices batch_order safetensors; do
  inputs=("$root"/tests/regressions/"$target"_*)
  if ((${#inputs[@]})); then
    echo "== fuzz_$target: ${#inputs[@]} regression input(s)"
    "$build/tests/fuzz/fuzz_$target" "${inputs[@]}"
  fi
done
if [[ "$seconds" != 0 ]]; then
  # Found inputs go to a throwaway corpus so CI never grows the committed one.
  FUZZ_BUILD_DIR="$build" "$root/scripts/fuzz.sh" "$seconds"
fi
