#!/usr/bin/env bash
# The README's demo command: set-up (missing Debian packages, configure, build; see
# scripts/setup.sh), then the lesson's experiment, build/examples/digits/digits. Arguments go to digits
# (bash scripts/demo.sh --help lists them). The loss curves go to build/curves.csv unless
# --curves says otherwise, and scripts/plot_curves.sh draws them to a PNG beside them.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MINIDL_BUILD_DIR:-$repo/build}"
plot_script="$repo/scripts/plot_curves.sh"

bash "$repo/scripts/setup.sh"

digits="$build_dir/examples/digits/digits"

# The curves file: the caller's --curves FILE / --curves=FILE, else build/curves.csv.
curves=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --curves) curves="${args[i + 1]:-}" ;;
    --curves=*) curves="${args[i]#--curves=}" ;;
  esac
done
if [[ -z "$curves" ]]; then
  curves="$build_dir/curves.csv"
  args+=(--curves "$curves")
fi

started="$(mktemp)"
trap 'rm -f "$started"' EXIT
"$digits" "${args[@]}"

# Plot only curves this run wrote (not a stale file after, say, --help).
if [[ -f "$plot_script" && -f "$curves" && "$curves" -nt "$started" ]]; then
  bash "$plot_script" "$curves" "${curves%.csv}.png"
fi
