#!/usr/bin/env bash
# The operator without a cluster: starts dljob's test API server (a Kubernetes API server for
# tests, with two simulated 8-GPU nodes whose kubelets start bound pods), runs dljob-operator
# against it, applies examples/resnet-job.yaml with stock kubectl, plays the launcher's metric
# output and completion through the test server's /_test API, and shows what the operator made
# of it. Nothing trains: the pods are simulated. Everything it starts is stopped on exit.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
bash scripts/dev/setup.sh
bash scripts/dev/build.sh dljob dljob-operator dljob-test-apiserver
BIN=$PWD/build/bin
DIR=$(mktemp -d /tmp/dljob-cluster-demo.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

"$BIN/dljob-test-apiserver" --port 0 --port-file "$DIR/port" --kubeconfig-out "$DIR/kubeconfig" \
  --nodes 2 --gpus-per-node 8 --kubelet-delay-ms 500 >"$DIR/apiserver.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$DIR/port" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$DIR/port")"
export KUBECONFIG=$DIR/kubeconfig

"$BIN/dljob-operator" --kubeconfig "$KUBECONFIG" --leader-elect=false --metrics-port 0 \
  --port-file "$DIR/metrics-port" --log-archive-dir "$DIR/logs" >"$DIR/operator.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$DIR/metrics-port" ] && break; sleep 0.1; done
METRICS="http://127.0.0.1:$(cat "$DIR/metrics-port")"

show() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
post() { curl -sf -X POST "$API$1" --data-binary @- >/dev/null; }

kubectl create namespace team-a >/dev/null
show kubectl apply -f examples/resnet-job.yaml
kubectl apply -f examples/resnet-job.yaml
sleep 3
show kubectl get dljobs,pods -n team-a -o wide
kubectl get dljobs,pods -n team-a -o wide

# What the launcher's mpirun would print: every rank's metric line, tagged.
for rank in $(seq 0 15); do
  printf '[1,%d]<stdout>:DLJOB_METRIC {"step":100,"epoch":1,"images_per_sec":%s,"loss":2.31,"rank":%d,"world_size":16}\n' \
    "$rank" "$((1180 + rank))" "$rank"
done | post /_test/pods/team-a/resnet50-launcher/log
sleep 2
show dljob top -n team-a
"$BIN/dljob" top -n team-a
show "curl $METRICS/metrics | grep resnet50"
curl -s "$METRICS/metrics" | grep 'dljob="resnet50"'

echo '{"phase":"Succeeded","exitCode":0}' | post /_test/pods/team-a/resnet50-launcher/status
sleep 2
show dljob get resnet50 -n team-a
"$BIN/dljob" get resnet50 -n team-a
show "dljob logs resnet50 -n team-a --rank 3   (from the operator's archive: $DIR/logs)"
"$BIN/dljob" logs resnet50 -n team-a --rank 3 2>/dev/null ||
  cat "$DIR"/logs/team-a/resnet50/*/*.log | grep '^\[rank 3\]'
show kubectl get events -n team-a -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message
kubectl get events -n team-a -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message
