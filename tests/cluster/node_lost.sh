#!/usr/bin/env bash
# A node lost under a training gang on a real Kubernetes of several nodes (kube-up.sh --nodes 2):
# a 4-worker Fashion-MNIST DLJob (4 workers × 3 GPUs: 12 ranks, two workers on each of two nodes,
# MPI between them) with spec.checkpoint on a hostPath directory of this machine trains until a
# checkpoint exists there. Then the kubelet of worker 0's node is stopped
# (scripts/cluster/kube-fault.sh stop-kubelet: its containers run on, as on a node whose kubelet
# died). The node goes NotReady after the node-monitor grace period, and after the operator's
# --node-lost-after the job restarts whole: reason NodeLost, one Warning Event naming the node,
# status.disruptionRestarts 1, restarts (backoffLimit's count) still 0. The node that remains
# holds 8 of the 12 GPUs, so the gang waits, Queued with its reason, and no worker of it is bound
# meanwhile (never a partial gang). The kubelet is started again: the node is Ready, the gang is
# placed over both nodes again, its ranks resume from the checkpoint ("Resuming from the
# checkpoint of step N", N > 0) and the job Succeeds. The kubelet is started again on exit,
# whatever happened. Usage: node_lost.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
JOB=wide
FAULT="$ROOT/scripts/cluster/kube-fault.sh"
STOPPED=""
start_kubelet() {
  [ -z "$STOPPED" ] || bash "$FAULT" start-kubelet "$STOPPED" || { echo "could not start the kubelet of $STOPPED again"; return 1; }
}
RESTORE=start_kubelet
require_nodes 2
cluster_begin nodelost
CKPT="$TMP/checkpoint"
mkdir -m 0777 "$CKPT"

JOB_NODE=any mnist_job "$JOB" 12 3 "  checkpoint: {source: 'hostPath:$CKPT', everySteps: 20}
  runPolicy: {backoffLimit: 0}" "${TRAIN[@]/--batch_size=32/--batch_size=16}" --num_batches=120 >"$TMP/job.yaml"
kubectl apply -f "$TMP/job.yaml" || fail "kubectl apply -f of the job"
wait_for_checkpoint "$JOB"
kubectl get pods -n "$NS" -o wide
worker_nodes() {
  kubectl get pods -n "$NS" -l dljob.io/role=worker -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort
}
[ "$(worker_nodes | uniq | wc -l)" = 2 ] || fail "the 4 workers are not on two nodes: $(worker_nodes | tr '\n' ' ')"
[ "$(worker_nodes | uniq -c | awk '{print $1}' | sort -u)" = 2 ] || fail "not two workers per node: $(worker_nodes | uniq -c | tr '\n' ' ')"
LOST="$(kubectl get pod "$JOB-worker-0" -n "$NS" -o jsonpath='{.spec.nodeName}')"
step_before="$(jf $JOB .status.throughput.step)"

note "stopping the kubelet of $LOST (worker 0's node) at step ${step_before:-?}"
STOPPED="$LOST"
bash "$FAULT" stop-kubelet "$LOST" || fail "kube-fault.sh stop-kubelet $LOST"
lost_counted() {
  phase_or_fail "$JOB" "$(jf $JOB .status.phase)"
  [ "$(jf $JOB .status.disruptionRestarts)" = 1 ]
}
wait_until "the job restarted for the lost node (disruptionRestarts 1)" lost_counted
note "node lost: $(kubectl get dljobs -n "$NS" --no-headers)"
# The node that remains cannot hold 12 GPUs: the gang waits, saying why, none of it bound.
queued_with_reason() {
  phase_or_fail "$JOB" Queued || return 1
  [ -n "$(jf $JOB '.status.conditions[?(@.type=="Queued")].message')" ]
}
wait_until "Queued with a reason on the node that remains" queued_with_reason
reason="$(jf $JOB '.status.conditions[?(@.type=="Queued")].message')"
note "waits: $reason"
grep -qi 'gpu' <<<"$reason" || fail "the Queued message does not say it waits for GPUs: $reason"
sleep 10  # a partial gang would be bound by now
bound="$(kubectl get pods -n "$NS" -l dljob.io/role=worker -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{" "}{end}')"
grep -qE '=[^ ]' <<<"$bound" && fail "a worker is bound while the gang cannot be whole: $bound"
wait_for_event "$JOB" NodeLost
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=$JOB,reason=NodeLost" \
  -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message >"$TMP/lost" || fail "kubectl get events"
cat "$TMP/lost"
[ "$(grep -c '^Warning  *NodeLost .*node '"$LOST"' has not been Ready' "$TMP/lost")" = 1 ] \
  || fail "not one Warning NodeLost Event naming $LOST"

note "starting the kubelet of $LOST again"
bash "$FAULT" start-kubelet "$LOST" || fail "kube-fault.sh start-kubelet $LOST"
STOPPED=""
wait_until "Succeeded" phase_or_fail "$JOB" Succeeded
note "succeeded"
kubectl get dljobs -n "$NS" -o wide
[ "$(jf $JOB .status.restarts)" = 0 ] || fail "restarts $(jf $JOB .status.restarts): a lost node must not spend backoffLimit"
[ "$(jf $JOB .status.disruptionRestarts)" = 1 ] || fail "disruptionRestarts $(jf $JOB .status.disruptionRestarts), expected 1"
check_resumed "$JOB"
acc="$(jf $JOB .status.throughput.accuracy)"
[ -n "$acc" ] && awk "BEGIN{exit !($acc > 0.5 && $acc <= 1)}" || fail "status accuracy '$acc' (expected 0.5..1)"
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=$JOB" \
  --sort-by=.lastTimestamp -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message
note "PASS: $LOST lost at step ${step_before:-?}; waited with '$reason'; resumed from step $RESUMED over two nodes; Succeeded, restarts 0, disruptionRestarts 1"
