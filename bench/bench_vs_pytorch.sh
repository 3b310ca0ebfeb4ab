#!/usr/bin/env bash
# The lesson in minidl and in PyTorch (Debian's python3-torch), one thread each, in one go:
# train + evaluate times and their ratio, then each whole process under /usr/bin/time -v
# (wall and peak RSS), then the norm layers on both sides.
#   bench/bench_vs_pytorch.sh [build dir, default build] [repeats, default 5]
# Needs the programs built with the benchmarks on (the default): cmake --build build --target digits bench_lesson bench_norm
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
repeats=${2:-5}
python=/usr/bin/python3  # Debian's, with torch (not a pyenv python3 on PATH)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

echo "== $(lscpu | sed -n 's/^Model name: *//p'), $(nproc --all) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== the lesson (3 runs: train + evaluate), 1 thread, best of $repeats"
ours=$("$build/bench/bench_lesson" --threads 1 --repeats "$repeats")
echo "$ours"
theirs=$("$python" "$root/bench/bench_pytorch.py" lesson --repeats "$repeats")
echo "$theirs"
minidl=$(awk '$1 == "lesson" {print $3, $13}' <<< "$ours")  # wall ms, cpu ms
torch=$(awk '{print $3, $9}' <<< "$theirs")
echo "$minidl $torch" | awk '{printf "PyTorch / minidl: wall %.2fx, cpu %.2fx\n", $3 / $1, $4 / $2}'

peak() {  # runs "$@" under /usr/bin/time -v; prints wall seconds and peak RSS
  /usr/bin/time -v "$@" 2> /tmp/minidl_bench_time.$$ > /dev/null
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = t[n] + (n > 1 ? 60 * t[n - 1] : 0)}
              /Maximum resident set size/ {rss = $2}
              END {printf "wall %.3f s, peak RSS %.1f MiB\n", s, rss / 1024}' /tmp/minidl_bench_time.$$
  rm -f /tmp/minidl_bench_time.$$
}
echo "== whole processes (the lesson's three runs)"
echo "minidl digits --threads 1:           $(peak "$build/apps/digits/digits" --threads 1 --quiet)"
echo "minidl digits (runs on all cores):   $(peak env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS "$build/apps/digits/digits" --quiet)"
echo "PyTorch (python3 + torch, 1 thread): $(peak "$python" "$root/bench/bench_pytorch.py" process)"

echo "== norm layers, forward + backward, 1 thread"
"$build/bench/bench_norm" --threads 1 --repeats "$repeats"
"$python" "$root/bench/bench_pytorch.py" norm --repeats "$repeats"
