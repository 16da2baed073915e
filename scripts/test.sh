#!/usr/bin/env bash
# The whole test suite: installs what dljob needs, builds it, runs every test under ctest (unit,
# multi-rank under mpirun, end to end through the dljob binary), then the libFuzzer target for a
# short while. FUZZ_SECONDS (default 20) sets the fuzzing time; 0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
