#!/usr/bin/env bash
# Draws what `charlm --attention WORD,FILE` writes: one PNG for one run and seed, a grid of
# heatmaps with a row per layer and a column per head. Each heatmap is that head's
# attention weights for the word: rows the query position (top: the start token '.'),
# columns the key position, dark where the query attends; above the diagonal is 0 (the
# causal mask). Words of up to 12 tokens get each weight written in its cell.
# The run is --run NAME (layer-pre, rms-post, ...), else the first in the file; the seed is
# --seed S, else the run's first. Needs gnuplot (Debian: gnuplot-nox).
#
#   scripts/plot_attention.sh [--run NAME] [--seed S] ATTENTION.csv [OUT.png]
#   (OUT.png defaults to ATTENTION.png)
set -euo pipefail

fail() { echo "plot_attention.sh: $*" >&2; exit 2; }
usage="usage: scripts/plot_attention.sh [--run NAME] [--seed S] ATTENTION.csv [OUT.png]"
header_expected="run,seed,layer,head,query,key,query_token,key_token,weight"

run="" seed="" files=()
while (($#)); do
  case $1 in
    --run | --seed) (($# >= 2)) || fail "$1 needs a value; $usage"; printf -v "${1#--}" '%s' "$2"; shift 2 ;;
    -h | --help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) fail "unknown option $1; $usage" ;;
    *) files+=("$1"); shift ;;
  esac
done
command -v gnuplot >/dev/null || fail "needs gnuplot: apt-get install -y gnuplot-nox"
case ${#files[@]} in
  1) csv=${files[0]} png=${files[0]%.csv}.png ;;
  2) csv=${files[0]} png=${files[1]} ;;
  *) fail "$usage" ;;
esac
[[ -r $csv ]] || fail "cannot read $csv"
header=$(head -n 1 "$csv" | tr -d '\r')
[[ $header == "$header_expected" ]] || fail "$csv: expected the header $header_expected, got: $header"
[[ -z $seed || $seed =~ ^[0-9]+$ ]] || fail "--seed: \"$seed\" is not a whole number"

runs=$(tail -n +2 "$csv" | cut -d, -f1 | awk 'NF && !seen[$0]++' | tr '\n' ' ')
[[ -n ${runs// /} ]] || fail "$csv has no rows"
for name in $runs; do [[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || fail "$csv: unexpected run name \"$name\""; done
[[ -n $run ]] || run=${runs%% *}
[[ " $runs" == *" $run "* ]] || fail "--run: no run \"$run\" in $csv (it has: ${runs% })"
seeds=$(awk -F, -v r="$run" 'NR > 1 && $1 == r && !seen[$2]++ { print $2 }' "$csv" | tr '\n' ' ')
[[ -n $seed ]] || seed=${seeds%% *}
[[ " $seeds" == *" $seed "* ]] || fail "--seed: run $run has no seed $seed in $csv (it has: ${seeds% })"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The run's rows: layer head query key weight, and the tokens along the keys of one row.
awk -F, -v r="$run" -v s="$seed" 'NR > 1 && $1 == r && $2 == s { print $3, $4, $5, $6, $9 }' "$csv" >"$work/rows"
layers=$(awk '{ if ($1 + 1 > n) n = $1 + 1 } END { print n }' "$work/rows")
heads=$(awk '{ if ($2 + 1 > n) n = $2 + 1 } END { print n }' "$work/rows")
tokens=$(awk -F, -v r="$run" -v s="$seed" 'NR > 1 && $1 == r && $2 == s && $3 == 0 && $4 == 0 && $5 == 0 { print $8 }' \
  "$csv" | tr -d '\n')
t=${#tokens}
[[ $tokens =~ ^[.a-z]+$ ]] || fail "$csv: run $run seed $seed: unexpected tokens \"$tokens\" (expected '.' and a-z)"
((layers * heads * t * t == $(wc -l <"$work/rows"))) ||
  fail "$csv: run $run seed $seed has $(wc -l <"$work/rows") rows, not layers x heads x $t x $t (a cut file?)"

tics=""
for ((i = 0; i < t; i++)); do tics+="${tics:+, }'${tokens:i:1}' $i"; done
size=$((t * 26 + 140))
{
  echo "set terminal pngcairo size $((heads * size + 60)),$((layers * size + 100)) enhanced font ',10'"
  echo "set output 'out.png'"
  # shellcheck disable=SC2028 # the \n is gnuplot's: a two-line title
  echo "set multiplot layout $layers,$heads title \"$run, seed $seed: attention weights for '$tokens'\\n(rows: query, columns: key)\" noenhanced font ',12'"
  echo "set palette defined (0 'white', 0.5 '#6baed6', 1 '#08306b'); set cbrange [0:1]; unset colorbox"
  echo "set xrange [-0.5:$t - 0.5]; set yrange [$t - 0.5:-0.5]; set size ratio -1"
  echo "set xtics ($tics) scale 0; set ytics ($tics) scale 0; set x2tics ($tics) scale 0; unset xtics"
  echo "set xlabel ''; set ylabel ''; unset key"
  for ((layer = 0; layer < layers; layer++)); do
    for ((head = 0; head < heads; head++)); do
      awk -v l="$layer" -v h="$head" '$1 == l && $2 == h { print $4, $3, $5 }' "$work/rows" >"$work/l${layer}h$head.dat"
      echo "set title 'layer $layer, head $head'"
      cells="'l${layer}h$head.dat' using 1:2:3 with image"
      if ((t <= 12)); then
        # Dark text on light cells, white on dark ones.
        cells+=", '' using 1:2:(\$3 >= 0.005 && \$3 < 0.5 ? sprintf('%.2f', \$3) : '') with labels font ',7' tc rgb 'gray20'"
        cells+=", '' using 1:2:(\$3 >= 0.5 ? sprintf('%.2f', \$3) : '') with labels font ',7' tc rgb 'white'"
      fi
      echo "plot $cells"
    done
  done
  echo "unset multiplot"
} >"$work/plot.gp"
out_dir=$(dirname "$png")
[[ -d $out_dir ]] || fail "$out_dir is not a directory"
(cd "$work" && gnuplot plot.gp) || fail "gnuplot failed"
mv "$work/out.png" "$png" || fail "cannot write $png"
echo "wrote $png"
