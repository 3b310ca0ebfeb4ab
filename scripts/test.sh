#!/usr/bin/env bash
# The README's test command: set-up (missing Debian packages, configure, build; see
# scripts/setup.sh), then every test through ctest. Extra arguments go to ctest, e.g.
#   bash scripts/test.sh -R norm
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$repo/scripts/setup.sh"
exec ctest --test-dir "${MINIDL_BUILD_DIR:-$repo/build}" --output-on-failure -j2 "$@"
