#!/usr/bin/env bash
# The whole test suite: installs what dljob needs, builds it, runs every test under ctest (unit,
# multi-rank under mpirun, end to end through the dljob binary), then the libFuzzer target for a
# short while. FUZZ_SECONDS (default 20) sets the fuzzing time; 0 skips it.
# DLJOB_IMAGE_TESTS=1 also builds the CPU container image with podman and runs a 2-rank job in it
# (label "container"): 8 min 37 s on a fresh idle 2-core machine (2026-11-25), seconds once
# podman's cache is warm, so it is opt-in here (ctest -L container runs it alone).
# DLJOB_CLUSTER_TESTS=1 also runs the tests on a real Kubernetes (label "cluster", tests/cluster/):
# they need the one-machine cluster of scripts/kube-up.sh (KUBECONFIG, default
# /var/lib/dljob-kube/kubeconfig) and fail when none answers; scripts/e2e.sh does it all from a
# fresh clone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# ctest takes one -LE regular expression: the labels left out, joined with |.
excluded=()
if [ "${DLJOB_IMAGE_TESTS:-0}" != 1 ]; then excluded+=(container); fi
if [ "${DLJOB_CLUSTER_TESTS:-0}" != 1 ]; then excluded+=(cluster); fi
exclude=()
if [ ${#excluded[@]} -gt 0 ]; then exclude=(-LE "^($(IFS='|'; echo "${excluded[*]}"))\$"); fi
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 "${exclude[@]}"
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
