#!/usr/bin/env bash
# dljob-sim-nodes against a real kube-apiserver and etcd (label `cluster`, opt-in): starts its own
# bare API server with scripts/cluster/apiserver-only.sh (etcd, kube-apiserver and
# kube-controller-manager on 127.0.0.1, ports apart from kube-up's and apiserver-only's defaults,
# state in a temporary directory), runs dljob-sim-nodes with 50 nodes, and checks: the nodes are
# registered with their GPUs and labels; their Leases are renewed; they stay Ready past the node
# lifecycle controller's grace period; pods bound to them go Running and Ready, then Succeeded or
# Failed when annotated sim.dljob.io/exit-code; `kubectl logs` reads a pod's log from the
# simulated kubelet endpoint and `kubectl logs -f` ends when the pod finishes; a gracefully
# deleted pod disappears; SIGTERM
# deletes the nodes and leases. Everything started here is stopped by PID on exit, whatever
# happened. Needs the binaries kube-up.sh caches (FAILS naming it when they are missing), not
# root, and never touches kube-up's cluster.
#
# Usage: tests/sim_nodes/cluster_test.sh [path/to/dljob-sim-nodes]
set -uo pipefail
PROG=sim_nodes.cluster
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
SIM_BIN="${1:-$ROOT/build/bin/dljob-sim-nodes}"
NODES=50
WAIT=120

TMP="$(mktemp -d /tmp/dljob-sim-nodes-ct.XXXXXX)"
export DLJOB_APISERVER_DIR="$TMP/apiserver"
export DLJOB_APISERVER_PORT="${DLJOB_CT_APISERVER_PORT:-16543}"
export DLJOB_APISERVER_ETCD_PORT="${DLJOB_CT_ETCD_PORT:-12479}"
export DLJOB_APISERVER_CM_PORT="${DLJOB_CT_CM_PORT:-10457}"
export KUBECONFIG="$DLJOB_APISERVER_DIR/kubeconfig"  # this server's only, never kube-up's
SIM_PID=""
FOLLOW_PID=""

cleanup() {
  local rc=$?
  if [ -n "$FOLLOW_PID" ]; then kill "$FOLLOW_PID" 2>/dev/null; fi
  if [ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null; then
    kill -TERM "$SIM_PID"
    wait "$SIM_PID" 2>/dev/null
  fi
  "$ROOT/scripts/cluster/apiserver-only.sh" down >/dev/null 2>&1 || warn "apiserver-only.sh down failed"
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # so that cleanup runs on a signal too

fail() {
  echo "FAIL: $*"
  echo "--- dljob-sim-nodes output (last 20 lines)"
  tail -n 20 "$TMP/sim.log" 2>/dev/null
  echo "--- pods"
  kubectl get pods -o wide 2>&1 | head -20
  exit 1
}

# until_ok SECONDS WHAT COMMAND...: polls COMMAND every half second.
until_ok() {
  local seconds="$1" what="$2" end=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || fail "$what (not after ${seconds}s)"
    sleep 0.5
  done
}

[ -x "$SIM_BIN" ] || fail "$SIM_BIN is not built: run scripts/dev/build.sh dljob-sim-nodes"
"$ROOT/scripts/cluster/apiserver-only.sh" up --controller-manager >"$TMP/up.log" 2>&1 ||
  { cat "$TMP/up.log"; fail "scripts/cluster/apiserver-only.sh up failed"; }
say "API server up on 127.0.0.1:$DLJOB_APISERVER_PORT"

"$SIM_BIN" --kubeconfig "$KUBECONFIG" --nodes "$NODES" --name-prefix ct-node- \
  --renew-seconds 2 --progress-seconds 5 --ready-file "$TMP/ready" >"$TMP/sim.log" 2>&1 &
SIM_PID=$!
until_ok "$WAIT" "dljob-sim-nodes registered its nodes" test -f "$TMP/ready"
say "$(grep registered "$TMP/sim.log")"

count=$(kubectl get nodes -l dljob.io/simulated-node=true -o name | wc -l)
[ "$count" = "$NODES" ] || fail "$count simulated nodes, want $NODES"
labels=$(kubectl get node ct-node-7 -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.clique} {.metadata.labels.dljob\.io/rack} {.metadata.labels.topology\.kubernetes\.io/zone} {.status.allocatable.nvidia\.com/gpu}')
[ "$labels" = "clique-7 rack-3 zone-a 8" ] || fail "ct-node-7: labels and GPUs '$labels'"

renewed=$(kubectl get lease -n kube-node-lease ct-node-49 -o jsonpath='{.spec.renewTime}')
lease_renewed() {
  [ "$(kubectl get lease -n kube-node-lease ct-node-49 -o jsonpath='{.spec.renewTime}')" != "$renewed" ]
}
until_ok 30 "the lease of ct-node-49 renewed" lease_renewed
say "leases renewed"

for i in 0 1 2 3; do
  cat <<POD
apiVersion: v1
kind: Pod
metadata: {name: p$i, namespace: default}
spec:
  nodeName: ct-node-$((i * 10))
  automountServiceAccountToken: false
  containers: [{name: main, image: dljob/trainer:cpu}]
---
POD
done >"$TMP/pods.yaml"
# The namespace's default ServiceAccount comes from the controller-manager, a moment after start.
until_ok 60 "the default ServiceAccount" kubectl get serviceaccount default
kubectl create -f "$TMP/pods.yaml" >/dev/null || fail "kubectl create of the pods failed"
for i in 0 1 2 3; do
  until_ok "$WAIT" "p$i Ready" kubectl wait --for condition=Ready --timeout 1s "pod/p$i"
done
ip=$(kubectl get pod p1 -o jsonpath='{.status.podIP} {.status.hostIP}')
[[ "$ip" == "127.64.10."*" 127.0.0.1" ]] || fail "p1: podIP and hostIP '$ip', want 127.64.10.x 127.0.0.1 (the kubelet endpoint's)"
say "4 pods Running and Ready"

# Their logs, through the API server from the simulated kubelet endpoint (kubelet_logs.h).
logs=$(kubectl logs p1 2>&1)
[ "$logs" = "dljob-sim-nodes: started on ct-node-10" ] || fail "kubectl logs p1: '$logs'"
kubectl logs -f p0 >"$TMP/p0.log" 2>&1 &
FOLLOW_PID=$!
sleep 1
kill -0 "$FOLLOW_PID" 2>/dev/null || fail "kubectl logs -f p0 ended while p0 runs: $(cat "$TMP/p0.log")"
say "kubectl logs reads a simulated node's container log, and -f follows it"

kubectl annotate pod p0 sim.dljob.io/exit-code=0 >/dev/null
kubectl annotate pod p1 sim.dljob.io/exit-code=2 >/dev/null
phase_is() { [ "$(kubectl get pod "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }
until_ok "$WAIT" "p0 Succeeded" phase_is p0 Succeeded
until_ok "$WAIT" "p1 Failed" phase_is p1 Failed
code=$(kubectl get pod p1 -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')
[ "$code" = 2 ] || fail "p1: exit code '$code', want 2"
say "told pods finished (Succeeded, Failed with 2)"
followed_to_end() { ! kill -0 "$FOLLOW_PID" 2>/dev/null; }
until_ok 30 "kubectl logs -f p0 ended once p0 finished" followed_to_end
wait "$FOLLOW_PID" || fail "kubectl logs -f p0 exited $?: $(cat "$TMP/p0.log")"
[ "$(cat "$TMP/p0.log")" = "dljob-sim-nodes: started on ct-node-0
dljob-sim-nodes: exited with code 0" ] || fail "kubectl logs -f p0 read '$(cat "$TMP/p0.log")'"
say "the followed log ended with the exit line when p0 finished"

kubectl delete pod p2 --wait=false >/dev/null || fail "kubectl delete pod p2 failed"
gone() { ! kubectl get pod p2 >/dev/null 2>&1; }
until_ok 30 "p2 deleted (its 30 s grace period is the kubelet's to cut short)" gone
say "a deleted pod is gone"

# Past the node lifecycle controller's grace period (apiserver-only: 20 s) the nodes are Ready
# only if their leases are fresh.
sleep 25
ready=$(kubectl get nodes -l dljob.io/simulated-node=true \
  -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
  grep -cx True)
[ "$ready" = "$NODES" ] || fail "$ready of $NODES nodes Ready after the grace period"
say "all $NODES nodes still Ready after 25 s"

kill -TERM "$SIM_PID"
wait "$SIM_PID" || fail "dljob-sim-nodes exited $? on SIGTERM"
SIM_PID=""
count=$(kubectl get nodes -l dljob.io/simulated-node=true -o name | wc -l)
leases=$(kubectl get leases -n kube-node-lease -o name | grep -c ct-node-)
[ "$count" = 0 ] && [ "$leases" = 0 ] || fail "after SIGTERM: $count nodes and $leases leases left"
say "PASS: nodes and leases deleted on SIGTERM"
