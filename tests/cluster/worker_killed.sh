#!/usr/bin/env bash
# A worker pod killed mid-training on a real Kubernetes: a 2-worker Fashion-MNIST DLJob with
# spec.checkpoint on a hostPath directory of this machine (every 100 steps) trains until a
# checkpoint exists there, then `kubectl delete pod <job>-worker-1`. The operator restarts the
# whole job (phase Restarting, restarts 1); the new launcher's ranks resume from the checkpoint
# ("Resuming from the checkpoint of step N", N > 0) and the job still Succeeds with restarts: 1.
# Usage: worker_killed.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
JOB=mnist-ckpt
cluster_begin killed
CKPT="$TMP/checkpoint"
mkdir -m 0777 "$CKPT"

mnist_job "$JOB" 2 1 "  checkpoint: {source: 'hostPath:$CKPT', everySteps: 100}
  runPolicy: {backoffLimit: 2}" "${TRAIN[@]}" --num_batches=800 >"$TMP/job.yaml"
kubectl apply -f "$TMP/job.yaml" || fail "kubectl apply -f of the job"
wait_for_checkpoint "$JOB"
find "$CKPT" -maxdepth 2 | head
step_before="$(jf $JOB .status.throughput.step)"
uid_before="$(kubectl get pod "$JOB-launcher" -n "$NS" -o jsonpath='{.metadata.uid}')"
note "killing $JOB-worker-1 at step ${step_before:-?}"
kubectl delete pod "$JOB-worker-1" -n "$NS" --wait=false || fail "kubectl delete pod $JOB-worker-1"

restarted() {
  phase_or_fail "$JOB" "$(jf $JOB .status.phase)" # fails at once on Failed
  [ "$(jf $JOB .status.restarts)" = 1 ]
}
wait_until "restarted (restarts: 1)" restarted
note "restarted: $(kubectl get dljobs -n "$NS" --no-headers)"
new_launcher() {
  local uid
  uid="$(kubectl get pod "$JOB-launcher" -n "$NS" -o jsonpath='{.metadata.uid}' 2>/dev/null)"
  [ -n "$uid" ] && [ "$uid" != "$uid_before" ]
}
wait_until "a new launcher pod" new_launcher
wait_until "Succeeded" phase_or_fail "$JOB" Succeeded
note "succeeded"
kubectl get dljobs -n "$NS" -o wide
[ "$(jf $JOB .status.restarts)" = 1 ] || fail "restarts $(jf $JOB .status.restarts), expected 1"
check_resumed "$JOB"
resumed="$RESUMED"
first="$(grep -oE '^[0-9]+	images/sec' "$TMP/launcher.log" | head -1 | cut -f1)"
[ -z "$first" ] || [ "$first" -gt "$resumed" ] || fail "first step row after resume is $first, not after $resumed"
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=$JOB" \
  --sort-by=.lastTimestamp -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message
note "PASS: killed at step ${step_before:-?}, resumed from step $resumed, restarts 1, Succeeded"
