#!/usr/bin/env bash
# Configures and builds into build/ (programs in build/bin/): everything, or only the targets
# named as arguments (e.g. `scripts/build.sh dljob dljob-train`). Incremental: a second run
# rebuilds only what changed. `scripts/build.sh --configure` only configures (once; later runs
# find build/ configured and do nothing). BUILD_DIR and BUILD_TYPE may be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
JOBS=${JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
fi
if [ "${1:-}" = --configure ]; then exit 0; fi
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
