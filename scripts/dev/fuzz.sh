#!/usr/bin/env bash
# Builds jobs/ and http/ with clang + libFuzzer (ASan, UBSan) in build-fuzz/ and runs both fuzz
# ctests side by side: job_parse_fuzzer (job files, metric lines, volume URIs) and
# http_parse_fuzzer (HTTP heads and chunked bodies), each for SECONDS.
#
#   scripts/dev/fuzz.sh [SECONDS]     # default 20; e.g. scripts/dev/fuzz.sh 600 for a longer
# session
#
# New interesting inputs stay in build-fuzz/{jobs,http}/fuzz/corpus/; crashes are written to the
# ctest's working directory (build-fuzz/{jobs,http}/fuzz/) as crash-*/timeout-*. Add a crasher
# to jobs/fuzz/corpus/ or http/fuzz/corpus/ once it is fixed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
seconds="${1:-20}"
cmake_args
cmake -S . -B build-fuzz "${CMAKE_ARGS[@]}" -DCMAKE_CXX_COMPILER=clang++ -DDLJOB_FUZZ_ONLY=ON \
  -DDLJOB_FUZZ_TIME="${seconds}"
cmake --build build-fuzz -j "${JOBS:-1}"
cd build-fuzz
ctest -R '^(job|http)_parse_fuzzer$' -j 2 --output-on-failure --timeout $((seconds + 120))
