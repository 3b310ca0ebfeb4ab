#!/usr/bin/env bash
# The benchmark programs refuse bad usage as digits and lab do: one line on stderr naming the
# program and what was wrong, and exit code 2 (a failure while running: 1); never an uncaught
# exception. tests/CMakeLists.txt runs this with the directory of the built benchmarks and,
# where MPI was found, the mpirun command line for bench_distributed.
#   tests/bench_usage.sh BENCH_DIR [MPIRUN ARGS...]
set -uo pipefail
dir="$1"
shift
mpirun=("$@")
failures=0

# expect CODE PATTERN COMMAND...: COMMAND exits with CODE and its stderr matches the glob PATTERN.
expect() {
  local code="$1" pattern="$2"
  shift 2
  local err status
  err="$(timeout 120 "$@" 2>&1 >/dev/null)"
  status=$?
  if [[ $status -ne $code || $err != $pattern ]]; then
    printf 'FAIL: %s\n  exit %s (expected %s), stderr: %s\n  expected to match: %s\n' "$*" "$status" "$code" "$err" \
      "$pattern"
    failures=$((failures + 1))
  else
    printf 'ok: %s -> %s\n' "$*" "$code"
  fi
}

for b in bench_lesson bench_lesson_by_hand bench_norm bench_conv bench_tanh bench_wide; do
  expect 2 "$b: Option *bogus* does not exist (see $b --help)" "$dir/$b" --bogus
done
for b in bench_lesson bench_lesson_by_hand bench_norm bench_conv bench_tanh; do
  expect 2 "$b: --repeats must be at least 1, got 0 (see $b --help)" "$dir/$b" --repeats 0
done
expect 2 "bench_lesson: Argument *two* failed to parse (see bench_lesson --help)" \
  "$dir/bench_lesson" --threads two
expect 2 "bench_lesson: --batch-size must be at least 1, got -3 (see bench_lesson --help)" \
  "$dir/bench_lesson" --batch-size -3
expect 2 "bench_lesson: unknown norm \"bogus\": choose from none, *" "$dir/bench_lesson" --norm bogus
expect 2 "bench_lesson: the lesson's MLP has none, batch and layer (see bench_lesson --help)" \
  "$dir/bench_lesson" --norm group --repeats 1
expect 2 "bench_lesson: */missing/digits.csv: cannot open the file*" "$dir/bench_lesson" --data "$dir/missing"
expect 2 "bench_lesson_by_hand: --norm: the hand-written lesson has none, batch and layer, got \"rms\"*" \
  "$dir/bench_lesson_by_hand" --norm none,rms
expect 2 "bench_lesson_by_hand: --batch-size must be at least 1, got 0 (see bench_lesson_by_hand --help)" \
  "$dir/bench_lesson_by_hand" --batch-size 0
expect 2 "bench_wide: --steps must be at least 1, got 0 (see bench_wide --help)" "$dir/bench_wide" --steps 0
expect 2 "bench_wide: --threads must list counts of at least 1, got 0 (see bench_wide --help)" \
  "$dir/bench_wide" --threads 1,0
expect 2 "bench_conv: --what must be layer, cnn, tiny or paths, got bogus (see bench_conv --help)" \
  "$dir/bench_conv" --what bogus
expect 2 "bench_conv: unknown norm \"rms\": choose from none, batch, layer, group (see bench_conv --help)" \
  "$dir/bench_conv" --what cnn --norm rms
expect 2 "bench_norm: --shapes: expected dims like 256x64x8x8, got '3xq' (see bench_norm --help)" \
  "$dir/bench_norm" --shapes 3xq
expect 2 "sgemm_lesson: usage: sgemm_lesson LOG \[repeats\] (see sgemm_lesson --help)" "$dir/sgemm_lesson"
expect 2 "sgemm_lesson: repeats: expected a whole number, got \"many\" (see sgemm_lesson --help)" \
  "$dir/sgemm_lesson" "$dir/missing.log" many
expect 1 "sgemm_lesson: gemm log: cannot read */missing.log" "$dir/sgemm_lesson" "$dir/missing.log"
if [[ -x $dir/torch_lesson ]]; then
  expect 2 "torch_lesson: unknown option --what (the options: *" "$dir/torch_lesson" --what 1
  expect 2 "torch_lesson: --threads must be at least 1, got 0 (see torch_lesson --help)" \
    "$dir/torch_lesson" --threads 0
  expect 2 "torch_lesson: --norm lists none, batch or layer, got bogus*" "$dir/torch_lesson" --norm bogus
fi
if [[ -x $dir/torch_charlm ]]; then
  expect 2 "torch_charlm: Option *bogus* does not exist (see torch_charlm --help)" "$dir/torch_charlm" --bogus
  expect 2 "torch_charlm: --steps must be at least 1, got 0 (see torch_charlm --help)" "$dir/torch_charlm" --steps 0
  expect 2 "torch_charlm: --heads 3 does not divide --width 64 (see torch_charlm --help)" "$dir/torch_charlm" --heads 3
  expect 2 "torch_charlm: cannot read */missing/words.txt (--data names the directory of words.txt)*" \
    "$dir/torch_charlm" --data "$dir/missing"
fi
if [[ -f $dir/libgemm_shim.so ]]; then  # the shim reports at exit and leaves the exit code alone
  expect 0 "gemm_shim: MINIDL_GEMM_LOG is not set: 0 sgemm calls not written" \
    env -u MINIDL_GEMM_LOG LD_PRELOAD="$dir/libgemm_shim.so" "$dir/sgemm_lesson" --help
  expect 0 "gemm_shim: gemm log: cannot write */missing/calls.gemm" \
    env MINIDL_GEMM_LOG="$dir/missing/calls.gemm" LD_PRELOAD="$dir/libgemm_shim.so" "$dir/sgemm_lesson" --help
fi
if [[ ${#mpirun[@]} -gt 0 && -x $dir/bench_distributed ]]; then
  b=("${mpirun[@]}" -np 2 "$dir/bench_distributed")
  expect 2 "*bench_distributed: rank 0 of 2: error: Option *bogus* does not exist (see bench_distributed --help)*" \
    "${b[@]}" --bogus
  expect 2 "*bench_distributed: rank 1 of 2: error: --batch must be a multiple of the 2 ranks, got 7*" \
    "${b[@]}" --batch 7
  expect 2 "*error: --steps: expected a whole number, got \"x\"*" "${b[@]}" --steps x
  expect 2 "*error: --norm must be none, batch, sync or all, got xx*" "${b[@]}" --norm xx
fi

# bench_all.sh answers --help and a bad --what before it configures or builds anything.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
expect 0 "" bash "$repo/bench/bench_all.sh" --help
expect 2 "bench_all.sh: --what must be all, charlm or lesson, got bogus" bash "$repo/bench/bench_all.sh" --what bogus
expect 2 "bench_all.sh: --build needs a directory" bash "$repo/bench/bench_all.sh" --build

if ((failures > 0)); then
  echo "bench_usage.sh: $failures failed"
  exit 1
fi
echo "bench_usage.sh: all passed"
