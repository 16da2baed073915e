#!/usr/bin/env bash
# Installs dljob on the real cluster without helm, as a user would: `kubectl apply -f
# charts/manifests/dljob.yaml` (kubectl's default validation), then waits until the operator
# Deployment's replicas are available and one holds the Lease. The ctest fixture
# `dljob_operator`'s setup; operator_uninstall.sh is its cleanup.
# Usage: operator_install.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster
kubectl apply -f "$(cluster_manifest)" || fail "kubectl apply -f charts/manifests/dljob.yaml"
kubectl wait --for=condition=Established crd/dljobs.dljob.io crd/dlqueues.dljob.io --timeout=60s \
  || fail "the CRDs are not Established"
kubectl -n dljob-system rollout status deployment/dljob-operator --timeout=300s \
  || { kubectl -n dljob-system get pods -o wide; kubectl -n dljob-system logs -l app.kubernetes.io/name=dljob-operator --tail=20; fail "the operator Deployment did not become available"; }
has_leader() { [ -n "$(kubectl -n dljob-system get lease dljob-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" ]; }
wait_until "a leader in Lease dljob-system/dljob-operator" has_leader
kubectl -n dljob-system get pods -o wide
note "PASS: installed; leader $(kubectl -n dljob-system get lease dljob-operator -o jsonpath='{.spec.holderIdentity}')"
