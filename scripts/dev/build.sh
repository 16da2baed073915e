#!/usr/bin/env bash
# Configures and builds into build/ (programs in build/bin/): everything, or only the targets
# named as arguments (e.g. `scripts/dev/build.sh dljob dljob-train`). Incremental: a second run
# rebuilds only what changed. `scripts/dev/build.sh --configure` only configures (once; later
# runs find build/ configured and do nothing). BUILD_DIR, BUILD_TYPE and JOBS (default: the
# number of CPUs) may be set in the environment. A build directory is configured with Ninja when
# it is installed, and with ccache as the compiler launcher when ccache is on PATH
# (scripts/dev/setup.sh installs it): a rebuild of unchanged sources, in any checkout, is then a
# matter of cache hits. A build/ configured before ccache was installed keeps compiling without
# it; remove build/CMakeCache.txt to pick it up.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
JOBS=${JOBS:-$(nproc)}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake_args
  cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
fi
if [ "${1:-}" = --configure ]; then exit 0; fi
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
