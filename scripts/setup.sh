#!/usr/bin/env bash
# The set-up behind both README commands (scripts/demo.sh, scripts/test.sh):
#   1. installs minidl's Debian packages that are missing (needs root: apt-get update once,
#      then apt-get install -y), and
#   2. configures (Release unless build/ says otherwise) and builds into build/: everything,
#      or only the named targets and what they need.
# Safe to run again: with the packages there and the build up to date it takes seconds.
#
# Usage: bash scripts/setup.sh [--with-torch] [--target NAME]...
#   --with-torch   also install python3-torch (large): the PyTorch cross-checks (ctest label
#                  torch) and the fixture generators need it; without it those tests skip
#   --target NAME  build only NAME (a CMake target, e.g. digits) and its dependencies;
#                  may be given more than once (scripts/demo.sh builds only digits)
# Environment: MINIDL_BUILD_DIR (default: build), MINIDL_JOBS (default: nproc),
# MINIDL_EXTRA_PACKAGES (more Debian packages to install with the rest), MINIDL_CMAKE_ARGS
# (more cmake options, e.g. -DMINIDL_WERROR=ON as CI passes).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MINIDL_BUILD_DIR:-$repo/build}"
jobs="${MINIDL_JOBS:-$(nproc)}"
packages=(build-essential cmake libopenblas-dev libopenblas-openmp-dev catch2 libcxxopts-dev nlohmann-json3-dev libsleef-dev gnuplot-nox libopenmpi-dev openmpi-bin
  libjs-dygraphs protobuf-compiler python3-protobuf)
# More packages to install in the same apt-get call (CI adds the fuzzers' clang this way).
read -r -a extra_packages <<<"${MINIDL_EXTRA_PACKAGES:-}"
packages+=("${extra_packages[@]}")

die() {
  echo "setup.sh: error: $*" >&2
  exit 1
}

targets=()
while (($# > 0)); do
  case "$1" in
    --with-torch) packages+=(python3-torch) ;;
    --target)
      [[ -n "${2:-}" ]] || { echo "setup.sh: error: --target needs a target name, e.g. --target digits" >&2; exit 2; }
      targets+=(--target "$2")
      shift
      ;;
    -h | --help)
      sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup.sh: error: unknown option '$1' (expected --with-torch, --target NAME or --help)" >&2
      exit 2
      ;;
  esac
  shift
done

# True when dpkg has the package fully installed (not merely known, or removed with its
# configuration files left behind).
is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

install_missing_packages() {
  command -v dpkg-query >/dev/null ||
    die "dpkg-query not found: this script installs Debian packages; on another system install" \
      "the equivalents of: ${packages[*]}"
  local missing=() package
  for package in "${packages[@]}"; do
    is_installed "$package" || missing+=("$package")
  done
  if ((${#missing[@]} == 0)); then
    echo "setup.sh: Debian packages present: ${packages[*]}"
    return
  fi
  if ((EUID != 0)); then
    die "missing Debian packages: ${missing[*]}." \
      "Run this script as root (sudo bash scripts/setup.sh) or install them first:" \
      "sudo apt-get install -y ${missing[*]}"
  fi
  echo "setup.sh: installing missing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update || die "apt-get update failed (is the network or a package mirror reachable?)"
  apt-get install -y --no-install-recommends "${missing[@]}" ||
    die "apt-get install -y ${missing[*]} failed"
  for package in "${missing[@]}"; do
    is_installed "$package" || die "package $package is still not installed after apt-get install"
  done
}

configure_and_build() {
  command -v cmake >/dev/null || die "cmake not found although its package is installed"
  # No build type forced: a fresh build/ is Release (CMakeLists.txt's default); one configured
  # otherwise by hand keeps its settings.
  read -r -a cmake_args <<<"${MINIDL_CMAKE_ARGS:-}"
  cmake -S "$repo" -B "$build_dir" "${cmake_args[@]}" || die "configuring $build_dir failed (see the messages above)"
  cmake --build "$build_dir" -j "$jobs" "${targets[@]}" || die "building $build_dir failed (see the messages above)"
  echo "setup.sh: built ${targets[*]:-everything} in $build_dir"
}

install_missing_packages
configure_and_build
