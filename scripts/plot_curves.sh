#!/usr/bin/env bash
# Draws the loss curves that `digits --curves FILE` writes: one line per run, the optimizer
# step on x, the batch's training loss on y. Needs gnuplot (Debian: gnuplot-nox).
#
#   scripts/plot_curves.sh curves.csv            # writes curves.png
#   scripts/plot_curves.sh curves.csv out.png
set -euo pipefail

fail() { echo "plot_curves.sh: $*" >&2; exit 2; }

[[ $# -ge 1 && $# -le 2 ]] || fail "usage: scripts/plot_curves.sh CURVES.csv [OUT.png]"
csv=$1
png=${2:-${csv%.csv}.png}
[[ -r $csv ]] || fail "cannot read $csv"
command -v gnuplot >/dev/null || fail "needs gnuplot: apt-get install -y gnuplot-nox"
header=$(head -n 1 "$csv" | tr -d '\r')
[[ $header == "run,epoch,step,loss" ]] || fail "$csv: expected the header run,epoch,step,loss, got: $header"

# The runs in the order they first appear, and the names the lesson prints for them.
runs=$(tail -n +2 "$csv" | cut -d, -f1 | awk 'NF && !seen[$0]++' | tr '\n' ' ')
[[ -n ${runs// /} ]] || fail "$csv has no rows"
title_of() {
  case $1 in
    none) echo "no normalization" ;; batch) echo "BatchNorm1d" ;; layer) echo "LayerNorm" ;;
    rms) echo "RMSNorm" ;; group) echo "GroupNorm" ;; *) echo "$1" ;;
  esac
}

# gnuplot gets plain file names in a private directory (no quoting trouble with odd
# paths); the PNG is renamed into place only once it is complete.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$csv" "$work/curves.csv"
plots=()
for run in $runs; do
  [[ $run =~ ^[A-Za-z0-9_.-]+$ ]] || fail "$csv: unexpected run name \"$run\""
  plots+=("'curves.csv' using 3:(strcol(1) eq '$run' ? \$4 : NaN) with lines lw 2 title '$(title_of "$run")'")
done
plot_command=$(IFS=,; echo "${plots[*]}")

(cd "$work" && gnuplot) <<GNUPLOT
set terminal pngcairo size 900,560 enhanced font ',11'
set output 'curves.png'
set datafile separator ','
set datafile missing 'nan'
set key bottom left box opaque
set grid
set title 'Deep tanh network on the digits: training loss per step'
set xlabel 'optimizer step'
set ylabel 'batch loss (cross-entropy)'
set yrange [0:*]
plot $plot_command
GNUPLOT
mv "$work/curves.png" "$png"
echo "wrote $png"
