#!/bin/sh
# Runs one PyTorch cross-check (a ctest with the label `torch`) where PyTorch is there:
#   run_with_torch.sh --python SCRIPT [ARGS...]   runs SCRIPT with the Python below
#   run_with_torch.sh PROGRAM [ARGS...]           runs PROGRAM (it finds the Python through
#                                                 MINIDL_PYTHON, exported here)
# The Python is MINIDL_PYTHON, else /usr/bin/python3 (Debian's python3-torch installs there).
# When it has no torch the test is skipped (exit 77, the tests' SKIP_RETURN_CODE), except in
# CI (CI=true, or MINIDL_REQUIRE_TORCH=1 as .ci/run sets): there a cross-check that cannot run
# fails the run (exit 1). Torch is looked up, not imported: an import costs 2-3 CPU seconds,
# and the cross-check imports it anyway (a torch that fails to import fails the test).
python="${MINIDL_PYTHON:-/usr/bin/python3}"
if ! "$python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' >/dev/null 2>&1; then
  if [ "${CI:-}" = true ] || [ "${MINIDL_REQUIRE_TORCH:-}" = 1 ]; then
    echo "run_with_torch: error: $python has no torch, and CI runs every PyTorch cross-check" \
      "(install Debian's python3-torch, or point MINIDL_PYTHON at a Python with torch)" >&2
    exit 1
  fi
  echo "run_with_torch: skipped: $python has no torch (install Debian's python3-torch," \
    "or point MINIDL_PYTHON at a Python with torch)"
  exit 77
fi
# The tests start it with posix_spawn, which takes a path, not a name to look up.
MINIDL_PYTHON="$(command -v "$python")"
export MINIDL_PYTHON
if [ "${1:-}" = --python ]; then
  shift
  exec "$MINIDL_PYTHON" "$@"
fi
exec "$@"
