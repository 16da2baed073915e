#!/usr/bin/env bash
# dljob end to end on a real Kubernetes, from a fresh clone: clones this checkout's HEAD (a local
# clone: nothing is fetched), installs and builds what it needs there (scripts/dev/setup.sh,
# scripts/dev/build.sh of the programs the tests run besides kubectl: dljob, dljob-operator with the
# shared operator cases, operator_cluster_test, and dljob-sim-nodes; with ccache that is minutes),
# starts the one-machine cluster with scripts/cluster/kube-up.sh --nodes N from the clone (which
# compiles the images' programs in the clone's build-images/, after this build and before the
# Kubernetes one, then makes the images from them and loads them; N is 2 unless --nodes says
# otherwise: the label's multi-node cases need two), runs the ctest label `cluster` against it with
# DLJOB_CLUSTER_TESTS=1 and KUBECONFIG set, and stops the cluster and removes the clone on exit,
# whatever happened.
#
# Usage: scripts/cluster/e2e.sh [--nodes N] [--reuse-images] [--keep]
#   --nodes N       the cluster's nodes (kube-up.sh --nodes; default 2, 1 to 4): on one node the
#                   multi-node cases fail, saying so
#   --reuse-images  load the dljob images podman already has instead of rebuilding them
#   --keep          leave the cluster running and the clone in place (prints where)
# Environment: DLJOB_E2E_TMP (where the clone goes; default /tmp), DLJOB_E2E_LOG (a file that
# keeps ctest's full output, every test's included; default none), DLJOB_KUBE_DIR (as kube-up.sh).
# Needs root (kube-up.sh). Exit code: ctest's (no test in the label counts as a failure), or 1
# when a step before it or kube-down.sh failed. Prints each step's elapsed time, and a summary.
# Measured on the 2-core build machine: see docs/benchmarks/setup-and-build.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SRC="$ROOT"
IMAGES=--rebuild-images
KEEP=0
NODES=2
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-4]$ ]] || die --exit 2 "--nodes needs a count from 1 to 4 (see --help)"
      NODES="$2"; shift 2 ;;
    --reuse-images) IMAGES=""; shift ;;
    --keep) KEEP=1; shift ;;
    -h|--help) show_help; exit 0 ;;
    *) die --exit 2 "unknown argument '$1' (see --help)" ;;
  esac
done
# Each step (lib.sh's step) prints the time so far; the summary lists each step's time.
[ "$(id -u)" = 0 ] || die "needs root (scripts/cluster/kube-up.sh: bridge, mounts, iptables)"

mkdir -p "${DLJOB_E2E_TMP:-/tmp}"
WORK=$(mktemp -d "${DLJOB_E2E_TMP:-/tmp}/dljob-e2e.XXXXXX")
CLONE="$WORK/dljob"
cleanup() {
  local rc=$?
  step_times
  if [ "$KEEP" = 1 ]; then
    step "kept: the clone in $CLONE, the cluster (export KUBECONFIG=${DLJOB_KUBE_DIR:-/var/lib/dljob-kube}/kubeconfig)"
    return
  fi
  if [ -n "${DLJOB_E2E_LOG:-}" ] && [ -f "$CLONE/build/Testing/Temporary/LastTest.log" ]; then
    cp "$CLONE/build/Testing/Temporary/LastTest.log" "$DLJOB_E2E_LOG" && step "ctest's full log: $DLJOB_E2E_LOG"
  fi
  if [ -x "$CLONE/scripts/cluster/kube-down.sh" ]; then bash "$CLONE/scripts/cluster/kube-down.sh" --quiet || rc=1; fi
  rm -rf "$WORK"
  step "done (exit $rc)"
  exit $rc
}
trap cleanup EXIT

step "cloning $(git -C "$SRC" rev-parse --short HEAD) into $CLONE"
git clone -q --no-hardlinks "$SRC" "$CLONE"
cd "$CLONE"
# The object-store tests' S3 server lives in the source checkout's .deps (git-ignored).
if [ -d "$SRC/.deps" ]; then ln -s "$SRC/.deps" .deps; fi
step "setup and build"
bash scripts/dev/setup.sh
# scripts/dev/build.sh compiles through ccache where it is installed: the clone's build is a
# matter of cache hits (with ccache's base_dir above the clone, DLJOB_E2E_TMP, hits are shared
# with other checkouts).
nice -n 10 bash scripts/dev/build.sh dljob dljob-operator operator_cluster_test dljob-sim-nodes
step "kube-up --nodes $NODES"
# shellcheck disable=SC2086
bash scripts/cluster/kube-up.sh --nodes "$NODES" $IMAGES
export KUBECONFIG="${DLJOB_KUBE_DIR:-/var/lib/dljob-kube}/kubeconfig"
step "ctest -L cluster"
DLJOB_CLUSTER_TESTS=1 ctest --test-dir build -L cluster --no-tests=error --output-on-failure \
  --timeout 1800
