#!/usr/bin/env bash
# The test suite: installs what dljob needs (scripts/dev/setup.sh), builds, and runs ctest.
#
#   scripts/test.sh           builds everything and runs every test (but the opt-in labels
#                             below), then the libFuzzer target for a while
#   scripts/test.sh --fast    builds only the unit tier's binaries (the target unit_tests) and
#                             runs `ctest -L unit`: under a minute once built
#
# Every ctest test carries exactly one tier label (cmake/dljob_tests.cmake registers them, and
# this script checks the built suite before running it):
#   unit   in-process tests that start no other program: no mpirun, no dljob, dljob-train,
#          dljob-operator, dljob-test-apiserver, s3rver, kubectl, podman or shell process
#          (threads and loopback sockets inside the test are fine)
#   mpi    tests run under mpirun: several ranks of a test binary or of dljob-train
#   e2e    tests that run whole programs as processes (the CLI, the operator against the test
#          API server, kubectl, s3rver, the trainer's shell tests, the images, the cluster)
# and two opt-in labels beside the tier (e2e):
#   container  DLJOB_IMAGE_TESTS=1 also builds the CPU container image with podman and runs a
#              2-rank job in it: 8 min 37 s on a fresh idle 2-core machine (2026-11-25), seconds
#              once podman's cache is warm (ctest -L container runs them alone)
#   cluster    DLJOB_CLUSTER_TESTS=1 also runs the tests on a real Kubernetes (tests/cluster/):
#              they need the one-machine cluster of scripts/cluster/kube-up.sh (KUBECONFIG,
#              default /var/lib/dljob-kube/kubeconfig) and fail when none answers;
#              scripts/cluster/e2e.sh does it all from a fresh clone
# One tier by hand: ctest --test-dir build -L '^mpi$'   (or -L '^e2e$' -LE 'container|cluster')
# FUZZ_SECONDS (default 20) sets the fuzzing time of the full run; 0 skips it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
FAST=0
case "${1:-}" in
  "") ;;
  --fast) FAST=1 ;;
  -h|--help) show_help; exit 0 ;;
  *) die --exit 2 "unknown argument '$1' (see --help)" ;;
esac

# check_tiers: every test ctest lists has exactly one of the tier labels (a test whose binary is
# not built yet, NAME_NOT_BUILT, has none and is not counted).
check_tiers() {
  ctest --test-dir build --show-only=json-v1 | python3 -c '
import json, sys
tiers = {"unit", "mpi", "e2e"}
bad, counts = [], {t: 0 for t in sorted(tiers)}
for test in json.load(sys.stdin)["tests"]:
    if test["name"].endswith("_NOT_BUILT"):
        continue
    labels = next((p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"), [])
    mine = tiers.intersection(labels)
    if len(mine) != 1:
        bad.append("%s (labels: %s)" % (test["name"], ", ".join(labels) or "none"))
    else:
        counts[mine.pop()] += 1
if bad:
    sys.exit("test: these tests need exactly one tier label (unit, mpi or e2e; "
             "cmake/dljob_tests.cmake):\n  " + "\n  ".join(bad))
print("test: tiers: " + ", ".join("%s %d" % kv for kv in counts.items()))
'
}

bash scripts/dev/setup.sh
if [ "$FAST" = 1 ]; then
  bash scripts/dev/build.sh unit_tests
  check_tiers
  start=$SECONDS
  ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 120 -L '^unit$' \
    --no-tests=error
  say "unit tier: $((SECONDS - start))s"
  exit 0
fi

bash scripts/dev/build.sh
check_tiers
# ctest takes one -LE regular expression: the labels left out, joined with |.
excluded=()
if [ "${DLJOB_IMAGE_TESTS:-0}" != 1 ]; then excluded+=(container); fi
if [ "${DLJOB_CLUSTER_TESTS:-0}" != 1 ]; then excluded+=(cluster); fi
exclude=()
if [ ${#excluded[@]} -gt 0 ]; then exclude=(-LE "^($(IFS='|'; echo "${excluded[*]}"))\$"); fi
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600 "${exclude[@]}"
if [ "${FUZZ_SECONDS:-20}" != 0 ]; then
  bash scripts/dev/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
