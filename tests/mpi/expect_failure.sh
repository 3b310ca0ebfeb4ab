#!/usr/bin/env bash
# Usage: expect_failure.sh SECONDS REGEX COMMAND...
# Passes when COMMAND exits non-zero within SECONDS and its output (stdout and stderr) matches
# the extended REGEX; a command still running after SECONDS is killed and fails the test.
set -uo pipefail
limit="$1" pattern="$2"
shift 2
output="$(timeout --kill-after=5 "$limit" "$@" 2>&1)"
status=$?
printf '%s\n' "$output"
if ((status == 124 || status == 137)); then
  echo "expect_failure.sh: still running after ${limit} s: a hang" >&2
  exit 1
fi
if ((status == 0)); then
  echo "expect_failure.sh: exited 0, expected a failure" >&2
  exit 1
fi
if ! grep -Eq "$pattern" <<<"$output"; then
  echo "expect_failure.sh: exit status $status, but no output line matches: $pattern" >&2
  exit 1
fi
echo "expect_failure.sh: exit status $status within ${limit} s, output matches: $pattern"
