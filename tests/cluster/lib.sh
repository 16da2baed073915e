# shellcheck shell=bash disable=SC2034  # MANIFEST, TRAIN, KUBE_DIR: for the scripts that source it
# Shared by the `cluster` tests (sourced, not run): they drive a real Kubernetes started by
# scripts/cluster/kube-up.sh with stock kubectl (its default client-side validation) and
# build/bin/dljob.
#
# Contract: `cluster_begin NAME` checks that a cluster answers at $KUBECONFIG (default: the admin
# kubeconfig kube-up.sh writes, /var/lib/dljob-kube/kubeconfig) and FAILS (exit 1, never a skip)
# naming scripts/cluster/kube-up.sh when none does; it makes a fresh namespace `dljob-ct-NAME-<pid>`
# ($NS) and a temporary directory ($TMP) that are deleted on exit, whatever happened. Every wait is
# bounded (WAIT_SECONDS, default 600): a stuck job fails the test instead of hanging it; no
# assertion depends on how long something took.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KUBE_DIR="${DLJOB_KUBE_DIR:-/var/lib/dljob-kube}"  # kube-up's state: kubeconfigs, logs
export KUBECONFIG="${KUBECONFIG:-$KUBE_DIR/kubeconfig}"
WAIT_SECONDS="${WAIT_SECONDS:-600}"
MANIFEST="$ROOT/charts/manifests/dljob.yaml"
NS=""
TMP=""
T0=$SECONDS

fail() {
  echo "FAIL: $*"
  if [ -n "$NS" ]; then
    echo "--- kubectl get dljobs,pods -n $NS -o wide"
    kubectl get dljobs,pods -n "$NS" -o wide 2>&1
    echo "--- events in $NS"
    kubectl get events -n "$NS" --sort-by=.lastTimestamp 2>&1 | tail -40
  fi
  exit 1
}
note() { echo "cluster-test: [$((SECONDS - T0))s] $*"; }

# Fails unless the API server at $KUBECONFIG answers and every node is Ready.
require_cluster() {
  command -v kubectl >/dev/null || fail "kubectl is not installed (scripts/dev/setup.sh installs it)"
  [ -r "$KUBECONFIG" ] || fail "no kubeconfig at $KUBECONFIG: no cluster is up; start one with 'sudo bash scripts/cluster/kube-up.sh' (or set KUBECONFIG)"
  kubectl get --raw /readyz >/dev/null 2>&1 \
    || fail "no cluster answers at $KUBECONFIG ($(kubectl get --raw /readyz 2>&1 | tail -1)); start one with 'sudo bash scripts/cluster/kube-up.sh'"
  kubectl wait --for=condition=Ready node --all --timeout=60s >/dev/null \
    || fail "a node of the cluster is not Ready; restart it with 'sudo bash scripts/cluster/kube-down.sh && sudo bash scripts/cluster/kube-up.sh --nodes 2'"
}

# Fails unless the operator (charts/manifests/dljob.yaml) is installed and Ready.
require_operator() {
  kubectl get crd dljobs.dljob.io >/dev/null 2>&1 \
    || fail "the DLJob CRD is not installed: run this test through ctest (fixture cluster.operator_install) or 'kubectl apply -f charts/manifests/dljob.yaml'"
  kubectl -n dljob-system rollout status deployment/dljob-operator --timeout=120s >/dev/null \
    || fail "the operator Deployment is not available"
}

# RESTORE: a function a test names here to undo the fault it made (start a stopped kubelet,
# uncordon a node) before its namespace goes; cleanup runs it whatever happened, once.
RESTORE=""
cleanup() {
  local rc=$?
  if [ -n "$RESTORE" ]; then
    "$RESTORE" || { echo "cleanup: $RESTORE failed"; rc=1; }
    RESTORE=""
  fi
  if [ -n "$NS" ]; then
    # A deleted namespace takes its DLJobs, pods, Services and Secrets with it.
    kubectl delete namespace "$NS" --wait=true --timeout=180s >/dev/null 2>&1 \
      || { echo "cleanup: namespace $NS not deleted"; rc=1; }
  fi
  [ -n "$TMP" ] && rm -rf "$TMP"
  exit $rc
}

cluster_begin() {
  require_cluster
  require_operator
  NS="dljob-ct-$1-$$"
  TMP="$(mktemp -d "${TMPDIR:-/tmp}/dljob-cluster-$1.XXXXXX")"
  chmod 0755 "$TMP"
  trap cleanup EXIT
  trap 'exit 1' INT TERM
  kubectl create namespace "$NS" >/dev/null || fail "kubectl create namespace $NS"
  note "namespace $NS"
}

# Polls `$@` every 2 s until it succeeds; fails the test with $WHAT after WAIT_SECONDS.
wait_until() {
  local what="$1"; shift
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "still not $what after ${WAIT_SECONDS}s"
    sleep 2
  done
}

# jf JOB JSONPATH: a field of the DLJob in $NS ('' when absent).
jf() { kubectl get dljob "$1" -n "$NS" -o "jsonpath={$2}" 2>/dev/null; }
phase_is() { [ "$(jf "$1" .status.phase)" = "$2" ]; }
# The job's phase is $2; fails at once if it reached Failed instead.
phase_or_fail() {
  local p
  p="$(jf "$1" .status.phase)"
  [ "$p" = Failed ] && fail "DLJob $1 Failed: $(jf "$1" '.status.conditions[?(@.type=="Failed")].message')"
  [ "$p" = "$2" ]
}

# The cluster's node names, sorted, one per line.
node_names() { kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
# Fails unless the cluster has at least $1 nodes, saying how to start them.
require_nodes() {
  local n
  n="$(node_names | wc -l)"
  [ "$n" -ge "$1" ] || fail "this cluster has $n node(s); the test needs $1 or more: start them with 'sudo bash scripts/cluster/kube-down.sh && sudo bash scripts/cluster/kube-up.sh --nodes $1'"
}
# The node a test's jobs run on when they are meant for one node (JOB_NODE, default the first
# by name): `mnist_job` pins its job there, so the one-node tests hold on a cluster of several.
# JOB_NODE=any leaves the job free to use every node.
JOB_NODE="${JOB_NODE:-}"

# The job manifest for mnist_cnn on Fashion-MNIST (the host's /usr/share/datasets, a hostPath)
# with the dljob/trainer:cpu image, pinned to one node (JOB_NODE above).
# mnist_job NAME GPUS GPUS_PER_WORKER EXTRA_SPEC_YAML TRAIN_ARGS...
mnist_job() {
  local name="$1" gpus="$2" per="$3" extra="$4"; shift 4
  local arg node="${JOB_NODE:-$(node_names | head -1)}"
  cat <<YAML
apiVersion: dljob.io/v1alpha1
kind: DLJob
metadata:
  name: $name
  namespace: $NS
spec:
  image: dljob/trainer:cpu
  command:
YAML
  for arg in "$@"; do printf "    - '%s'\n" "${arg//\'/\'\'}"; done
  cat <<YAML
  gpus: $gpus
  gpusPerWorker: $per
YAML
  [ "$node" = any ] || printf '  scheduling:\n    nodeSelector: {kubernetes.io/hostname: %s}\n' "$node"
  cat <<YAML
  data:
    - name: fashion-mnist
      source: hostPath:/usr/share/datasets/fashion-mnist
      mountPath: /data/fashion-mnist
$extra
YAML
}
# wait_for_checkpoint JOB: waits until JOB is Running with a checkpoint on this machine in $CKPT
# (the hostPath directory its spec.checkpoint names).
wait_for_checkpoint() {
  local job="$1"
  note "waiting for a checkpoint of $job in $CKPT"
  has_checkpoint() { [ -n "$(find "$CKPT" -mindepth 1 -print -quit 2>/dev/null)" ]; }
  running_with_checkpoint() { phase_or_fail "$job" Running && has_checkpoint; }
  wait_until "$job Running with a checkpoint on the host" running_with_checkpoint
}
# wait_for_event JOB REASON: waits until the DLJob has an Event with this reason. The operator
# creates Events after the status write they tell of, on a thread of its own
# (operator/controller/events.h), so one can land a moment after the state a test waited for.
wait_for_event() {
  local job="$1" reason="$2"
  has_event() {
    [ -n "$(kubectl get events -n "$NS" -o name \
      --field-selector "involvedObject.kind=DLJob,involvedObject.name=$job,reason=$reason" 2>/dev/null)" ]
  }
  wait_until "a $reason Event on $job" has_event
}
# check_resumed JOB: the job's launcher log (untagged, kept in $TMP/launcher.log) says its ranks
# resumed from a checkpoint of a step > 0, which goes in RESUMED; fails otherwise.
check_resumed() {
  kubectl logs "$1-launcher" -n "$NS" | untag >"$TMP/launcher.log" || fail "kubectl logs $1-launcher"
  RESUMED="$(grep -oE '^Resuming from the checkpoint of step [0-9]+' "$TMP/launcher.log" | grep -oE '[0-9]+$' | head -1)"
  [ -n "$RESUMED" ] || { tail -30 "$TMP/launcher.log"; fail "$1's launcher log has no 'Resuming from the checkpoint of step' line"; }
  [ "$RESUMED" -gt 0 ] || fail "resumed from step $RESUMED, expected > 0"
  grep -E 'Resuming|test accuracy|^total' "$TMP/launcher.log"
}
# A launcher log without the rank prefixes: mpirun's --tag-output ("[1,0]<stdout>:") and
# `dljob logs`' ("[rank 0] ").
untag() { sed -E 's/^\[[0-9]+,[0-9]+\]<std(out|err)>: ?//; s/^\[rank [0-9]+\] //'; }
TRAIN=(dljob-train --model=mnist_cnn --data_name=fashion-mnist --data_dir=/data/fashion-mnist
       --batch_size=32 --learning_rate=0.05 --display_every=50 --seed=1)
