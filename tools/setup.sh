#!/usr/bin/env bash
# Set up, build and test meshsim on Debian 12 (as root, or with sudo).
#
#   bash tools/setup.sh deps    install the Debian packages that are missing
#   bash tools/setup.sh build   configure (Release) and build everything
#   bash tools/setup.sh demo    deps, then build and run the demo only
#   bash tools/setup.sh test    deps, build everything, run ctest; non-zero on failure
#
# Re-running is cheap: installed packages are left alone (apt is not touched
# when nothing is missing) and the build is incremental.
#
# Environment:
#   MESHSIM_BUILD_DIR   build directory, relative to the repo root or absolute (default: build)
#   MESHSIM_CMAKE_ARGS  extra configure arguments, e.g. -DMESHSIM_SANITIZE=thread
set -euo pipefail

readonly packages=(cmake g++ make libtbb-dev libeigen3-dev libspdlog-dev libfmt-dev
                   libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
                   libboost-context-dev)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${MESHSIM_BUILD_DIR:-build}"
[[ "$build_dir" == /* ]] || build_dir="$repo_root/$build_dir"

deps() {
  local missing=() p
  for p in "${packages[@]}"; do
    # Not just the exit status: dpkg -s also succeeds for removed-but-not-purged packages.
    dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    echo "deps: all ${#packages[@]} packages present"
    return
  fi
  local sudo=()
  ((EUID == 0)) || sudo=(sudo)
  echo "deps: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}

configure() {
  # shellcheck disable=SC2086  # MESHSIM_CMAKE_ARGS is a list of arguments
  cmake -S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${MESHSIM_CMAKE_ARGS:-} >/dev/null
}

build() {
  configure
  cmake --build "$build_dir" -j"$(nproc)" "$@"
}

case "${1:-}" in
  deps) deps ;;
  build) build ;;
  demo)
    deps
    build --target meshsim_demo
    "$build_dir/examples/meshsim_demo"
    ;;
  test)
    deps
    build
    ctest --test-dir "$build_dir" --output-on-failure -j2
    ;;
  *)
    echo "usage: bash tools/setup.sh {deps|build|demo|test}" >&2
    exit 2
    ;;
esac
