#!/usr/bin/env bash
# `kubectl drain` of a node under a training job, on a real Kubernetes of several nodes
# (kube-up.sh --nodes 2): a 2-worker Fashion-MNIST DLJob (2 × 2 GPUs, on one node) with
# spec.checkpoint on a hostPath directory of this machine trains until a checkpoint exists; then
# `kubectl drain` of its node (stock kubectl: cordon, then evictions, retried while refused). The
# job's PodDisruptionBudget (minAvailable = all its pods, made by the operator) refuses every eviction of its
# pods, so none is evicted pod by pod; the operator sees the node cordoned and moves the whole job
# to the other node: Restarting/NodeCordoned, status.disruptionRestarts 1, restarts 0, its pods
# deleted gracefully (the ranks checkpoint on SIGTERM). The drain then completes, and the job
# resumes from the checkpoint its ranks wrote as they stopped ("Resuming from the checkpoint of
# step N", N past the step status showed when the drain began; the periodic checkpoints, every
# 200 steps, are behind it) on the other node and Succeeds. The node is uncordoned on exit, whatever happened. Usage: drain.sh. Exit 0 pass,
# 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
JOB=moved
DRAINED=""
uncordon() {
  [ -z "$DRAINED" ] || kubectl uncordon "$DRAINED" >/dev/null || { echo "could not uncordon $DRAINED"; return 1; }
}
RESTORE=uncordon
require_nodes 2
cluster_begin drain
CKPT="$TMP/checkpoint"
mkdir -m 0777 "$CKPT"

JOB_NODE=any mnist_job "$JOB" 4 2 "  checkpoint: {source: 'hostPath:$CKPT', everySteps: 200}
  runPolicy: {backoffLimit: 0}" "${TRAIN[@]}" --num_batches=600 >"$TMP/job.yaml"
kubectl apply -f "$TMP/job.yaml" || fail "kubectl apply -f of the job"
wait_for_checkpoint "$JOB"
kubectl get pods -n "$NS" -o wide
pdb="$(kubectl get pdb "$JOB" -n "$NS" -o jsonpath='minAvailable {.spec.minAvailable} of {.spec.selector.matchLabels}' 2>&1)" \
  || fail "no PodDisruptionBudget $JOB: $pdb"
note "PodDisruptionBudget $JOB: $pdb"
NODE="$(kubectl get pod "$JOB-worker-0" -n "$NS" -o jsonpath='{.spec.nodeName}')"
step_before="$(jf $JOB .status.throughput.step)"
uids_before="$(kubectl get pods -n "$NS" -o jsonpath='{.items[*].metadata.uid}')"

note "kubectl drain $NODE at step ${step_before:-?}"
DRAINED="$NODE"
kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data --timeout=300s >"$TMP/drain.log" 2>&1 \
  || { cat "$TMP/drain.log"; fail "kubectl drain $NODE did not complete"; }
cat "$TMP/drain.log"
# Its pods were not evicted one by one: a worker evicted while the job runs would have restarted it
# (restarts 1, WorkerLost); the budget refused ("Cannot evict pod ...", in the log above when drain
# came first) until the operator had moved the job whole.
[ "$(jf $JOB .status.restarts)" = 0 ] || fail "restarts $(jf $JOB .status.restarts): a drain must not spend backoffLimit"
[ "$(jf $JOB .status.disruptionRestarts)" = 1 ] || fail "disruptionRestarts '$(jf $JOB .status.disruptionRestarts)', expected 1"
wait_for_event "$JOB" NodeCordoned
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=$JOB,reason=NodeCordoned" \
  -o custom-columns=TYPE:.type,MESSAGE:.message | grep -q "node $NODE is cordoned" \
  || fail "no NodeCordoned Event naming $NODE"
moved_on() {
  phase_or_fail "$JOB" "$(jf $JOB .status.phase)"
  local nodes
  nodes="$(kubectl get pods -n "$NS" -l dljob.io/role=worker -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)"
  [ -n "$nodes" ] && ! grep -qx "$NODE" <<<"$nodes" && ! grep -qx '' <<<"$nodes"
}
wait_until "the workers bound to another node than $NODE" moved_on
wait_until "Succeeded" phase_or_fail "$JOB" Succeeded
note "succeeded"
kubectl get dljobs,pods -n "$NS" -o wide
for uid in $(kubectl get pods -n "$NS" -o jsonpath='{.items[*].metadata.uid}'); do
  grep -qw "$uid" <<<"$uids_before" && fail "pod $uid of the first run is still there"
done
check_resumed "$JOB"
# Moved at a checkpoint of its own stop, not the last periodic one: nothing trained twice.
[ "$RESUMED" -gt "${step_before:-0}" ] \
  || fail "resumed from step $RESUMED, not past step ${step_before:-?} reached before the drain: no checkpoint was written as the pods stopped"
[ "$(jf $JOB .status.restarts)" = 0 ] || fail "restarts $(jf $JOB .status.restarts) at the end"
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=$JOB" \
  --sort-by=.lastTimestamp -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message
note "PASS: drained $NODE at step ${step_before:-?}; the job moved whole and resumed from step $RESUMED; Succeeded, restarts 0, disruptionRestarts 1"
