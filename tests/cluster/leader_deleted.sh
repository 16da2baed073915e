#!/usr/bin/env bash
# The chart's operator leader pod deleted under a training job, on a real Kubernetes: a 2-worker
# Fashion-MNIST DLJob trains with a step in its status; `kubectl delete pod` of the operator pod
# that holds the Lease dljob-system/dljob-operator (the chart runs two replicas). The standby takes
# the Lease (a new holderIdentity), the job's status follows its training on (a later step),
# and it Succeeds with restarts 0, its final accuracy in its status, and no pod made again (the
# job's pods keep the uids they had before the deletion). Usage: leader_deleted.sh. Exit 0 pass,
# 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
JOB=led
cluster_begin leader
[ "$(kubectl -n dljob-system get deployment dljob-operator -o jsonpath='{.status.readyReplicas}')" -ge 2 ] \
  || fail "the chart's operator runs fewer than 2 ready replicas: no standby to take over"
mnist_job "$JOB" 2 1 "  runPolicy: {backoffLimit: 0}" "${TRAIN[@]}" --num_batches=600 >"$TMP/job.yaml"
kubectl apply -f "$TMP/job.yaml" || fail "kubectl apply -f of the job"
training() { phase_or_fail "$JOB" Running && [ -n "$(jf $JOB .status.throughput.step)" ]; }
wait_until "Running with a step in its status" training
holder() { kubectl -n dljob-system get lease dljob-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
before="$(holder)"
leader="${before%%_*}"
[ -n "$leader" ] || fail "no leader in Lease dljob-system/dljob-operator"
step_before="$(jf $JOB .status.throughput.step)"
uids_before="$(kubectl get pods -n "$NS" -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | sort)"
note "deleting the leader pod $leader at step $step_before"
kubectl -n dljob-system delete pod "$leader" --wait=false || fail "kubectl delete pod $leader"
new_leader() { local h; h="$(holder)"; [ -n "$h" ] && [ "$h" != "$before" ]; }
wait_until "another operator holding the Lease" new_leader
note "the Lease is now $(holder)"
later_step() {
  phase_or_fail "$JOB" "$(jf $JOB .status.phase)" || return 1
  local s
  s="$(jf $JOB .status.throughput.step)"
  [ "$(jf $JOB .status.phase)" = Succeeded ] || { [ -n "$s" ] && [ "$s" -gt "$step_before" ]; }
}
wait_until "the status following the training on past step $step_before" later_step
wait_until "Succeeded" phase_or_fail "$JOB" Succeeded
kubectl get dljobs -n "$NS" -o wide
[ "$(jf $JOB .status.restarts)" = 0 ] || fail "restarts $(jf $JOB .status.restarts), expected 0"
[ -n "$(jf $JOB .status.throughput.accuracy)" ] || fail "Succeeded without its final accuracy in status"
uids_after="$(kubectl get pods -n "$NS" -o jsonpath='{.items[*].metadata.uid}' | tr ' ' '\n' | sort)"
# Every pod there now was there before (cleanPodPolicy may have removed the workers since).
extra="$(comm -13 <(echo "$uids_before") <(echo "$uids_after"))"
[ -z "$extra" ] || fail "pods made again after the leader went: $extra"
note "PASS: leader $leader deleted at step $step_before; $(holder) took over; Succeeded at step $(jf $JOB .status.throughput.step), restarts 0, no pod made again"
