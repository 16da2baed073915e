#!/usr/bin/env bash
# How fast dljob-sim-nodes turns pods Running on a real API server: its own bare API server
# (scripts/cluster/apiserver-only.sh up, in a temporary directory, ports apart from kube-up's;
# no controller-manager, so that no node lifecycle work competes: the nodes are left without
# renewals while the pods are made, and the `default` ServiceAccount is created here), NODES
# simulated nodes registered, then kept with --keep-nodes while PODS pods bound to them are
# created (kubectl create, spread round-robin); dljob-sim-nodes started again finds them all
# Pending and starts them. Printed: registration time, pod creation time, and the
# start rate (pods / seconds from its first to its last progress line that saw pods start, one
# line a second), with the lease renewals' lateness meanwhile. Not a test; stops what it started.
#
# Usage: tests/sim_nodes/measure_rate.sh [path/to/dljob-sim-nodes]   (NODES=1000 PODS=5000)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/cluster/private-apiserver.sh"
SIM_BIN="${1:-$ROOT/build/bin/dljob-sim-nodes}"
NODES="${NODES:-1000}"
PODS="${PODS:-5000}"
private_apiserver dljob-sim-nodes-rate 16643 12579 10557
sim() { exec "$SIM_BIN" --kubeconfig "$KUBECONFIG" --nodes "$NODES" --progress-seconds 1 "$@"; }

"$ROOT/scripts/cluster/apiserver-only.sh" up >"$TMP/up.log" 2>&1 ||
  { cat "$TMP/up.log"; die "apiserver-only.sh up failed"; }
sim --ready-file "$TMP/ready1" --keep-nodes >"$TMP/sim1.log" 2>&1 &
SIM_PID=$!
until [ -f "$TMP/ready1" ]; do kill -0 "$SIM_PID" || { cat "$TMP/sim1.log"; die "dljob-sim-nodes failed"; }; sleep 0.5; done
grep registered "$TMP/sim1.log"
kill -TERM "$SIM_PID"; wait "$SIM_PID"; SIM_PID=""

kubectl create serviceaccount default >/dev/null || die "kubectl create serviceaccount failed"
for ((i = 0; i < PODS; i++)); do
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: r%d, namespace: default}\nspec:\n  nodeName: sim-node-%d\n  automountServiceAccountToken: false\n  containers: [{name: main, image: dljob/trainer:cpu}]\n---\n' \
    "$i" $((i % NODES))
done >"$TMP/pods.yaml"
t0=$SECONDS
kubectl create -f "$TMP/pods.yaml" >/dev/null || die "kubectl create failed"
say "created $PODS pods in $((SECONDS - t0))s (kubectl create, one request at a time)"

sim --ready-file "$TMP/ready2" --keep-nodes >"$TMP/sim2.log" 2>&1 &  # the server goes anyway
SIM_PID=$!
until grep -q "pods started $PODS," "$TMP/sim2.log"; do
  kill -0 "$SIM_PID" || { tail "$TMP/sim2.log"; die "dljob-sim-nodes failed"; }
  sleep 1
done
sleep 12  # a full renewal period at the new rate
grep registered "$TMP/sim2.log"
awk -v pods="$PODS" '
  /registered/ { prev_t = substr($2, 2) + 0 }
  /pods started/ {
    t = substr($2, 2) + 0; match($0, /pods started [0-9]+/); n = substr($0, RSTART + 13, RLENGTH - 13) + 0
    if (n > 0 && first == "") first = prev_t
    if (n >= pods && last == "") last = t
    prev_t = t
  }
  END { printf "started %d pods in %.1f s (between progress lines): %.0f pods/s\n", pods, last - first, pods / (last - first) }
' "$TMP/sim2.log"
tail -n 1 "$TMP/sim2.log"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
