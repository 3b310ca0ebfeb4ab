#!/usr/bin/env bash
# Draws what `digits --stats STATS.csv` writes: four PNGs in OUTDIR, the norms side by side.
#   stats_1_activations.png  per layer, the histogram of the tanh outputs at one step, legend
#                            with their mean, std and saturated share (|x| > 0.97);
#   stats_2_gradients.png    per layer, the histogram of the gradient reaching each tanh
#                            output at the same step, legend with its mean and std;
#   stats_3_grad_depth.png   the std of those gradients (solid) and of each Linear's weight
#                            gradient (dashed) against depth, one colour per norm, log scale:
#                            the vanishing picture;
#   stats_4_update_ratio.png per Linear weight, std(update) / std(weight) at every recorded
#                            step, log scale, with the 1e-3 guide line.
# Layers and weights are drawn in the order the file first names them (the forward's and the
# model's); --layers REGEX keeps only the names it matches (an awk regular expression: charlm
# --stats records every module, e.g. --layers 'mlp[.]c_fc'). The step is --step N, else the
# last step of epoch 1 from --curves (digits'), else the middle snapshot; the seed is
# --seed S, else the first in the file. --summary adds the configuration (digits') to the
# titles. Needs gnuplot (Debian: gnuplot-nox).
#
#   scripts/plot_stats.sh [--curves C.csv] [--summary S.json] [--step N] [--seed S] [--layers REGEX]
#                         STATS.csv OUTDIR
set -euo pipefail

fail() { echo "plot_stats.sh: $*" >&2; exit 2; }
usage="usage: scripts/plot_stats.sh [--curves C.csv] [--summary S.json] [--step N] [--seed S] [--layers REGEX] \
STATS.csv OUTDIR"

curves="" summary="" step="" seed="" only="" positional=()
while (($#)); do
  case $1 in
    --curves) curves=${2:-}; shift 2 || fail "$usage" ;;
    --summary) summary=${2:-}; shift 2 || fail "$usage" ;;
    --step) step=${2:-}; shift 2 || fail "$usage" ;;
    --seed) seed=${2:-}; shift 2 || fail "$usage" ;;
    --layers) only=${2:-}; shift 2 || fail "$usage" ;;
    -h | --help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) fail "unknown option $1; $usage" ;;
    *) positional+=("$1"); shift ;;
  esac
done
((${#positional[@]} == 2)) || fail "$usage"
csv=${positional[0]} outdir=${positional[1]}
command -v gnuplot >/dev/null || fail "needs gnuplot: apt-get install -y gnuplot-nox"
[[ -r $csv ]] || fail "cannot read $csv"
header=$(head -n 1 "$csv" | tr -d '\r')
[[ $header == "run,seed,step,layer,quantity,statistic,value" ]] ||
  fail "$csv: expected the header run,seed,step,layer,quantity,statistic,value, got: $header"
[[ -d $outdir ]] || fail "$outdir is not a directory"
[[ -z $step || $step =~ ^[0-9]+$ ]] || fail "--step: \"$step\" is not a whole number"
[[ -z $seed || $seed =~ ^[0-9]+$ ]] || fail "--seed: \"$seed\" is not a whole number"
[[ -z $curves || -r $curves ]] || fail "cannot read $curves"
[[ -z $summary || -r $summary ]] || fail "cannot read $summary"

runs=$(tail -n +2 "$csv" | cut -d, -f1 | awk 'NF && !seen[$0]++' | tr '\n' ' ')
[[ -n ${runs// /} ]] || fail "$csv has no rows"
for run in $runs; do [[ $run =~ ^[A-Za-z0-9_.-]+$ ]] || fail "$csv: unexpected run name \"$run\""; done
[[ -n $seed ]] || seed=$(awk -F, 'NR == 2 { print $2; exit }' "$csv")
steps=$(awk -F, -v seed="$seed" 'NR > 1 && $2 == seed && !seen[$3]++ { print $3 }' "$csv" | sort -n)
[[ -n $steps ]] || fail "$csv has no rows for seed $seed"
if [[ -z $step && -n $curves ]]; then
  step=$(awk -F, 'NR > 1 && $3 == 1 { last = $4 } END { print last }' "$curves")
fi
[[ -n $step ]] || step=$(awk '{ s[NR] = $1 } END { print s[int((NR + 1) / 2)] }' <<<"$steps")
grep -qx "$step" <<<"$steps" || fail "step $step was not recorded (recorded: $(tr '\n' ' ' <<<"$steps"))"

# The lesson's MLP (every activation a Tanh) or another arch: the CNN (ReLU; its norms are
# the 2-d forms) or a residual MLP (GELU). Set once the layers are known, below.
tanh_only=1
title_of() {
  case $1 in
    none) echo "no normalization" ;; rms) echo "RMSNorm" ;; group) echo "GroupNorm" ;;
    batch) ((tanh_only)) && echo "BatchNorm1d" || echo "BatchNorm2d" ;;
    layer) [[ $layers == relu* ]] && echo "GroupNorm(1, C)" || echo "LayerNorm" ;;
    instance) echo "GroupNorm(C, C)" ;; *) echo "$1" ;;
  esac
}
setting() { grep -m1 "\"$1\":" "$summary" | sed 's/.*: *//; s/,$//'; }
config="seed $seed"
[[ -z $summary ]] || config="depth $(setting depth), width $(setting width), SGD lr $(setting lr), batch $(setting batch_size), seed $seed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names_of() {  # $1 quantity -> the seed's layer names in file order, those --layers matches
  awk -F, -v seed="$seed" -v q="$1" -v only="$only" \
    'NR > 1 && $2 == seed && $5 == q && $4 ~ only && !seen[$4]++ { print $4 }' "$csv" | tr '\n' ' '
}
layers=$(names_of output) weights=$(names_of parameter)
[[ -n ${layers// /} ]] || fail "$csv has no layer outputs for seed $seed${only:+ matching --layers $only}"
for layer in $layers; do [[ $layer == tanh* ]] || tanh_only=0; done
# The plotted seed's rows, and of those the plotted step's: every lookup below reads these.
awk -F, -v s="$seed" 'NR > 1 && $2 == s' "$csv" >"$work/seed.csv"
awk -F, -v t="$step" '$3 == t' "$work/seed.csv" >"$work/step.csv"
colors=(dark-red web-blue forest-green dark-orange dark-violet black dark-cyan dark-pink goldenrod gray40)
value_of() {  # $1 run $2 layer $3 quantity $4 statistic -> value at the plotted step
  awk -F, -v r="$1" -v l="$2" -v q="$3" -v st="$4" \
    '$1 == r && $4 == l && $5 == q && $6 == st { print $7; exit }' "$work/step.csv"
}
histogram_of() {  # $1 run $2 layer $3 quantity -> "center density" rows
  awk -F, -v r="$1" -v l="$2" -v q="$3" '$1 == r && $4 == l && $5 == q && $6 ~ /^bin:/ {
       split($6, e, ":"); print (e[2] + e[3]) / 2, $7 }' "$work/step.csv"
}
ncols=$(wc -w <<<"$runs")
width=$((ncols * 560))
# Room for the legend below the histograms: two names a line.
height=$((400 + 14 * (($(wc -w <<<"$layers") + 1) / 2)))
((height >= 640)) || height=640

# Panels 1 and 2: histograms per layer, one plot per norm.
histogram_panel() {  # $1 quantity $2 file $3 title $4 xlabel $5 with saturation (1/0)
  {
    echo "set terminal pngcairo size $width,$height enhanced font ',10'"
    echo "set output '$2'"
    echo "set multiplot layout 1,$ncols title '$3 at step $step ($config)' font ',12'"
    echo "set grid; set key below maxcols 2 font ',8' spacing 0.9"
    echo "set xlabel '$4'; set ylabel 'density'"
    for run in $runs; do
      plots=() i=0
      for layer in $layers; do
        histogram_of "$run" "$layer" "$1" >"$work/h_${1}_${run}_$layer.dat"
        i=$((i + 1))
        [[ -s $work/h_${1}_${run}_$layer.dat ]] || continue  # a layer this run lacks (charlm's ln_f)
        mean=$(value_of "$run" "$layer" "$1" mean) std=$(value_of "$run" "$layer" "$1" std)
        label=$(printf '%s: mean %+.2e, std %.2e' "$layer" "${mean:-nan}" "${std:-nan}")
        if (($5)); then
          sat=$(value_of "$run" "$layer" "$1" saturated)
          label=$(printf '%s: mean %+.2f, std %.2f, sat %.1f%%' "$layer" "${mean:-nan}" "${std:-nan}" \
            "$(awk -v v="${sat:-nan}" 'BEGIN { print v * 100 }')")
        fi
        plots+=("'h_${1}_${run}_$layer.dat' using 1:2 with lines lw 1.5 lc rgb '${colors[(i - 1) % ${#colors[@]}]}' title '$label' noenhanced")
      done
      ((${#plots[@]})) || plots=("0 with lines lc rgb 'gray80' title 'none of these layers in this run'")
      echo "set title '$(title_of "$run")'"
      (IFS=,; echo "plot ${plots[*]}")
    done
    echo "unset multiplot"
  } >"$work/$2.gp"
}
if ((tanh_only)); then
  histogram_panel output stats_1_activations.png "Tanh outputs per layer" "tanh output" 1
  histogram_panel output_grad stats_2_gradients.png "Gradients reaching each tanh output" "gradient" 0
else  # no saturation: ReLU, GELU and SiLU have no flat tail at 0.97
  histogram_panel output stats_1_activations.png "Activation outputs per layer" "output" 0
  histogram_panel output_grad stats_2_gradients.png "Gradients reaching each activation output" "gradient" 0
fi

# Panel 3: gradient std against depth, one colour per norm.
plots=() i=0
for run in $runs; do
  : >"$work/depth_$run.dat"
  : >"$work/wdepth_$run.dat"
  d=0
  for layer in $layers; do
    d=$((d + 1))
    echo "$d $(value_of "$run" "$layer" output_grad std)" >>"$work/depth_$run.dat"
  done
  d=0
  for w in $weights; do
    d=$((d + 1))
    echo "$d $(value_of "$run" "$w" parameter grad_std)" >>"$work/wdepth_$run.dat"
  done
  color=${colors[i % ${#colors[@]}]}
  plots+=("'depth_$run.dat' using 1:2 with linespoints lw 2 pt 7 lc rgb '$color' title '$(title_of "$run"): gradient at $( ((tanh_only)) && echo tanh || echo activation) output'")
  plots+=("'wdepth_$run.dat' using 1:2 with linespoints lw 1.5 dt 2 pt 6 lc rgb '$color' title '$(title_of "$run"): weight gradient'")
  i=$((i + 1))
done
{
  echo "set terminal pngcairo size 1000,640 enhanced font ',11'"
  echo "set output 'stats_3_grad_depth.png'"
  echo "set title 'Gradient std per layer at step $step ($config)'"
  echo "set grid; set logscale y; set format y '10^{%L}'"
  echo "set key below maxrows 2 font ',10'"
  echo "set xlabel 'layer (1: first, next to the input)'; set xtics 1"
  echo "set ylabel 'std of the gradient'"
  (IFS=,; echo "plot ${plots[*]}")
} >"$work/stats_3_grad_depth.png.gp"

# Panel 4: update-to-data ratio against step, one plot per norm, one line per weight.
{
  echo "set terminal pngcairo size $width,600 enhanced font ',10'"
  echo "set output 'stats_4_update_ratio.png'"
  echo "set multiplot layout 1,$ncols title 'Update-to-data ratio std(step update) / std(weight) per Linear ($config)' font ',12'"
  echo "set grid; set logscale y; set format y '10^{%L}'; set yrange [1e-5:1e-1]; set key below maxrows 2 font ',8'"
  echo "set xlabel 'optimizer step'; set ylabel 'update std / weight std'"
  for run in $runs; do
    plots=() i=0
    for w in $weights; do
      awk -F, -v r="$run" -v l="$w" '$1 == r && $4 == l && $6 == "update_to_data" { print $3, $7 }' \
        "$work/seed.csv" >"$work/u_${run}_$w.dat"
      i=$((i + 1))
      [[ -s $work/u_${run}_$w.dat ]] || continue
      plots+=("'u_${run}_$w.dat' using 1:2 with lines lw 1.5 lc rgb '${colors[(i - 1) % ${#colors[@]}]}' title '${w%.weight}' noenhanced")
    done
    plots+=("1e-3 with lines dt 2 lw 2 lc rgb 'black' title '1e-3 guide'")
    echo "set title '$(title_of "$run")'"
    (IFS=,; echo "plot ${plots[*]}")
  done
  echo "unset multiplot"
} >"$work/stats_4_update_ratio.png.gp"

for png in stats_1_activations.png stats_2_gradients.png stats_3_grad_depth.png stats_4_update_ratio.png; do
  (cd "$work" && gnuplot "$png.gp") || fail "gnuplot failed on $png"
  mv "$work/$png" "$outdir/$png"
  echo "wrote $outdir/$png"
done
