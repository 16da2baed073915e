#!/usr/bin/env bash
# Runs the README's "Installing on a cluster" block as the README shows it, line by line, on the
# cluster the README offers, which .ci/run starts first with the README's own command (`bash
# scripts/cluster/kube-up.sh --images operator`: a real Kubernetes 1.20 on this machine, with the
# operator image) and stops after. So a green CI means the install works as written: each line of
# the block's ```sh fence (comments dropped), from the checkout's root, with the cluster's
# kubeconfig. Then it checks what the block promises: the operator Deployment available, its
# PodDisruptionBudget made by the leader at the policy version this server serves, and the example
# DLJob taken up (it has a phase). What the block made stays: kube-down.sh removes it with the
# cluster. Prints each line before it runs; exit 0 when every line and check passed, 1 at the
# first failure (with the operator's pods and log tail).
#
# Usage: scripts/ci/check-readme-install.sh   (a kube-up cluster up; KUBECONFIG as kube-up's)
set -uo pipefail
cd "$(dirname "$0")/../.."
KUBE_DIR=/var/lib/dljob-kube
say() { echo "check-readme-install: $*"; }
fail() {
  say "FAIL: $*"
  kubectl -n dljob-system get deployments,pods,pdb -o wide 2>&1
  kubectl -n dljob-system logs -l app.kubernetes.io/name=dljob-operator --tail=20 2>&1
  exit 1
}
export KUBECONFIG="${KUBECONFIG:-$KUBE_DIR/kubeconfig}"
kubectl get --raw /readyz >/dev/null 2>&1 \
  || { say "no cluster answers at $KUBECONFIG: start one with 'bash scripts/cluster/kube-up.sh --images operator'"; exit 1; }

# The block: the first ```sh fence after its heading, up to the closing fence.
mapfile -t LINES < <(awk '/^## Installing on a cluster/{t=1} t&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md)
[ "${#LINES[@]}" -gt 0 ] || { say "README.md has no install block"; exit 1; }

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
# The README's cluster commands of the CLI ("there `dljob top nodes` and `dljob queue list|get`
# show what the cluster has and why a job waits"), against this cluster with build/bin's dljob.
for command in "dljob top nodes" "dljob queue list"; do
  say "\$ $command"
  PATH="$PWD/build/bin:$PATH" timeout 60 bash -c "$command" || fail "README command: $command"
done
say "ok (${#LINES[@]} lines of README.md's install block, and its cluster commands of the CLI)"
