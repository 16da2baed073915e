#!/usr/bin/env bash
# Faults of the cluster that scripts/cluster/kube-up.sh started, made the way they happen: a
# component's process stopped (SIGTERM, by its pid file) and, where asked, started again with the
# same command line. What the pods' containers do is left to them: a stopped kubelet leaves its
# containers running, as on a node whose kubelet died. For the fault tests (tests/operator's
# shared cases, tests/cluster) and for trying a fault by hand.
#
# Usage: scripts/cluster/kube-fault.sh COMMAND [NODE]      (environment: DLJOB_KUBE_DIR)
#   stop-kubelet NODE      stop NODE's kubelet; the node goes NotReady once the controller
#                          manager's node-monitor grace period (20 s) passes
#   start-kubelet NODE     start it again; returns once the node is Ready
#   restart-kubelet NODE   both (every log stream the kubelet served ends)
#   restart-apiserver      kube-apiserver stopped and started again; returns once it is ready
#   restart-etcd           etcd stopped and started again; returns once it is healthy
# Exit codes: 0 done, 1 failed (the component's log tail is printed), 2 bad usage.
set -euo pipefail

PROG=kube-fault
HERE="$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=kube/lib.sh
source "$HERE/kube/lib.sh"
# shellcheck source=kube/nodes.sh
source "$HERE/kube/nodes.sh"
# shellcheck source=kube/configs.sh
source "$HERE/kube/configs.sh"
# shellcheck source=kube/start.sh
source "$HERE/kube/start.sh"
FAILED_LOG=""

usage() { sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
[ "$(id -u)" = 0 ] || { echo "kube-fault: needs root (the cluster's processes are root's)" >&2; exit 1; }
daemon_pid kube-apiserver >/dev/null || daemon_pid etcd >/dev/null \
  || die "no cluster runs in $KUBE_DIR (start one with scripts/cluster/kube-up.sh)"

# node NAME: node_env of the node called NAME in the cluster's node table.
node() {
  local i
  load_saved_nodes || exit 1
  for ((i = 1; i <= KUBE_NODES; i++)); do
    if [ "${NODE_NAMES[i - 1]}" = "$1" ]; then
      node_env "$i"
      return 0
    fi
  done
  echo "kube-fault: no node '$1' in this cluster (nodes: ${NODE_NAMES[*]})" >&2
  exit 2
}

need_node() { [ $# -ge 2 ] || { echo "kube-fault: $1 needs a NODE (see --help)" >&2; exit 2; }; }

case "$1" in
  stop-kubelet|start-kubelet|restart-kubelet)
    need_node "$@"
    node "$2"
    if [ "$1" != start-kubelet ]; then
      stop_daemon "kubelet$NODE_TAG"
      step "kubelet of $NODE_NAME stopped (its containers run on)"
    fi
    if [ "$1" != stop-kubelet ]; then
      daemon_pid "kubelet$NODE_TAG" >/dev/null && die "the kubelet of $NODE_NAME runs already"
      start_kubelet
      FAILED_LOG="$KUBE_DIR/logs/kubelet$NODE_TAG.log"
      wait_for 120 node_ready || die "node $NODE_NAME is not Ready 120 s after its kubelet started"
      step "node $NODE_NAME Ready again"
    fi
    ;;
  restart-apiserver)
    stop_daemon kube-apiserver
    start_apiserver
    ;;
  restart-etcd)
    stop_daemon etcd
    start_etcd
    ;;
  *) echo "kube-fault: unknown command '$1' (see --help)" >&2; exit 2 ;;
esac
