#!/usr/bin/env bash
# Starts (up) or stops (down) a bare real Kubernetes API server for benchmarks and for
# dljob-sim-nodes: etcd and kube-apiserver (1.20.2, RBAC on, NodeRestriction), optionally
# kube-controller-manager (garbage collection, node lifecycle), from the binaries that
# scripts/cluster/kube-up.sh builds — no kubelet, no containerd, no CNI, no bridge, no iptables
# or sysctl change, no root needed. Everything binds 127.0.0.1 on ports apart from kube-up's
# (API 16443, etcd 12379/12380, controller-manager 10357), so both can run side by side; all
# state (certificates, etcd data, logs, pid files, the admin kubeconfig) lives in one directory.
# Processes are started and stopped by their pid files only (kube-up's start_daemon/stop_daemon).
#
# Usage: scripts/cluster/apiserver-only.sh up [--controller-manager] [--crds]
#        scripts/cluster/apiserver-only.sh down [--keep-dir]
#        scripts/cluster/apiserver-only.sh status
#   up                    start etcd and kube-apiserver (and whatever is asked for); prints
#                         `export KUBECONFIG=<dir>/kubeconfig` (user dljob-admin, system:masters)
#   --controller-manager  also kube-controller-manager (garbage collector, namespace deletion,
#                         node lifecycle: nodes whose Lease stops being renewed go NotReady)
#   --crds                install the DLJob and DLQueue CRDs (charts/dljob/crds) and wait until
#                         they are Established
#   down                  stop what `up` started and delete the directory (--keep-dir keeps it)
# Environment: DLJOB_APISERVER_DIR (state, default /tmp/dljob-apiserver), DLJOB_APISERVER_PORT
#   (16443), DLJOB_APISERVER_ETCD_PORT (12379; the peer port is the next one),
#   DLJOB_APISERVER_CM_PORT (10357), DLJOB_KUBE_CACHE (binary cache root, as for kube-up).
# Exit codes: 0 done, 1 failed (the failing component's log tail is printed), 2 bad usage or
# missing binaries.
set -euo pipefail

PROG=apiserver-only
HERE="$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=kube/lib.sh
source "$HERE/kube/lib.sh"
# shellcheck source=kube/certs.sh
source "$HERE/kube/certs.sh"
# shellcheck source=kube/start.sh
source "$HERE/kube/start.sh"

# kube-up's settings, pointed at this server's own directory, address and ports (read by its
# helpers).
# shellcheck disable=SC2034
KUBE_DIR="${DLJOB_APISERVER_DIR:-/tmp/dljob-apiserver}"
KUBECONFIG_ADMIN="$KUBE_DIR/kubeconfig"
KUBECONFIG_EXEC="$KUBE_DIR/kubeconfig-exec"
KUBE_GW=127.0.0.1
KUBE_API_PORT="${DLJOB_APISERVER_PORT:-16443}"
KUBE_ETCD_PORT="${DLJOB_APISERVER_ETCD_PORT:-12379}"
KUBE_ETCD_PEER_PORT=$((KUBE_ETCD_PORT + 1))
KUBE_CM_PORT="${DLJOB_APISERVER_CM_PORT:-10357}"
KUBE_SVC_NET=10.215.0
KUBE_SVC_CIDR="$KUBE_SVC_NET.0/24"
KUBE_SVC_IP="$KUBE_SVC_NET.1"
# The `kubernetes` Service's Endpoints may not hold a loopback address (the API server would
# retry that write every 10 s, logging the refusal); nothing here reaches it through the Service.
KUBE_APISERVER_EXTRA_ARGS=(--endpoint-reconciler-type=none)

usage() { show_help; exit 2; }

refuse_shared_dir() {
  local real
  real="$(realpath -m "$KUBE_DIR")"
  if [ "$real" = "$(realpath -m "${DLJOB_KUBE_DIR:-/var/lib/dljob-kube}")" ] || [ "$real" = / ]; then
    die --exit 2 "DLJOB_APISERVER_DIR=$KUBE_DIR is kube-up's cluster directory; choose another"
  fi
}

check_binaries() {
  local b
  for b in kube-apiserver kube-controller-manager; do
    [ -x "$KUBE_BIN/$b" ] || die --exit 2 "$KUBE_BIN/$b is missing; run scripts/cluster/kube-up.sh once to build them (it caches them there)"
  done
  need_command etcd "install Debian's etcd-server (apt-get install etcd-server)"
  need_command openssl "install Debian's openssl"
  need_command curl "install Debian's curl"
}

check_free_ports() {
  local port
  for port in "$KUBE_API_PORT" "$KUBE_ETCD_PORT" "$KUBE_ETCD_PEER_PORT" "$@"; do
    if ss -Hltn "sport = :$port" | grep -q .; then
      die "port $port is in use on this machine (ss -ltnp 'sport = :$port'); is another apiserver-only running? (set DLJOB_APISERVER_*PORT)"
    fi
  done
}

install_crds() {
  kctl apply -f "$ROOT/charts/dljob/crds/" >"$KUBE_DIR/logs/crds.log" 2>&1 ||
    { FAILED_LOG="$KUBE_DIR/logs/crds.log"; die "kubectl apply of charts/dljob/crds failed"; }
  kctl wait --for condition=Established --timeout 60s crd/dljobs.dljob.io crd/dlqueues.dljob.io \
    >>"$KUBE_DIR/logs/crds.log" 2>&1 ||
    { FAILED_LOG="$KUBE_DIR/logs/crds.log"; die "the DLJob CRDs did not become Established"; }
  step "DLJob and DLQueue CRDs installed"
}

up() {
  local cm=0 crds=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --controller-manager) cm=1 ;;
      --crds) crds=1 ;;
      *) echo "$PROG: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
  done
  refuse_shared_dir
  check_binaries
  if daemon_pid kube-apiserver >/dev/null; then
    say "already up ($KUBE_DIR)"
  else
    if [ "$cm" = 1 ]; then check_free_ports "$KUBE_CM_PORT"; else check_free_ports; fi
    mkdir -p "$KUBE_DIR"
    trap 'rc=$?; if [ $rc != 0 ]; then warn "up failed; stopping what it started"; down_daemons; fi' EXIT
    step "certificates and kubeconfig in $KUBE_DIR"
    make_pki
    make_exec_user
    start_etcd
    start_apiserver
  fi
  if [ "$cm" = 1 ] && ! daemon_pid kube-controller-manager >/dev/null; then
    start_controller_manager
  fi
  if [ "$crds" = 1 ]; then install_crds; fi
  trap - EXIT
  say "up: https://$KUBE_GW:$KUBE_API_PORT"
  echo "export KUBECONFIG=$KUBECONFIG_ADMIN"
}

down_daemons() {
  stop_daemon kube-controller-manager
  stop_daemon kube-apiserver
  stop_daemon etcd
}

down() {
  local keep=0
  [ "${1:-}" = --keep-dir ] && keep=1
  refuse_shared_dir
  down_daemons
  if [ "$keep" = 0 ] && [ -d "$KUBE_DIR" ]; then rm -rf "$KUBE_DIR"; fi
  say "down"
}

status() {
  local name pid any=1
  for name in etcd kube-apiserver kube-controller-manager; do
    if pid=$(daemon_pid "$name"); then echo "$name: running (pid $pid)"; any=0; else echo "$name: not running"; fi
  done
  [ "$any" = 0 ] && echo "export KUBECONFIG=$KUBECONFIG_ADMIN"
  return "$any"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  status) status ;;
  -h|--help) show_help; exit 0 ;;
  *) usage ;;
esac
