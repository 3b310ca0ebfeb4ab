#!/usr/bin/env bash
# Fails (exit 1) when clang-format (Debian's clang-format 14, the repo's .clang-format) would
# change a C++ file of the repository, and lists each such file. `--fix` rewrites them instead.
#   bash scripts/check_format.sh [--fix]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
command -v clang-format >/dev/null || {
  echo "check_format.sh: clang-format not found (apt-get install -y clang-format)" >&2
  exit 2
}
files=()
while IFS= read -r file; do files+=("$file"); done < <(git ls-files '*.cpp' '*.hpp')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for file in "${files[@]}"; do
  clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || bad+=("$file")
done
if ((${#bad[@]})); then
  echo "check_format.sh: clang-format would change ${#bad[@]} file(s); run bash scripts/check_format.sh --fix:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format.sh: ${#files[@]} C++ files formatted"
