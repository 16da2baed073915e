# shellcheck shell=bash
# A bare API server of a script's own, for the scripts that measure against one
# (bench/operator_real.sh, tests/sim_nodes/measure_rate.sh). Sourced after scripts/lib.sh.
#
#   private_apiserver NAME API_PORT ETCD_PORT CM_PORT
#
# makes TMP (/tmp/NAME.XXXXXX), points scripts/cluster/apiserver-only.sh at it
# (DLJOB_APISERVER_DIR and the three ports) and KUBECONFIG at its admin kubeconfig, and sets the
# traps that, on exit or on a signal, stop the dljob-sim-nodes whose PID the script keeps in
# SIM_PID (if any), then the server, then remove TMP. The caller runs `apiserver-only.sh up`.
private_apiserver() {
  TMP="$(mktemp -d "/tmp/$1.XXXXXX")"
  export DLJOB_APISERVER_DIR="$TMP/apiserver"
  export DLJOB_APISERVER_PORT="$2" DLJOB_APISERVER_ETCD_PORT="$3" DLJOB_APISERVER_CM_PORT="$4"
  export KUBECONFIG="$DLJOB_APISERVER_DIR/kubeconfig"
  SIM_PID=""
  trap private_apiserver_cleanup EXIT
  trap 'exit 143' TERM INT  # so that the cleanup runs on a signal too
}

private_apiserver_cleanup() {
  if [ -n "$SIM_PID" ] && kill -0 "$SIM_PID" 2>/dev/null; then kill -TERM "$SIM_PID"; wait "$SIM_PID"; fi
  "$ROOT/scripts/cluster/apiserver-only.sh" down >/dev/null 2>&1
  rm -rf "$TMP"
}
