#!/usr/bin/env bash
# The operator benchmarks on the real kube-apiserver: a bare API server with etcd and the
# controller-manager (scripts/cluster/apiserver-only.sh, in a temporary directory, on ports apart
# from kube-up's and the tests'), simulated GPU nodes that run bound pods (dljob-sim-nodes), and
# then operator_bench (--jobs N DLJobs of 5 pods against the bare-pods baseline, the default) or
# queue_bench (--queue: the Kueue-shaped case) with that server's kubeconfig. Everything it started
# is stopped by PID, and the directory removed, also on failure or Ctrl-C. Needs the Kubernetes
# binaries kube-up.sh caches; no root, nothing but 127.0.0.1.
#
# Usage: bench/operator_real.sh [--queue] [--nodes N] [--gpus-per-node G] [-- BENCH FLAGS...]
#   bench/operator_real.sh --nodes 1000 -- --jobs 1000
#   bench/operator_real.sh --queue --nodes 40 --gpus-per-node 32 -- --scale 0.1
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/cluster/private-apiserver.sh"
BIN="${BIN:-$ROOT/build/bin}"
MODE=operator
NODES=""
GPUS=8
while [ $# -gt 0 ]; do
  case "$1" in
    --queue) MODE=queue ;;
    --nodes) NODES="$2"; shift ;;
    --gpus-per-node) GPUS="$2"; shift ;;
    --) shift; break ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown flag $1 (see --help)" ;;
  esac
  shift
done
if [ -z "$NODES" ]; then
  if [ "$MODE" = queue ]; then NODES=40; GPUS=32; else NODES=1000; fi
fi
for b in dljob-sim-nodes dljob-operator operator_bench queue_bench; do
  [ -x "$BIN/$b" ] || die "$BIN/$b is missing: build it (ninja -C build $b)"
done

# Each followed launcher log is a connection from the operator to the API server and one from
# the API server to dljob-sim-nodes' kubelet endpoint: 10,000 jobs need more than the usual 20,000
# open files in kube-apiserver. Raised where this shell may (root with CAP_SYS_RESOURCE; the VM of
# docs/benchmarks has neither, and stays at 20,000); the limit is printed either way.
ulimit -Hn 262144 2>/dev/null && ulimit -n 262144 2>/dev/null
private_apiserver dljob-operator-real 16743 12679 10657

say "starting kube-apiserver, etcd and kube-controller-manager (apiserver-only.sh)"
"$ROOT/scripts/cluster/apiserver-only.sh" up --controller-manager --crds >"$TMP/up.log" 2>&1 ||
  { cat "$TMP/up.log"; die "apiserver-only.sh up failed"; }
say "registering $NODES simulated nodes with $GPUS GPUs each (dljob-sim-nodes)"
# Lease renewals at the default 10 s: the controller-manager's node monitor grace period is 20 s,
# and a renewal later than that has the node lifecycle controller set every pod of the node
# Ready=False, which dljob-sim-nodes does not undo (a kubelet would): a run with 20 s renewals
# left a job waiting for Ready workers for good.
"$BIN/dljob-sim-nodes" --kubeconfig "$KUBECONFIG" --nodes "$NODES" --gpus-per-node "$GPUS" \
  --progress-seconds 30 --ready-file "$TMP/ready" >"$TMP/sim.log" 2>&1 &
SIM_PID=$!
until [ -f "$TMP/ready" ]; do
  kill -0 "$SIM_PID" 2>/dev/null || { cat "$TMP/sim.log"; die "dljob-sim-nodes failed"; }
  sleep 0.5
done
grep registered "$TMP/sim.log" | tail -n 1
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, open files limit $(ulimit -n)"
status=0
if [ "$MODE" = queue ]; then
  "$BIN/queue_bench" --kubeconfig "$KUBECONFIG" "$@" || status=$?
else
  "$BIN/operator_bench" --kubeconfig "$KUBECONFIG" "$@" || status=$?
fi
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
say "dljob-sim-nodes at the end: $(tail -n 1 "$TMP/sim.log")"
exit "$status"
