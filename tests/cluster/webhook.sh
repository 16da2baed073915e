#!/usr/bin/env bash
# The operator's admission webhook on a real Kubernetes (the chart installs it with its
# certificate made by the operator and the caBundle it writes): stock `kubectl apply` of every
# malformed example in examples/invalid/ is refused — where the object passes the CRD's schema,
# by the webhook, with exactly the problems `dljob validate` prints; else by the schema, naming
# some of the same fields — and nothing is created. A running job's `spec.gpus` edit is refused naming the
# field; its env edit is taken and applied by a restart (specRestarts 1, new pods with the env).
# Usage: webhook.sh DLJOB (this build's dljob). Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DLJOB="${1:?usage: webhook.sh DLJOB}"
cluster_begin webhook
ca="$(kubectl get validatingwebhookconfiguration dljob-validating-webhook -o jsonpath='{.webhooks[0].clientConfig.caBundle}')"
[ -n "$ca" ] || fail "the operator did not write the caBundle of dljob-validating-webhook"

by_webhook=0
for file in "$ROOT"/examples/invalid/*.yaml; do
  name="$(basename "$file")"
  # The example in this test's namespace (a DLQueue is cluster-scoped and keeps none).
  sed '/^  namespace:/d' "$file" >"$TMP/$name"
  "$DLJOB" validate -f "$file" >"$TMP/validate.out" 2>&1 && fail "dljob validate accepted $name"
  sed -n 's/^  \(.*\)$/\1/p' "$TMP/validate.out" | sed -E 's/ \(line [0-9]+(, column [0-9]+)?\)$//' >"$TMP/problems"
  [ -s "$TMP/problems" ] || fail "no problems in dljob validate's output for $name: $(cat "$TMP/validate.out")"
  if kubectl apply -n "$NS" -f "$TMP/$name" >"$TMP/apply.out" 2>&1; then
    fail "kubectl apply accepted $name: $(cat "$TMP/apply.out")"
  fi
  if grep -q 'admission webhook "' "$TMP/apply.out"; then
    by_webhook=$((by_webhook + 1))
    while IFS= read -r p; do
      grep -qF -- "$p" "$TMP/apply.out" || fail "$name: the webhook's refusal lacks '$p': $(cat "$TMP/apply.out")"
    done <"$TMP/problems"
  else  # the CRD's schema refused it before any webhook: it names some of the same fields
    # (Kubernetes 1.20 names list items without their index: a.b.c, not a[0].b[1].c; kubectl's
    # client-side check names a missing field by itself: missing required field "image").
    named=0
    sed 's/\[[0-9]*\]//g' "$TMP/apply.out" >"$TMP/apply.bare"
    while IFS= read -r p; do
      # shellcheck disable=SC2001  # a regular expression, which ${//} is not
      bare="$(sed 's/\[[0-9]*\]//g' <<<"${p%%:*}")"
      if grep -qF -- "$bare" "$TMP/apply.bare" || grep -qF -- "\"${bare##*.}\"" "$TMP/apply.bare"; then
        named=$((named + 1))
      fi
    done <"$TMP/problems"
    [ "$named" -ge 1 ] || fail "$name: kubectl's refusal names none of dljob validate's fields: $(cat "$TMP/apply.out")"
  fi
  note "$name refused: $(head -c 160 "$TMP/apply.out" | tr '\n' ' ')"
done
[ "$by_webhook" -ge 2 ] || fail "only $by_webhook malformed examples reached the webhook (2 or more expected)"
[ -z "$(kubectl get dljobs -n "$NS" -o name)" ] || fail "a malformed DLJob was created"

# A running job's edits: the gang's shape refused, its env taken by a restart.
mnist_job edited 2 1 "  runPolicy: {backoffLimit: 0}" "${TRAIN[@]}" --num_batches=4000 >"$TMP/job.yaml"
kubectl apply -f "$TMP/job.yaml" || fail "kubectl apply of a valid job"
running() { phase_or_fail edited Running; }
wait_until "Running" running
kubectl patch dljob edited -n "$NS" --type=merge -p '{"spec":{"gpus":4}}' >"$TMP/patch.out" 2>&1 \
  && fail "a gpus edit of a running job was accepted"
grep -q "spec.gpus: cannot change once the job has started (it is Running)" "$TMP/patch.out" \
  || fail "the gpus edit's refusal: $(cat "$TMP/patch.out")"
old_uid="$(kubectl get pod edited-worker-0 -n "$NS" -o jsonpath='{.metadata.uid}')"
kubectl patch dljob edited -n "$NS" --type=merge \
  -p '{"spec":{"env":[{"name":"DLJOB_TEST_EDIT","value":"1"}]}}' || fail "an env edit of a running job was refused"
restarted() {
  [ "$(jf edited .status.specRestarts)" = 1 ] && phase_or_fail edited Running &&
    [ "$(kubectl get pod edited-worker-0 -n "$NS" -o jsonpath='{.metadata.uid}')" != "$old_uid" ] &&
    kubectl get pod edited-worker-0 -n "$NS" -o jsonpath='{.spec.containers[0].env}' | grep -q DLJOB_TEST_EDIT
}
wait_until "Running again with the new env (specRestarts 1)" restarted
[ "$(jf edited .status.restarts)" = 0 ] || fail "the spec restart counted as a restart: $(jf edited .status.restarts)"
[ "$(jf edited .status.observedGeneration)" = "$(jf edited .metadata.generation)" ] \
  || fail "observedGeneration $(jf edited .status.observedGeneration) != generation $(jf edited .metadata.generation)"
note "PASS: $by_webhook examples refused by the webhook; a gpus edit refused, an env edit applied by a restart"
