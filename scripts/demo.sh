#!/usr/bin/env bash
# The README's demo command: set-up (missing Debian packages, configure, and a build of the
# digits program alone; see scripts/setup.sh), then the lesson's experiment,
# build/apps/digits/digits, over seeds 0-4 by default. Arguments go to digits
# (bash scripts/demo.sh --help lists them). The loss curves, the validation curves and the
# summary go to build/curves.csv, build/val_curves.csv and build/summary.json unless
# --curves, --val-curves or --summary say otherwise, and scripts/plot_curves.sh draws them to
# a PNG beside the curves (build/curves.png). The layers' statistics go to build/stats.csv
# (unless --stats says otherwise) and scripts/plot_stats.sh draws their four pictures beside
# it (stats_1_activations.png ... stats_4_update_ratio.png). The page comparing the runs
# (build/report.html unless --report says otherwise; docs/comparing-runs.md) opens offline in
# a browser: its path is printed last.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MINIDL_BUILD_DIR:-$repo/build}"
plot_script="$repo/scripts/plot_curves.sh"
stats_script="$repo/scripts/plot_stats.sh"

bash "$repo/scripts/setup.sh" --target digits
digits="$build_dir/apps/digits/digits"

# The caller's --NAME FILE / --NAME=FILE, else the default in build/, added to the arguments.
args=("$@")
output=""
output_of() {
  local name=$1 i
  for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
      "--$name") output="${args[i + 1]:-}"; return ;;
      "--$name="*) output="${args[i]#--"$name"=}"; return ;;
    esac
  done
  output=$2
  args+=("--$name" "$output")
}
output_of curves "$build_dir/curves.csv"; curves=$output
output_of val-curves "$build_dir/val_curves.csv"; validation=$output
output_of summary "$build_dir/summary.json"; summary=$output
output_of stats "$build_dir/stats.csv"; stats=$output
output_of report "$build_dir/report.html"; report=$output

started="$(mktemp)"
trap 'rm -f "$started"' EXIT
status=0
"$digits" "${args[@]}" || status=$?

# Plot only curves this run wrote (not a stale file after, say, --help); a run that failed
# (exit 1) still wrote the others' curves.
if [[ -f "$curves" && "$curves" -nt "$started" ]]; then
  plot_args=()
  [[ -f "$validation" && "$validation" -nt "$started" ]] && plot_args+=(--val "$validation")
  [[ -f "$summary" && "$summary" -nt "$started" ]] && plot_args+=(--summary "$summary")
  bash "$plot_script" "${plot_args[@]}" "$curves" "${curves%.csv}.png"
fi
if [[ -f "$stats" && "$stats" -nt "$started" ]]; then
  stats_args=()
  [[ -f "$curves" && "$curves" -nt "$started" ]] && stats_args+=(--curves "$curves")
  [[ -f "$summary" && "$summary" -nt "$started" ]] && stats_args+=(--summary "$summary")
  bash "$stats_script" "${stats_args[@]}" "$stats" "$(dirname "$stats")"
fi
if [[ -f "$report" && "$report" -nt "$started" ]]; then
  echo "the runs side by side (open in a browser): $(realpath "$report")"
fi
exit "$status"
