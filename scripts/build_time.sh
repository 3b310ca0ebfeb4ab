#!/usr/bin/env bash
# Where a full build's time goes, the figures of docs/build-time.md: configures a fresh
# Release build in a scratch folder with a compiler launcher that logs each translation
# unit's CPU seconds, builds the digits program alone (what scripts/demo.sh builds), then the
# rest, and prints both wall times, the CPU seconds per target and the slowest files.
# Run it on an otherwise idle machine; the packages must be installed (scripts/setup.sh).
#
# Usage: bash scripts/build_time.sh [SCRATCH_DIR]   (default: a new folder under /tmp)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scratch="${1:-$(mktemp -d)}"
jobs="${MINIDL_JOBS:-$(nproc)}"
mkdir -p "$scratch"
log="$scratch/translation_units.log"
launcher="$scratch/time_compile.sh"
: >"$log"
# The launcher runs the compiler under /usr/bin/time: user + system seconds, then the object.
cat >"$launcher" <<LAUNCHER
#!/usr/bin/env bash
out=""; prev=""
for arg in "\$@"; do [[ \$prev == -o ]] && out=\$arg; prev=\$arg; done
exec /usr/bin/time -f "%U %S \$out" -a -o "$log" "\$@"
LAUNCHER
chmod +x "$launcher"
[[ -x /usr/bin/time ]] || { echo "build_time.sh: error: /usr/bin/time not found (apt-get install -y time)" >&2; exit 1; }

cmake -S "$repo" -B "$scratch/build" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
start=$SECONDS
cmake --build "$scratch/build" -j "$jobs" --target digits >/dev/null
digits_wall=$((SECONDS - start))
cmake --build "$scratch/build" -j "$jobs" >/dev/null
full_wall=$((SECONDS - start))

echo "wall seconds on $jobs jobs: digits alone $digits_wall, everything $full_wall"
echo "CPU seconds per target (files):"
awk '{ target = $3; sub(/\.dir\/.*/, "", target); sub(/.*CMakeFiles\//, "", target)
       cpu[target] += $1 + $2; files[target]++; total += $1 + $2 }
     END { for (t in cpu) printf "  %7.1f  %3d  %s\n", cpu[t], files[t], t; printf "  %7.1f       total\n", total }' \
  "$log" | sort -rn
echo "the ten slowest files (CPU seconds):"
awk '{ printf "  %6.1f  %s\n", $1 + $2, $3 }' "$log" | sort -rn | head -10
