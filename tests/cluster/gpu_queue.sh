#!/usr/bin/env bash
# Two jobs that together need more GPUs than the node has (8 nvidia.com/gpu): `first` (6 GPUs, 2
# workers × 3) runs; `second` (4 GPUs, 2 workers × 2) waits with its reason, in its Queued
# condition and on its worker pods (PodScheduled=False, reason Unschedulable, as `kubectl
# describe pod` shows), and runs after `first` ends. No timing decides the order: `first`'s ranks
# wait for a file on the host (a hostPath data volume) before they train, and the file is made only
# once `second` has been seen waiting.
# Usage: gpu_queue.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster_begin queue
GATE="$TMP/gate"
mkdir -m 0755 "$GATE"
gate_spec="    - name: gate
      source: 'hostPath:$GATE'
      mountPath: /gate
  runPolicy: {backoffLimit: 0}"
mnist_job first 6 3 "$gate_spec" sh -c \
  'while ! test -e /gate/go; do sleep 1; done; exec "$@"' sh "${TRAIN[@]}" --num_batches=60 \
  --eval=false >"$TMP/first.yaml"
mnist_job second 4 2 "  runPolicy: {backoffLimit: 0}" "${TRAIN[@]}" --num_batches=60 --eval=false \
  >"$TMP/second.yaml"

kubectl apply -f "$TMP/first.yaml" || fail "kubectl apply -f first"
wait_until "first Running" phase_or_fail first Running
note "first: $(kubectl get dljobs -n "$NS" --no-headers)"
kubectl apply -f "$TMP/second.yaml" || fail "kubectl apply -f second"
queued_with_reason() {
  phase_or_fail second Queued || return 1
  [ -n "$(jf second '.status.conditions[?(@.type=="Queued")].message')" ]
}
wait_until "second Queued with a message" queued_with_reason
reason="$(jf second '.status.conditions[?(@.type=="Queued")].message')"
note "second waits: $reason"
grep -qi 'gpu' <<<"$reason" || fail "second's Queued message does not say it waits for GPUs: $reason"
[ "$(jf first .status.phase)" = Running ] || fail "first is no longer Running while second waits"

worker_unschedulable() {
  [ "$(kubectl get pod second-worker-0 -n "$NS" \
        -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' 2>/dev/null)" = Unschedulable ]
}
wait_until "second-worker-0 PodScheduled=False Unschedulable" worker_unschedulable
kubectl describe pod second-worker-0 -n "$NS" >"$TMP/describe" || fail "kubectl describe pod second-worker-0"
sed -n '/^Conditions:/,/^Volumes:/p' "$TMP/describe"
grep -qE '^\s+PodScheduled\s+False' "$TMP/describe" || fail "describe pod: no 'PodScheduled False'"
[ -z "$(kubectl get pod second-worker-0 -n "$NS" -o jsonpath='{.spec.nodeName}')" ] \
  || fail "second-worker-0 is bound to a node while it should wait"
kubectl get events -n "$NS" --field-selector involvedObject.name=second \
  -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message

note "opening first's gate"
touch "$GATE/go"
wait_until "first Succeeded" phase_or_fail first Succeeded
wait_until "second Succeeded" phase_or_fail second Succeeded
kubectl get dljobs -n "$NS" -o wide
first_done="$(jf first .status.completionTime)"
# startTime is set when a job's workers are created (second's while it waited); when it began to
# run is its Running condition's transition.
second_ran="$(jf second '.status.conditions[?(@.type=="Running")].lastTransitionTime')"
echo "first completed $first_done; second Running since $second_ran"
[ -n "$first_done" ] && [ -n "$second_ran" ] || { jf second .status.conditions; echo; fail "missing first's completionTime or second's Running condition"; }
[[ "$second_ran" > "$first_done" || "$second_ran" == "$first_done" ]] \
  || fail "second ran ($second_ran) before first completed ($first_done)"
note "PASS: second waited ($reason) and ran after first"
