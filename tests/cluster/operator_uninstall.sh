#!/usr/bin/env bash
# Uninstalls dljob without helm (`kubectl delete -f charts/manifests/dljob.yaml`) and checks that
# nothing is left: no dljob-system namespace, no dljob.io CRD (so no DLJob or DLQueue), no
# ClusterRole or ClusterRoleBinding of the operator, no operator or training pod in any namespace,
# and no namespace the cluster tests made. The ctest fixture `dljob_operator`'s cleanup: it runs
# after every test that needs the operator, whether they passed or not.
# Usage: operator_uninstall.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster
kubectl delete -f "$MANIFEST" --ignore-not-found --wait=true --timeout=300s \
  || fail "kubectl delete -f charts/manifests/dljob.yaml"
gone() { [ -z "$(kubectl get "$@" --ignore-not-found -o name 2>&1)" ]; }
wait_until "namespace dljob-system gone" gone namespace dljob-system
# (The node's own Lease, kube-node-lease/dljob-node, is the cluster's, not dljob's.)
left="$(
  kubectl get crd -o name | grep -E '\.dljob\.io$'
  kubectl get clusterroles,clusterrolebindings -o name | grep -i dljob
  kubectl get pods -A -l app.kubernetes.io/name=dljob-operator -o name
  kubectl get pods -A --no-headers | grep -E -- '-(worker-[0-9]+|launcher) '
  kubectl get namespaces -o name | grep -E '^namespace/dljob-'
  kubectl get roles,rolebindings,serviceaccounts,leases -A --no-headers | grep -v '^kube-node-lease ' \
    | grep -i dljob
)"
[ -z "$left" ] || fail "left behind after kubectl delete -f charts/manifests/dljob.yaml:
$left"
note "PASS: nothing of dljob left (namespaces, CRDs, ClusterRole/Binding, Roles, pods)"
