#!/bin/sh
# The builder stage of images/cuda/Containerfile, the one dljob image that compiles in its build
# (its CUDA LibTorch and Ubuntu base are no dljob host's; images/cpu and images/operator take
# programs compiled on the host, scripts/cluster/build-image.sh): configures the checkout at /src
# in /build (Release; tests and benchmarks off), builds the programs named, and installs them,
# stripped, in /out for the runtime stage.
#   build-dljob.sh [--target PROGRAM]... [CMAKE_ARG...]
# Without --target it builds what every trainer image carries: dljob-train, which runs the ranks,
# and dljob, the command of the operator's cache init containers (`dljob data cache`,
# operator/controller/volumes.h), which run in the job's image.
# CMAKE_ARGs are extra configure arguments (e.g. where LibTorch and nvcc are).
# BUILD_JOBS: parallel compile jobs (unset or 0: every core). /build is the Containerfile's cache
# mount, so a rebuild after a source edit recompiles only what changed.
set -eu

targets=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets="$targets $2"; shift 2 ;;
    *) break ;;
  esac
done
[ -n "$targets" ] || targets="dljob-train dljob"

cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDLJOB_BUILD_TESTS=OFF -DDLJOB_BUILD_BENCH=OFF "$@"
jobs="${BUILD_JOBS:-0}"
[ "$jobs" -gt 0 ] || jobs="$(nproc)"
# $targets is a word list on purpose.
# shellcheck disable=SC2086
cmake --build /build -j"$jobs" --target $targets
mkdir -p /out
for target in $targets; do
  install -s "/build/bin/$target" /out/
done
