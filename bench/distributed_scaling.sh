#!/bin/sh
# Data-parallel scaling of the wide net, interleaved: each round runs bench_distributed on
# 1 rank x 1 thread, 2 ranks x 1 thread and 1 rank x 2 threads, one after another, so the
# three see the same load of a shared machine; the ratios are taken within a round.
#   bench/distributed_scaling.sh build/bench/bench_distributed [rounds] [steps]
# Prints each round's examples per second per norm and configuration, the load average, and
# per norm the median over rounds of: 2 ranks / 1 rank, 2 ranks / (1 rank x 2 threads), and
# SyncBatchNorm's step time over local BatchNorm's (on 2 ranks).
set -eu
bench=$1
rounds=${2:-3}
steps=${3:-5}
mpirun=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for round in $(seq 1 "$rounds"); do
  echo "round $round: load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for config in "1 1" "2 1" "1 2"; do
    set -- $config
    $mpirun -np "$1" "$bench" --threads "$2" --steps "$steps" | while read -r line; do
      echo "  $line"
      # norm ranks threads examples/s ms/step
      echo "$line" | awk -v r="$round" '{m = ""; for (i = 1; i <= NF; ++i) { if ($i == "ranks") k = $(i + 1);
        if ($i == "threads/rank") t = $(i + 1); if ($i == "examples/s") e = $(i - 1);
        if ($i == "ms/step" && m == "") m = $(i - 1) }  # the wall figure, not the CPU one after it
        print r, $1, k, t, e, m}' >> "$out"
    done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# Per round ratios, then their median over rounds.
awk '
  { ex[$1 " " $2 " " $3 "x" $4] = $5; ms[$1 " " $2 " " $3 "x" $4] = $6; rounds[$1] = 1; norms[$2] = 1 }
  function median(list, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (list[j] < list[i]) { t = list[i]; list[i] = list[j]; list[j] = t }
    return n % 2 ? list[(n + 1) / 2] : (list[n / 2] + list[n / 2 + 1]) / 2
  }
  END {
    for (norm in norms) {
      n = 0
      for (r in rounds) {
        ++n
        scale[n] = ex[r " " norm " 2x1"] / ex[r " " norm " 1x1"]
        threads[n] = ex[r " " norm " 2x1"] / ex[r " " norm " 1x2"]
        if (norm == "SyncBatchNorm") sync[n] = ms[r " SyncBatchNorm 2x1"] / ms[r " BatchNorm1d 2x1"]
      }
      printf "%-13s median over %d rounds: 2 ranks / 1 rank %.2fx, 2 ranks / (1 rank x 2 threads) %.2fx\n", norm, n,
        median(scale, n), median(threads, n)
      if (norm == "SyncBatchNorm")
        printf "SyncBatchNorm over local BatchNorm1d on 2 ranks: %.2fx the step time (median over rounds)\n", median(sync, n)
    }
  }' "$out"
