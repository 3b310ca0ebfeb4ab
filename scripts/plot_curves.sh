#!/usr/bin/env bash
# Draws what `digits --curves C --val-curves V --summary S` writes, in one PNG of two panels:
#   top     per norm, the mean training loss over seeds at every optimizer step, with a band
#           from the lowest to the highest seed, the ln 10 line (a network that guesses) and
#           the epoch boundaries;
#   bottom  per norm, the mean validation accuracy over seeds after each epoch, with bars
#           from the lowest to the highest seed (needs --val).
# The title gives the configuration (depth, width, lr, batch, epochs) when --summary is
# given, and the seeds. Needs gnuplot (Debian: gnuplot-nox).
#
#   scripts/plot_curves.sh [--val VAL.csv] [--summary S.json] CURVES.csv [OUT.png]
#   (OUT.png defaults to CURVES.png)
set -euo pipefail

fail() { echo "plot_curves.sh: $*" >&2; exit 2; }
usage="usage: scripts/plot_curves.sh [--val VAL.csv] [--summary SUMMARY.json] CURVES.csv [OUT.png]"

val="" summary="" positional=()
while (($#)); do
  case $1 in
    --val) val=${2:-}; shift 2 || fail "$usage" ;;
    --summary) summary=${2:-}; shift 2 || fail "$usage" ;;
    -h | --help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) fail "unknown option $1; $usage" ;;
    *) positional+=("$1"); shift ;;
  esac
done
((${#positional[@]} >= 1 && ${#positional[@]} <= 2)) || fail "$usage"
csv=${positional[0]}
png=${positional[1]:-${csv%.csv}.png}
command -v gnuplot >/dev/null || fail "needs gnuplot: apt-get install -y gnuplot-nox"
check_header() {
  [[ -r $1 ]] || fail "cannot read $1"
  local header
  header=$(head -n 1 "$1" | tr -d '\r')
  [[ $header == "$2" ]] || fail "$1: expected the header $2, got: $header"
}
check_header "$csv" "run,seed,epoch,step,loss"
[[ -z $val ]] || check_header "$val" "run,seed,epoch,step,val_loss,val_accuracy"
[[ -z $summary || -r $summary ]] || fail "cannot read $summary"

# The runs in the order they first appear, and the names the lesson prints for them.
runs=$(tail -n +2 "$csv" | cut -d, -f1 | awk 'NF && !seen[$0]++' | tr '\n' ' ')
[[ -n ${runs// /} ]] || fail "$csv has no rows"
title_of() {
  case $1 in
    none) echo "no normalization" ;; batch) echo "BatchNorm1d" ;; layer) echo "LayerNorm" ;;
    rms) echo "RMSNorm" ;; group) echo "GroupNorm" ;; *) echo "$1" ;;
  esac
}
seeds=$(tail -n +2 "$csv" | cut -d, -f2 | awk 'NF && !seen[$0]++' | sort -n | tr '\n' ' ')
seed_count=$(wc -w <<<"$seeds")
seed_text=$(awk '{ if (NF > 2 && $NF - $1 == NF - 1) print $1 "-" $NF; else { gsub(/ /, ", "); print } }' <<<"${seeds% }")

# The configuration from the summary's settings (digits writes one key per line).
setting() { grep -m1 "\"$1\":" "$summary" | sed 's/.*: *//; s/,$//'; }
config=""
if [[ -n $summary ]]; then
  config="depth $(setting depth), width $(setting width), SGD lr $(setting lr), batch $(setting batch_size)"
  [[ $(setting drop_last) == true ]] && config+=" (drop last)"
  config+=", $(setting epochs) epochs, "
fi
config+="$seed_count seed$( ((seed_count > 1)) && echo s || true) ($seed_text)"

# gnuplot gets plain file names in a private directory (no quoting trouble with odd paths);
# the PNG is renamed into place only once it is complete.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Per run and step (or epoch): mean, min and max over the seeds; non-finite values (a run that
# diverged) are left out of the figures of that step.
aggregate() {  # $1 file, $2 x column, $3 y column, $4 run -> "x mean min max" rows in x order
  awk -F, -v run="$4" -v xc="$2" -v yc="$3" 'NR > 1 && $1 == run && $yc + 0 == $yc + 0 && $yc !~ /nan|inf/ {
      x = $xc; y = $yc + 0; n[x]++; s[x] += y
      if (!(x in lo) || y < lo[x]) lo[x] = y
      if (!(x in hi) || y > hi[x]) hi[x] = y
    } END { for (x in n) print x, s[x] / n[x], lo[x], hi[x] }' "$1" | sort -n
}
loss_plots=() band_plots=() accuracy_plots=()
colors=(dark-red web-blue forest-green dark-orange dark-violet black)
i=0
for run in $runs; do
  [[ $run =~ ^[A-Za-z0-9_.-]+$ ]] || fail "$csv: unexpected run name \"$run\""
  color=${colors[i % ${#colors[@]}]}
  aggregate "$csv" 4 5 "$run" >"$work/loss_$run.dat"
  band_plots+=("'loss_$run.dat' using 1:3:4 with filledcurves fc rgb '$color' fs transparent solid 0.18 notitle")
  loss_plots+=("'loss_$run.dat' using 1:2 with lines lw 2 lc rgb '$color' title '$(title_of "$run")'")
  if [[ -n $val ]]; then
    aggregate "$val" 3 6 "$run" >"$work/val_$run.dat"
    accuracy_plots+=("'val_$run.dat' using (\$1 + $i * 0.06 - 0.1):2:3:4 with yerrorlines lw 2 pt 7 lc rgb '$color' title '$(title_of "$run")'")
  fi
  i=$((i + 1))
done
# Epoch boundaries: the last step of each epoch of the first run and seed.
first_run=${runs%% *}
boundaries=$(awk -F, -v run="$first_run" 'NR > 1 && $1 == run && !s { s = $2 } NR > 1 && $1 == run && $2 == s {
    last[$3] = $4 } END { for (e in last) print last[e] }' "$csv" | sort -n | head -n -1 | tr '\n' ' ')
arrows=""
for b in $boundaries; do
  arrows+="set arrow from $b.5, graph 0 to $b.5, graph 1 nohead lc rgb 'gray50' dt 2"$'\n'
done

join() { local IFS=,; echo "$*"; }
height=$([[ -n $val ]] && echo 900 || echo 560)
{
  echo "set terminal pngcairo size 1000,$height enhanced font ',11'"
  echo "set output 'curves.png'"
  echo "set datafile missing 'nan'"
  [[ -n $val ]] && echo "set multiplot layout 2,1 title 'Deep tanh network on the digits: $config' font ',12'"
  [[ -z $val ]] && echo "set title 'Deep tanh network on the digits: $config'"
  echo "set grid"
  echo "set key top right box opaque"
  echo "set xlabel 'optimizer step (dashed: epoch boundaries)'"
  echo "set ylabel 'training loss (batch cross-entropy)'"
  echo "set yrange [0:*]"
  echo "set label 1 'ln 10: guessing' at graph 0.01, first log(10) offset 0,0.6 tc rgb 'gray30'"
  printf '%s' "$arrows"
  echo "plot $(join "${band_plots[@]}"), $(join "${loss_plots[@]}"), log(10) with lines dt 3 lc rgb 'gray30' notitle"
  if [[ -n $val ]]; then
    echo "unset arrow; unset label 1"
    echo "set xlabel 'epoch'"
    echo "set ylabel 'validation accuracy (eval mode)'"
    echo "set yrange [0:1]"
    echo "set xtics 1"
    echo "set key right center box opaque"
    echo "set xrange [0.5:*]"
    echo "plot $(join "${accuracy_plots[@]}")"
    echo "unset multiplot"
  fi
} >"$work/plot.gp"
(cd "$work" && gnuplot plot.gp) || fail "gnuplot failed on $csv"
mv "$work/curves.png" "$png"
echo "wrote $png"
