#!/usr/bin/env bash
# Installs dljob on the real cluster without helm, as a user would: `kubectl apply -f
# charts/manifests/dljob.yaml` (kubectl's default validation), then waits until the operator
# Deployment's replicas are available, one holds the Lease, and the leader has made the operator's
# own PodDisruptionBudget (minAvailable 1, owned by the Deployment) at the policy version this
# server serves: the manifest itself has none, so it applies on 1.20 and 1.25+ alike. The ctest fixture
# `dljob_operator`'s setup; operator_uninstall.sh is its cleanup.
# Usage: operator_install.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster
kubectl apply -f "$MANIFEST" || fail "kubectl apply -f charts/manifests/dljob.yaml"
kubectl wait --for=condition=Established crd/dljobs.dljob.io crd/dlqueues.dljob.io --timeout=60s \
  || fail "the CRDs are not Established"
kubectl -n dljob-system rollout status deployment/dljob-operator --timeout=300s \
  || { kubectl -n dljob-system get pods -o wide; kubectl -n dljob-system logs -l app.kubernetes.io/name=dljob-operator --tail=20; fail "the operator Deployment did not become available"; }
has_leader() { [ -n "$(kubectl -n dljob-system get lease dljob-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" ]; }
wait_until "a leader in Lease dljob-system/dljob-operator" has_leader
budget() {
  kubectl -n dljob-system get pdb dljob-operator \
    -o jsonpath='{.spec.minAvailable} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' 2>/dev/null
}
has_budget() { [ "$(budget)" = "1 Deployment/dljob-operator" ]; }
wait_until "PodDisruptionBudget dljob-system/dljob-operator (minAvailable 1, owned by the Deployment)" has_budget
kubectl -n dljob-system get pods,pdb -o wide
note "PASS: installed; leader $(kubectl -n dljob-system get lease dljob-operator -o jsonpath='{.spec.holderIdentity}')"
