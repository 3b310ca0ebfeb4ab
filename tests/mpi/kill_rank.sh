#!/usr/bin/env bash
# Usage: kill_rank.sh DIGITS MPIRUN [MPIRUN OPTIONS...]
# Starts 2 ranks of digits --distributed on a long run, kills rank 1 (SIGKILL) once rank 0
# has finished an epoch, and passes when mpirun then exits non-zero within 30 s with a
# message naming rank 1: the surviving rank must not hang in its next allreduce.
set -uo pipefail
digits="$1"
shift
mpirun=("$@")
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"${mpirun[@]}" -np 2 "$digits" --distributed --norm none --seeds 0 --epochs 100000 >"$scratch/out" 2>"$scratch/err" &
launcher=$!

fail() {
  echo "kill_rank.sh: $*" >&2
  cat "$scratch/err" >&2
  kill -KILL "$launcher" 2>/dev/null
  exit 1
}

# Rank 0 prints a line per epoch: training has started on both ranks.
for ((i = 0; i < 600; ++i)); do
  grep -q "epoch 1/" "$scratch/err" && break
  kill -0 "$launcher" 2>/dev/null || fail "mpirun ended before the first epoch"
  sleep 0.1
done
grep -q "epoch 1/" "$scratch/err" || fail "no epoch finished within 60 s"

# The rank-1 process among mpirun's children, found by the rank OpenMPI puts in its environment.
victim=""
for pid in $(ps -o pid= --ppid "$launcher"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then victim=$pid; fi
done
[[ -n "$victim" ]] || fail "cannot find rank 1 among mpirun's children"
kill -KILL "$victim"
start=$SECONDS

for ((i = 0; i < 300; ++i)); do
  kill -0 "$launcher" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$launcher" 2>/dev/null; then fail "rank 0 and mpirun still running 30 s after rank 1 was killed: a hang"; fi
wait "$launcher"
status=$?
elapsed=$((SECONDS - start))
((status != 0)) || fail "mpirun exited 0 after rank 1 was killed"
grep -q "rank 1" "$scratch/err" || fail "no message names rank 1"
echo "kill_rank.sh: mpirun exited with status $status ${elapsed} s after rank 1 was killed:"
grep "rank 1" "$scratch/err"
