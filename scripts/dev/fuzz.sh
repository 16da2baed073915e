#!/usr/bin/env bash
# Builds jobs/ with clang + libFuzzer (ASan, UBSan) in build-fuzz/ and runs the fuzz ctest.
#
#   scripts/dev/fuzz.sh [SECONDS]     # default 20; e.g. scripts/dev/fuzz.sh 600 for a longer
# session
#
# New interesting inputs stay in build-fuzz/jobs/fuzz/corpus/; crashes are written to the
# current directory as crash-*/timeout-*. Add a crasher to jobs/fuzz/corpus/ once it is fixed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
seconds="${1:-20}"
cmake_args
cmake -S . -B build-fuzz "${CMAKE_ARGS[@]}" -DCMAKE_CXX_COMPILER=clang++ -DDLJOB_FUZZ_ONLY=ON \
  -DDLJOB_FUZZ_TIME="${seconds}"
cmake --build build-fuzz -j "${JOBS:-1}"
cd build-fuzz
ctest -R job_parse_fuzzer --output-on-failure --timeout $((seconds + 120))
