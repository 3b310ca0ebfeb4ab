#!/usr/bin/env bash
# Runs the quick lab under OpenBLAS core types and fails when their verdicts differ: a rule
# never decides on the last bits of a chaotic run, which change with the kernel's summation
# order (apps/lab/tools.hpp).
# Usage: lab_core_types.sh LAB_EXECUTABLE OUT_DIR [all|one]
#   all: every core type this CPU can run (Sandybridge, Haswell, SkylakeX), unless
#        OPENBLAS_CORETYPE is set: then that one alone, compared with the verdicts that earlier
#        runs under the other types left in OUT_DIR (scripts/test.sh runs the whole suite once
#        under each type, so the lab runs once under each);
#   one: only OpenBLAS's own choice of kernels, nothing compared (the sanitizer build).
set -euo pipefail
lab=$1
out=$2
which=${3:-all}
types=()
if [[ $which == all && -n ${OPENBLAS_CORETYPE:-} ]]; then
  types=("$OPENBLAS_CORETYPE")
elif [[ $which == all ]]; then
  for flag_and_type in avx:Sandybridge avx2:Haswell avx512f:SkylakeX; do
    grep -qw "${flag_and_type%%:*}" /proc/cpuinfo 2>/dev/null && types+=("${flag_and_type#*:}")
  done
fi
((${#types[@]})) || types=(default)
for type in "${types[@]}"; do
  mkdir -p "$out/$type"
  start=$SECONDS
  if [[ $type == default ]]; then
    "$lab" run all --quick --jobs 2 --out "$out/$type" > "$out/$type.txt"
  else
    OPENBLAS_CORETYPE=$type "$lab" run all --quick --jobs 2 --out "$out/$type" > "$out/$type.txt"
  fi
  grep -v '^The last run' "$out/$type.txt" > "$out/$type.verdicts"
  echo "lab_core_types: $type: $(wc -l < "$out/$type.verdicts") verdicts in $((SECONDS - start)) s"
done
[[ $which == one ]] && exit 0
# Every core type's verdicts in OUT_DIR: this run's and those earlier runs left.
compared=()
for file in "$out"/*.verdicts; do
  name=$(basename "$file" .verdicts)
  [[ $name == default ]] || compared+=("$name")
done
((${#compared[@]})) || exit 0
first=${compared[0]}
status=0
for type in "${compared[@]:1}"; do
  if ! diff "$out/$first.verdicts" "$out/$type.verdicts" > "$out/$type.diff"; then
    echo "lab_core_types: the verdicts under $type differ from those under $first:"
    cat "$out/$type.diff"
    status=1
  fi
done
((${#compared[@]} > 1)) || echo "lab_core_types: one core type only ($first): nothing to compare yet"
((status)) || echo "lab_core_types: the same verdicts under ${compared[*]}"
exit $status
