#!/usr/bin/env bash
# Conv2d and the digits' CNN in minidl and in PyTorch (Debian's python3-torch), in turn:
# each round runs every measurement once on both sides, and the minimum over rounds is kept
# (other processes load the machine; a minimum is the figure they disturbed least).
#   bench/bench_conv_vs_pytorch.sh [build dir, default build] [rounds, default 3]
# Needs bench_conv built: cmake --build build --target bench_conv
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
rounds=${2:-3}
python=/usr/bin/python3
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(detected)}; $(lscpu | sed -n 's/^Model name: *//p'), $(nproc --all) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for threads in 1 2; do
    "$build/bench/bench_conv" --what layer --threads "$threads" --repeats 2 >> "$log"
    OMP_NUM_THREADS=$threads "$python" "$root/bench/bench_conv_pytorch.py" layer --threads "$threads" --repeats 2 >> "$log"
  done
  "$build/bench/bench_conv" --what cnn --norm none,batch,group --repeats 2 >> "$log"
  OMP_NUM_THREADS=1 "$python" "$root/bench/bench_conv_pytorch.py" cnn --norm none,batch,group --repeats 2 >> "$log"
done
"$build/bench/bench_conv" --what tiny --repeats 3
# Minima over rounds, then the ratios (CPU time: steadier than wall time on a loaded machine).
awk '
  /^layer threads/         {k = "minidl layer " $3; w = $5; c = $14; f = $17}
  /^pytorch layer threads/ {k = "pytorch layer " $4; w = $6; c = $10; f = ""}
  /^cnn /                  {k = "minidl cnn " $2; w = $4; c = $8; f = $11}
  /^pytorch cnn /          {k = "pytorch cnn " $3; w = $5; c = $9; f = ""}
  { if (!(k in cpu) || c < cpu[k]) cpu[k] = c; if (!(k in wall) || w < wall[k]) wall[k] = w;
    if (f != "" && (!(k in floor) || f < floor[k])) floor[k] = f }
  END {
    for (t = 1; t <= 2; t++) {
      m = "minidl layer " t; p = "pytorch layer " t
      printf "Conv2d (32, 64, 32, 32) 3x3 64->64 pad 1, fwd+bwd, %d thread(s): minidl cpu %.1f ms (sgemm floor %.1f ms, %.2fx), wall %.1f ms; PyTorch cpu %.1f ms, wall %.1f ms; PyTorch / minidl cpu %.2fx, wall %.2fx\n", t, cpu[m], floor[m], cpu[m] / floor[m], wall[m], cpu[p], wall[p], cpu[p] / cpu[m], wall[p] / wall[m]
    }
    split("none batch group", norms, " ")
    for (i = 1; i <= 3; i++) {
      m = "minidl cnn " norms[i]; p = "pytorch cnn " norms[i]
      printf "CNN training step, batch 64, norm %-5s 1 thread: minidl cpu %.0f us (sgemm floor %.0f us, %.2fx), wall %.0f us; PyTorch cpu %.0f us, wall %.0f us; PyTorch / minidl cpu %.2fx, wall %.2fx\n", norms[i], cpu[m], floor[m], cpu[m] / floor[m], wall[m], cpu[p], wall[p], cpu[p] / cpu[m], wall[p] / wall[m]
    }
  }' "$log"
