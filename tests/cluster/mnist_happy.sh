#!/usr/bin/env bash
# The happy path on a real Kubernetes: `kubectl apply -f` of a 2-worker Fashion-MNIST DLJob
# (400 steps of 2 × 32 images, dljob/trainer:cpu, the host's dataset by hostPath) in its own
# namespace. The workers' sshd come up, the launcher's mpirun reaches them by the addresses the
# operator gives it (hostAliases; there is no cluster DNS) and trains; the DLJob ends Succeeded
# with accuracy and images/sec in its status; `kubectl get dljobs`, `dljob top` (while it runs),
# `dljob get` and `dljob logs` show it; its Events tell the story (WorkersBound, WorkersReady,
# Running, Succeeded; no Warning); the operator's leader archived its log, served to a service
# account that may get pods/log in the namespace and refused to one that may not.
# Usage: mnist_happy.sh DLJOB (the dljob program of this build). Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DLJOB="${1:?usage: mnist_happy.sh DLJOB}"
JOB=mnist
cluster_begin happy

mnist_job "$JOB" 2 1 "  runPolicy: {backoffLimit: 0}" "${TRAIN[@]}" --num_batches=400 >"$TMP/job.yaml"
kubectl apply -f "$TMP/job.yaml" || fail "kubectl apply -f of the job (default validation)"
note "applied"
has_phase() { [ -n "$(jf $JOB .status.phase)" ]; }
wait_until "a phase on $JOB" has_phase

# Training: Running with a step in its throughput status (or already Succeeded).
training_or_done() {
  phase_or_fail "$JOB" Succeeded && return 0
  phase_is "$JOB" Running && [ -n "$(jf $JOB .status.throughput.step)" ]
}
wait_until "Running with a step in its status" training_or_done
note "training: $(kubectl get dljobs -n "$NS" --no-headers)"
for i in 0 1; do
  kubectl get pod "$JOB-worker-$i" -n "$NS" >/dev/null || fail "no pod $JOB-worker-$i (2 workers expected)"
done
# The launcher reaches the workers by address: hostAliases carries each worker's pod IP.
aliases="$(kubectl get pod "$JOB-launcher" -n "$NS" -o jsonpath='{range .spec.hostAliases[*]}{.ip} {.hostnames}{"\n"}{end}')"
echo "launcher hostAliases:"; echo "$aliases"
for i in 0 1; do
  ip="$(kubectl get pod "$JOB-worker-$i" -n "$NS" -o jsonpath='{.status.podIP}')"
  grep -q "^$ip .*$JOB-worker-$i" <<<"$aliases" || fail "launcher hostAliases lack worker $i ($ip)"
done
[ "$(kubectl get pod "$JOB-worker-0" -n "$NS" -o jsonpath='{.spec.automountServiceAccountToken}')" = false ] \
  || fail "worker pods must not mount a service-account token"
if [ "$(jf $JOB .status.phase)" = Running ]; then
  top="$("$DLJOB" top -n "$NS" 2>&1)" || fail "dljob top: $top"
  echo "$top"
  grep -q "^$JOB " <<<"$top" || fail "dljob top does not list $JOB while it runs"
fi

wait_until "Succeeded" phase_or_fail "$JOB" Succeeded
note "succeeded"
# The launcher log's last metrics (final step, accuracy) are in the status by the time the phase
# is Succeeded: the operator reads that log to its end first (operator/controller/log_drain.h),
# so a user's `kubectl wait --for=condition=Succeeded` is followed by the final figures.
[ -n "$(jf $JOB .status.throughput.accuracy)" ] \
  || fail "Succeeded without the final metrics (accuracy) in its status: $(jf $JOB .status.throughput)"
kubectl get dljobs -n "$NS" -o wide
echo "status:"; kubectl get dljob "$JOB" -n "$NS" -o jsonpath='{.status}'; echo
acc="$(jf $JOB .status.throughput.accuracy)"
ips="$(jf $JOB .status.throughput.imagesPerSec)"
[ -n "$acc" ] && awk "BEGIN{exit !($acc > 0.5 && $acc <= 1)}" || fail "status accuracy '$acc' (expected 0.5..1)"
[ -n "$ips" ] && awk "BEGIN{exit !($ips > 0)}" || fail "status imagesPerSec '$ips'"
[ "$(jf $JOB .status.restarts)" = 0 ] || fail "restarts $(jf $JOB .status.restarts), expected 0"
kubectl get dljobs -n "$NS" --no-headers | grep -q "^$JOB  *Succeeded " || fail "kubectl get dljobs does not show Succeeded"

got="$("$DLJOB" get "$JOB" -n "$NS" 2>&1)" || fail "dljob get: $got"
echo "$got"; grep -q Succeeded <<<"$got" || fail "dljob get does not say Succeeded"
"$DLJOB" logs "$JOB" -n "$NS" >"$TMP/dljob-logs.raw" 2>&1 || { cat "$TMP/dljob-logs.raw"; fail "dljob logs"; }
untag <"$TMP/dljob-logs.raw" >"$TMP/dljob-logs.txt"
grep -E 'test accuracy = 0\.[0-9]+' "$TMP/dljob-logs.txt" || { tail -20 "$TMP/dljob-logs.txt"; fail "dljob logs: no accuracy line"; }
grep -E '^total images/sec' "$TMP/dljob-logs.txt" || fail "dljob logs: no total images/sec"

# Events: the story, each step a reason on the DLJob.
STORY="WorkersBound WorkersReady Running Succeeded"
wait_for_event "$JOB" Succeeded
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=$JOB" \
  --sort-by=.lastTimestamp -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message >"$TMP/events" \
  || fail "kubectl get events"
cat "$TMP/events"
for reason in $STORY; do grep -q " $reason " "$TMP/events" || fail "no $reason Event on the DLJob"; done
grep -q '^Warning ' <(grep -v MissingClusterDNS "$TMP/events") && fail "a Warning Event on the happy path"

# The operator's log archive, read as a user reads it: /logs/<namespace>/<job> of the leader
# (it holds the Lease) through the API server's pod proxy, with a service account's own token in
# X-Dljob-Authorization (the proxy keeps Authorization to itself). The operator reviews the token
# (TokenReview, SubjectAccessReview): a service account that may get pods/log in $NS is served,
# one that may not is refused (403), no token is 401.
leader="$(kubectl -n dljob-system get lease dljob-operator -o jsonpath='{.spec.holderIdentity}')"
leader="${leader%%_*}"
[ -n "$leader" ] || fail "no leader in Lease dljob-system/dljob-operator"
sa_token() {  # NAME: a token of service account NAME of $NS, from its legacy token Secret
  kubectl -n "$NS" create serviceaccount "$1" >/dev/null || return 1
  kubectl -n "$NS" apply -f - >/dev/null <<EOF || return 1
apiVersion: v1
kind: Secret
type: kubernetes.io/service-account-token
metadata: {name: $1-token, annotations: {kubernetes.io/service-account.name: $1}}
EOF
  local t=""
  for _ in $(seq 1 60); do
    t="$(kubectl -n "$NS" get secret "$1-token" -o jsonpath='{.data.token}' 2>/dev/null)"
    [ -n "$t" ] && break
    sleep 1
  done
  [ -n "$t" ] && base64 -d <<<"$t"
}
reader="$(sa_token log-reader)" || fail "no token for service account log-reader"
stranger="$(sa_token no-logs)" || fail "no token for service account no-logs"
kubectl -n "$NS" create role log-reader --verb=get --resource=pods,pods/log >/dev/null \
  || fail "kubectl create role log-reader"
kubectl -n "$NS" create rolebinding log-reader --role=log-reader --serviceaccount="$NS:log-reader" \
  >/dev/null || fail "kubectl create rolebinding log-reader"
kubectl proxy --port=0 >"$TMP/proxy.out" 2>&1 &
proxy_pid=$!
proxy_port() { grep -oE '127\.0\.0\.1:[0-9]+' "$TMP/proxy.out" | head -1 | cut -d: -f2; }
has_proxy() { [ -n "$(proxy_port)" ]; }
wait_until "kubectl proxy serving" has_proxy
archive_as() {  # TOKEN: the HTTP status of /logs with it; the body in $TMP/archive
  curl -s -o "$TMP/archive" -w '%{http_code}' ${1:+-H "X-Dljob-Authorization: Bearer $1"} \
    "http://127.0.0.1:$(proxy_port)/api/v1/namespaces/dljob-system/pods/$leader:8080/proxy/logs/$NS/$JOB"
}
code="$(archive_as "$stranger")"
[ "$code" = 403 ] || { kill "$proxy_pid"; fail "/logs for a service account without pods/log: $code, expected 403"; }
grep -q "no-logs\" cannot get resource \"pods/log\" in namespace \"$NS\"" "$TMP/archive" \
  || { kill "$proxy_pid"; cat "$TMP/archive"; fail "the 403 does not name the user, resource and namespace"; }
code="$(archive_as "")"
[ "$code" = 401 ] || { kill "$proxy_pid"; fail "/logs without a token: $code, expected 401"; }
code="$(archive_as "$reader")"
kill "$proxy_pid"
[ "$code" = 200 ] || { cat "$TMP/archive"; fail "the operator ($leader) did not serve $NS/$JOB to log-reader: $code"; }
grep -qE 'test accuracy = 0\.[0-9]+' "$TMP/archive" || { tail "$TMP/archive"; fail "archived log lacks the accuracy line"; }
note "PASS: accuracy $acc, $ips images/sec; archived log $(wc -l <"$TMP/archive") lines"
