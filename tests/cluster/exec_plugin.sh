#!/usr/bin/env bash
# The real cluster reached the way managed clusters are: through a kubeconfig whose user runs a
# client.authentication.k8s.io credential plugin (kube-up.sh's kubeconfig-exec; its plugin prints
# a bearer token with an expiry). `dljob` lists jobs with it, and an operator run outside the
# cluster with it syncs its caches and takes a Lease (reads, watches and writes); the plugin's own
# log shows each ran it. Usage: exec_plugin.sh DLJOB OPERATOR (this build's programs).
# Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DLJOB="${1:?usage: exec_plugin.sh DLJOB OPERATOR}"
OPERATOR="${2:?usage: exec_plugin.sh DLJOB OPERATOR}"
EXEC_KUBECONFIG="$KUBE_DIR/kubeconfig-exec"
PLUGIN_LOG="$KUBE_DIR/logs/exec-credential.log"
cluster_begin exec
[ -r "$EXEC_KUBECONFIG" ] \
  || fail "no $EXEC_KUBECONFIG: this cluster was started by an older kube-up.sh; restart it (scripts/cluster/kube-down.sh, then kube-up.sh)"
runs() { [ -f "$PLUGIN_LOG" ] && wc -l <"$PLUGIN_LOG" || echo 0; }

# The CLI: one plugin run per process (the credential is cached until it expires).
before=$(runs)
KUBECONFIG="$EXEC_KUBECONFIG" "$DLJOB" list -n "$NS" >"$TMP/list.out" 2>&1 \
  || fail "dljob list through the credential plugin: $(cat "$TMP/list.out")"
[ "$(runs)" -gt "$before" ] || fail "dljob list did not run the credential plugin"
note "dljob list through the plugin: $(head -1 "$TMP/list.out")"

# The operator, outside the cluster, watching only $NS and electing itself in $NS.
before=$(runs)
OP_PID=""
stop_operator() { [ -n "$OP_PID" ] && kill -TERM "$OP_PID" 2>/dev/null && wait "$OP_PID" 2>/dev/null; OP_PID=""; }
trap 'stop_operator; cleanup' EXIT
"$OPERATOR" --kubeconfig "$EXEC_KUBECONFIG" --namespace "$NS" --leader-elect true \
  --lease-namespace "$NS" --lease-name exec-test --identity exec-test-0 \
  --metrics-address 127.0.0.1 --metrics-port 0 --port-file "$TMP/port" \
  --log-archive-dir "$TMP/logs" >"$TMP/operator.log" 2>&1 &
OP_PID=$!
operator_alive() { kill -0 "$OP_PID" 2>/dev/null || fail "the operator exited: $(tail -5 "$TMP/operator.log")"; }
holds_lease() {
  operator_alive
  [ "$(kubectl -n "$NS" get lease exec-test -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" = exec-test-0 ]
}
wait_until "holding Lease $NS/exec-test" holds_lease
ready() {
  operator_alive
  [ -s "$TMP/port" ] && curl -fsS "http://127.0.0.1:$(cat "$TMP/port")/readyz" >/dev/null 2>&1
}
wait_until "ready (caches synced)" ready
[ "$(runs)" -gt "$before" ] || fail "the operator did not run the credential plugin"
stop_operator
note "PASS: dljob and the operator reached the cluster through the credential plugin"
