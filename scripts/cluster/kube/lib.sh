# shellcheck shell=bash
# Shared settings and helpers of scripts/cluster/kube-up.sh and kube-down.sh (sourced, not run),
# on top of scripts/lib.sh (ROOT, PROG, step, warn, die), which it sources.
#
# One directory holds all of a cluster's state ($KUBE_DIR: certificates, kubeconfigs, etcd data,
# containerd's root and state, the kubelet's root, logs, pid files); deleting it (kube-down.sh)
# deletes the cluster. Binaries come from the per-version cache that scripts/cluster/kube/
# build-kubernetes.sh fills and that outlives every cluster.
#
# Network: one Linux bridge per node made here (node 1's is $KUBE_BRIDGE) carries that node's
# pods (node 1's: $KUBE_POD_CIDR, whose gateway $KUBE_GW is the API server's address); every
# server binds a bridge's gateway or 127.0.0.1, never the machine's external address; services
# live in $KUBE_SVC_CIDR (one kube-proxy for the host, iptables). A FORWARD guard lets traffic
# pass between the cluster's bridges and drops whatever would leave or enter them from elsewhere.
# The nodes: scripts/cluster/kube/nodes.sh.
#
# Every process is started by start_daemon (its own session, its log in logs/NAME.log, its pid in
# run/NAME.pid) and stopped by stop_daemon through that pid file only.

# shellcheck source=../../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"

KUBE_VERSION="${KUBE_VERSION:-1.20.2}"
KUBE_CACHE="${DLJOB_KUBE_CACHE:-/var/cache/dljob}/kubernetes-$KUBE_VERSION"
KUBE_BIN="$KUBE_CACHE/bin"
KUBE_DIR="${DLJOB_KUBE_DIR:-/var/lib/dljob-kube}"
KUBE_NODE="${DLJOB_KUBE_NODE:-dljob-node}"
KUBE_BRIDGE="${DLJOB_KUBE_BRIDGE:-dljob0}"
# /24 networks given by their first three octets.
KUBE_POD_NET="${DLJOB_KUBE_POD_NET:-10.213.0}"
KUBE_SVC_NET="${DLJOB_KUBE_SVC_NET:-10.214.0}"
KUBE_POD_CIDR="$KUBE_POD_NET.0/24"
KUBE_SVC_CIDR="$KUBE_SVC_NET.0/24"
KUBE_GW="$KUBE_POD_NET.1"
KUBE_SVC_IP="$KUBE_SVC_NET.1"  # the `kubernetes` Service's ClusterIP
KUBE_API_PORT=6443
KUBE_ETCD_PORT=2379
KUBE_ETCD_PEER_PORT=2380
KUBE_CM_PORT=10257  # kube-controller-manager's secure (health) port
KUBE_APISERVER_EXTRA_ARGS=()  # appended to kube-apiserver's flags (apiserver-only.sh sets some)
KUBE_GPUS="${DLJOB_KUBE_GPUS:-8}"
KUBE_GPU_PRODUCT="${DLJOB_KUBE_GPU_PRODUCT:-NVIDIA-A100-SXM4-80GB}"
KUBE_ZONE="${DLJOB_KUBE_ZONE:-zone-a}"
KUBE_CLIQUE="${DLJOB_KUBE_CLIQUE:-clique-0}"
KUBE_GUARD_CHAIN=DLJOB-KUBE-GUARD
KUBECONFIG_ADMIN="$KUBE_DIR/kubeconfig"
KUBECONFIG_EXEC="$KUBE_DIR/kubeconfig-exec"  # the same admin rights through a credential plugin
# Sysctls a cluster changes (the kubelet, kube-proxy, the CNI bridge): saved at start, restored.
KUBE_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet
  net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables)
# Paths outside $KUBE_DIR the components create on their own (hard-coded in them). The first
# are the cluster's alone (removed when they did not exist before it); the shared ones are also
# podman's (/var/lib/cni, /run/netns): there only this cluster's entries are removed, and the
# directory too when it is left empty and did not exist before.
KUBE_OUTSIDE_PATHS=(/var/log/pods /var/log/containers /run/containerd /var/lib/kubelet
  /var/run/kubernetes /etc/kubernetes)
KUBE_SHARED_PATHS=(/var/lib/cni/results /var/lib/cni /run/netns)

# Start NAME with ARGS... in its own session, logging to logs/NAME.log; the pid goes to
# run/NAME.pid. Niced like every heavy process on the shared machine.
start_daemon() {
  local name="$1"; shift
  mkdir -p "$KUBE_DIR/logs" "$KUBE_DIR/run"
  setsid nice -n 5 "$@" >>"$KUBE_DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$KUBE_DIR/run/$name.pid"
}

# The pid of NAME when its pid file names a live process started from a cluster binary.
daemon_pid() {
  local f="$KUBE_DIR/run/$1.pid" pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# Stops NAME by its pid file: SIGTERM, then SIGKILL after GRACE seconds (default 10).
stop_daemon() {
  local name="$1" grace="${2:-10}" pid i
  pid=$(daemon_pid "$name") || { rm -f "$KUBE_DIR/run/$name.pid"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$name (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$KUBE_DIR/run/$name.pid"
}

# Polls COMMAND... every half second until it succeeds or TIMEOUT seconds pass.
wait_for() {
  local timeout="$1"; shift
  local end=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.5
  done
}

kctl() { kubectl --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# shellcheck source=nodes.sh
source "$(dirname "${BASH_SOURCE[0]}")/nodes.sh"
