#!/bin/sh
# The builder stage of the dljob trainer images (images/cpu, images/cuda): configures the checkout
# at /src in /build (Release; tests and benchmarks off), builds dljob-train and dljob, and installs
# both, stripped, in /out for the runtime stage. Every image carries both programs: dljob-train
# runs the ranks, and dljob is the command of the operator's cache init containers (`dljob data
# cache`, operator/controller/volumes.h), which run in the job's image.
#   build-dljob.sh [CMAKE_ARG...]   extra configure arguments (e.g. where LibTorch and nvcc are)
# BUILD_JOBS: parallel compile jobs (unset or 0: every core). /build is the Containerfiles' cache
# mount, so a rebuild after a source edit recompiles only what changed.
set -eu

cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDLJOB_BUILD_TESTS=OFF -DDLJOB_BUILD_BENCH=OFF "$@"
jobs="${BUILD_JOBS:-0}"
[ "$jobs" -gt 0 ] || jobs="$(nproc)"
cmake --build /build -j"$jobs" --target dljob-train dljob
mkdir -p /out
install -s /build/bin/dljob-train /build/bin/dljob /out/
