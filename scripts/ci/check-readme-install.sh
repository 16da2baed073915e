#!/usr/bin/env bash
# Runs the README's "Installing on a cluster" block as the README shows it, line by line, on the
# cluster the README offers (scripts/cluster/kube-up.sh: a real Kubernetes 1.20 on this machine),
# so a green CI means the install works as written: each line of its ```sh block (comments
# dropped), from the checkout's root, with the cluster's kubeconfig. Then it checks what the block
# promises: the operator Deployment available, its PodDisruptionBudget made by the leader at the
# policy version this server serves, and the example DLJob taken up (it has a phase).
#
# The operator image is built from this checkout's build/ (the build scripts/test.sh made; kube-up
# --images operator --rebuild-images, DLJOB_IMAGE_PROGRAMS_DIR=build): the block applies no
# trainer pod that must run. The cluster is started here and stopped on exit, whatever happened
# (scripts/cluster/kube-down.sh); a cluster already up is left alone: this refuses to run beside
# one. Needs root, like kube-up. Prints each line before it runs; exit 0 when every line and check
# passed, 1 at the first failure (with the operator's pods and log tail).
#
# Usage: scripts/ci/check-readme-install.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
KUBE_DIR=/var/lib/dljob-kube
say() { echo "check-readme-install: $*"; }
fail() {
  say "FAIL: $*"
  kubectl -n dljob-system get deployments,pods,pdb -o wide 2>&1
  kubectl -n dljob-system logs -l app.kubernetes.io/name=dljob-operator --tail=20 2>&1
  exit 1
}
[ -x "$ROOT/build/bin/dljob-operator" ] \
  || { say "no build/bin/dljob-operator; build first (bash scripts/test.sh)"; exit 1; }
[ ! -e "$KUBE_DIR" ] || {
  say "$KUBE_DIR exists: a cluster of kube-up is up (or was left); stop it with scripts/cluster/kube-down.sh"
  exit 1
}

# The block: the first ```sh fence after its heading, up to the closing fence.
mapfile -t LINES < <(awk '/^## Installing on a cluster/{t=1} t&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md)
[ "${#LINES[@]}" -gt 0 ] || { say "README.md has no install block"; exit 1; }

trap 'bash "$ROOT/scripts/cluster/kube-down.sh" --quiet' EXIT
DLJOB_IMAGE_PROGRAMS_DIR="$ROOT/build" bash scripts/cluster/kube-up.sh --images operator \
  --rebuild-images || fail "scripts/cluster/kube-up.sh could not start the cluster"
export KUBECONFIG="$KUBE_DIR/kubeconfig"

for line in "${LINES[@]}"; do
  command="${line%%#*}"
  command="${command%"${command##*[! ]}"}"
  [ -n "$command" ] || continue
  say "\$ $command"
  timeout 600 bash -c "$command" || fail "README line: $command"
done

kubectl -n dljob-system wait --for=condition=Available deployment/dljob-operator --timeout=60s \
  >/dev/null || fail "the operator Deployment is not Available"
budget=""
for _ in $(seq 60); do
  budget="$(kubectl -n dljob-system get pdb dljob-operator -o jsonpath='{.apiVersion} minAvailable {.spec.minAvailable}' 2>/dev/null)"
  [ -z "$budget" ] || break
  sleep 2
done
[ -n "$budget" ] || fail "no PodDisruptionBudget dljob-system/dljob-operator after 120 s"
say "the operator's PodDisruptionBudget: $budget"
job="$(kubectl create --dry-run=client -o jsonpath='{.metadata.namespace}/{.metadata.name}' -f examples/resnet-job.yaml)"
phase=""
for _ in $(seq 60); do
  phase="$(kubectl -n "${job%/*}" get dljob "${job#*/}" -o jsonpath='{.status.phase}' 2>/dev/null)"
  [ -z "$phase" ] || break
  sleep 2
done
[ -n "$phase" ] || fail "DLJob $job has no phase after 120 s: the operator did not take it up"
say "DLJob $job: $phase ($(kubectl -n "${job%/*}" get dljob "${job#*/}" -o jsonpath='{.status.conditions[-1:].message}' 2>/dev/null))"
say "ok (${#LINES[@]} lines of README.md's install block)"
