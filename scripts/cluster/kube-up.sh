#!/usr/bin/env bash
# Starts a real Kubernetes (1.20.2, from Debian's source package) on this one machine, the way
# kind would on a laptop, and loads dljob's images into it; kube-down.sh stops it.
#
# What runs (all as processes of this machine, each logged to $DLJOB_KUBE_DIR/logs/NAME.log):
#   etcd; kube-apiserver (RBAC, service-account signing keys, the default admission plugins plus
#   NodeRestriction); kube-controller-manager; kube-scheduler; containerd (its own root, state
#   and socket; CRI with the local pause image); a kubelet on it (cgroupfs, a CNI bridge with
#   host-local IPAM); kube-proxy (iptables), so that pods reach the API server through the
#   `kubernetes` Service. Each node advertises its GPUs (8) as the extended resource
#   nvidia.com/gpu and the labels dljob's scheduler reads (nvidia.com/gpu.product, .count,
#   .clique, dljob.io/rack, topology.kubernetes.io/zone).
# Nodes: one (dljob-node) by default; --nodes N (1 to 4) starts N, dljob-node-1 … dljob-node-N,
#   each a kubelet with its own containerd, bridge and pod /24 (scripts/cluster/kube/nodes.sh).
# Network: the servers bind the address of a bridge made here (10.213.0.1 by default) or
#   127.0.0.1, never the machine's external address; pods live on the nodes' bridges only, and an
#   iptables guard drops anything forwarded between them and any other interface.
# Binaries: built once per version by scripts/cluster/kube/build-kubernetes.sh into
#   /var/cache/dljob/kubernetes-1.20.2 (about 8 minutes on 2 quiet cores, 40 on busy ones),
#   reused after.
# Images: dljob/trainer:cpu (scripts/cluster/build-image.sh) and dljob/operator:0.1.0
#   (scripts/cluster/build-image.sh --image operator), built when podman does not have them
#   yet from programs compiled on this machine first (build-image.sh --build-programs, into the
#   checkout's build-images/; no compile in the image builds), then loaded into containerd's
#   k8s.io namespace as docker.io/dljob/{trainer:cpu,operator:0.1.0}.
#
# Usage: scripts/cluster/kube-up.sh [--nodes N | --node-table FILE] [--no-images | --images LIST]
#                                   [--rebuild-images] [--keep-on-failure]
#   --nodes N          N nodes (1 to 4, default 1), with the default table: dljob-node-1 … N,
#                      8 GPUs each, clique-0 … (one NVLink clique per node), two nodes per rack
#                      (rack-0, rack-0, rack-1, rack-1), zone-a; one node is `dljob-node`
#   --node-table FILE  the nodes from FILE, a line `name gpus product clique rack zone` each,
#                      e.g. `gpu-a 4 NVIDIA-H100-80GB-HBM3 clique-a rack-0 zone-b` (# comments)
#   --no-images        start the cluster only: no dljob image is built or loaded
#   --images LIST      only these of dljob's images, comma-separated: cpu, operator (default both)
#   --rebuild-images   build the dljob images even when podman has them
#   --keep-on-failure  leave what was started running on failure (default: kube-down.sh)
# Environment: DLJOB_KUBE_DIR (state, default /var/lib/dljob-kube), DLJOB_KUBE_CACHE (binary
#   cache root, default /var/cache/dljob), DLJOB_KUBE_GPUS, DLJOB_KUBE_GPU_PRODUCT, DLJOB_KUBE_ZONE
#   (the default table's), DLJOB_KUBE_NODES (--nodes), DLJOB_IMAGE_PROGRAMS_DIR (the build
#   directory whose programs go into the images; default build-images/, compiled when missing).
# Run again while the cluster is up, it builds missing images and loads them again (a rebuilt image
# reaches the node that way). Ends by printing `export KUBECONFIG=...`. Needs root (mounts, bridge,
# iptables). Exit codes: 0 up (or already up), 1 failed (the failing component's log tail is
# printed), 2 bad usage.
set -euo pipefail

PROG=kube-up
IMAGES=1
IMAGE_NAMES=""
REBUILD_IMAGES=0
KEEP=0
NODES="${DLJOB_KUBE_NODES:-}"
TABLE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES="${2:-}"; shift 2 || shift ;;
    --node-table) TABLE="${2:-}"; shift 2 || shift ;;
    --no-images) IMAGES=0; shift ;;
    --images)
      IMAGE_NAMES="$(tr ',' ' ' <<<"${2:-}")"; shift 2 || shift
      for image in $IMAGE_NAMES; do
        [[ "$image" =~ ^(cpu|operator)$ ]] \
          || { echo "kube-up: --images takes cpu and operator, not '$image'" >&2; exit 2; }
      done
      [ -n "${IMAGE_NAMES// /}" ] || { echo "kube-up: --images wants cpu, operator or both" >&2; exit 2; }
      ;;
    --rebuild-images) REBUILD_IMAGES=1; shift ;;
    --keep-on-failure) KEEP=1; shift ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "kube-up: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
HERE="$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=kube/lib.sh
source "$HERE/kube/lib.sh"
# shellcheck source=kube/certs.sh
source "$HERE/kube/certs.sh"
# shellcheck source=kube/configs.sh
source "$HERE/kube/configs.sh"
# shellcheck source=kube/start.sh
source "$HERE/kube/start.sh"
if [ -n "$NODES" ] && [ -n "$TABLE" ]; then
  echo "kube-up: --nodes and --node-table exclude each other (the table says how many)" >&2; exit 2
fi
if [ -n "$NODES" ] && ! [[ "$NODES" =~ ^[1-9][0-9]*$ && "$NODES" -le $KUBE_MAX_NODES ]]; then
  echo "kube-up: --nodes wants 1 to $KUBE_MAX_NODES, not '$NODES'" >&2; exit 2
fi
if [ -n "$TABLE" ]; then
  [ -r "$TABLE" ] || { echo "kube-up: cannot read the node table '$TABLE'" >&2; exit 2; }
  load_node_table "$TABLE" || exit 2
  TABLE="$(cd "$(dirname "$TABLE")" && pwd)/$(basename "$TABLE")"
else
  load_node_table <(default_node_table "${NODES:-1}") || exit 2
fi
[ "$(id -u)" = 0 ] || { echo "kube-up: needs root (bridge, mounts, iptables)" >&2; exit 1; }

print_use() {
  local i
  echo
  echo "The cluster is up ($KUBE_NODES node(s); state in $KUBE_DIR):"
  for ((i = 1; i <= KUBE_NODES; i++)); do
    node_env "$i"
    echo "  $NODE_NAME  $NODE_GW  pods $NODE_CIDR on $NODE_BRIDGE  $NODE_GPU_COUNT nvidia.com/gpu  ${NODE_PRODUCTS[i - 1]} ${NODE_CLIQUES[i - 1]} ${NODE_RACKS[i - 1]} ${NODE_ZONES[i - 1]}"
  done
  echo "  export KUBECONFIG=$KUBECONFIG_ADMIN"
  echo "  (or $KUBECONFIG_EXEC: the same rights through a credential plugin, as on EKS or GKE)"
  echo "  kubectl get nodes -o wide"
  echo "  kubectl apply -f charts/manifests/dljob.yaml      # dljob's CRDs, RBAC and operator"
  echo "Stop it and remove everything it made: scripts/cluster/kube-down.sh"
}

# die (scripts/lib.sh) prints the end of FAILED_LOG, the log of the component that failed.
FAILED_LOG=""

# Every node's kubelet alive (the table the cluster was started with; a cluster started before
# there were tables has the one node).
cluster_up() {
  local i
  daemon_pid kube-apiserver >/dev/null || return 1
  load_saved_nodes || return 1
  for ((i = 1; i <= KUBE_NODES; i++)); do
    node_env "$i"
    daemon_pid "kubelet$NODE_TAG" >/dev/null && daemon_pid "containerd$NODE_TAG" >/dev/null || return 1
  done
}
WANT_NODES=$KUBE_NODES
if cluster_up; then
  step "a cluster of $KUBE_NODES node(s) is already up in $KUBE_DIR (kube-apiserver pid $(daemon_pid kube-apiserver))"
  if [ -n "$NODES$TABLE" ] && [ "$WANT_NODES" != "$KUBE_NODES" ]; then
    warn "it has $KUBE_NODES node(s), not $WANT_NODES: stop it (scripts/cluster/kube-down.sh) to start another"
  fi
  if [ "$IMAGES" = 1 ]; then
    step "(re)loading dljob's images into it (--no-images skips this)"
    build_image_programs
    build_dljob_images
    load_dljob_images
  fi
  print_use
  exit 0
fi
if [ -e "$KUBE_DIR" ]; then
  step "$KUBE_DIR holds a cluster that is not (fully) running; cleaning it up first"
  DLJOB_KUBE_DIR="$KUBE_DIR" bash "$ROOT/scripts/cluster/kube-down.sh" --quiet
  if [ -n "$TABLE" ]; then load_node_table "$TABLE"; else load_node_table <(default_node_table "${NODES:-1}"); fi
fi

BUILD_PID=""
on_exit() {
  local rc=$?
  if [ -n "$BUILD_PID" ] && kill -0 "$BUILD_PID" 2>/dev/null; then
    kill -TERM -- "-$BUILD_PID" 2>/dev/null || true
  fi
  [ $rc -ne 0 ] || return 0
  echo "kube-up: FAILED after $((SECONDS - DLJOB_T0))s (exit $rc)" >&2
  if [ "$KEEP" = 1 ]; then
    echo "kube-up: left running (--keep-on-failure); logs in $KUBE_DIR/logs; stop with scripts/cluster/kube-down.sh" >&2
  else
    if [ -d "$KUBE_DIR/logs" ] && [ -n "$(ls -A "$KUBE_DIR/logs")" ]; then
      local keep
      keep="/tmp/dljob-kube-logs.$(date +%Y%m%d-%H%M%S)"
      cp -r "$KUBE_DIR/logs" "$keep" && echo "kube-up: the components' logs are kept in $keep" >&2
    fi
    echo "kube-up: stopping what was started (scripts/cluster/kube-down.sh); rerun with --keep-on-failure to inspect" >&2
    DLJOB_KUBE_DIR="$KUBE_DIR" bash "$ROOT/scripts/cluster/kube-down.sh" --quiet || true
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# 1. Packages.
install_packages

# 2. The programs dljob's images carry, compiled first (when an image is to be built), then the
# Kubernetes binaries, built in the background (niced) while the images are made from those
# programs: the two compiles never share the cores, and the image builds compile nothing.
if [ "$IMAGES" = 1 ]; then build_image_programs; fi
if [ ! -f "$KUBE_CACHE/complete" ]; then
  mkdir -p "$(dirname "$KUBE_CACHE")"
  step "building Kubernetes $KUBE_VERSION in the background (log: $KUBE_CACHE.build.log)"
  setsid bash "$ROOT/scripts/cluster/kube/build-kubernetes.sh" >"$KUBE_CACHE.build.log" 2>&1 &
  BUILD_PID=$!
else
  step "Kubernetes $KUBE_VERSION binaries cached in $KUBE_BIN"
fi

# 3. dljob's images in podman (built when missing).
if [ "$IMAGES" = 1 ]; then build_dljob_images; fi

# 4. Wait for the binaries; then the pause image.
if [ -n "$BUILD_PID" ]; then
  step "waiting for the Kubernetes build (tail -f $KUBE_CACHE.build.log)"
  FAILED_LOG="$KUBE_CACHE.build.log"
  wait "$BUILD_PID" || die "building Kubernetes failed; see $KUBE_CACHE.build.log and $KUBE_CACHE/make.log"
  BUILD_PID=""
  FAILED_LOG=""
  step "Kubernetes binaries built: $(grep -o 'Go build done in [0-9]*s' "$KUBE_CACHE.build.log" || true)"
fi
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy pause; do
  [ -x "$KUBE_BIN/$b" ] || die "$KUBE_BIN/$b is missing; remove $KUBE_CACHE and rerun"
done
build_pause_image

# 5. Network, certificates, configuration.
mkdir -p "$KUBE_DIR/run" "$KUBE_DIR/logs"
for ((i = 1; i <= KUBE_NODES; i++)); do
  echo "${NODE_NAMES[i - 1]} ${NODE_GPUS[i - 1]} ${NODE_PRODUCTS[i - 1]} ${NODE_CLIQUES[i - 1]} ${NODE_RACKS[i - 1]} ${NODE_ZONES[i - 1]}"
done >"$KUBE_NODE_TABLE"
check_ports
record_host_state
setup_network
make_pki
make_exec_user
write_configs
for ((i = 1; i <= KUBE_NODES; i++)); do
  node_env "$i"
  make_node_pki
  write_node_configs
  step "node $NODE_NAME: bridge $NODE_BRIDGE ($NODE_GW, pods $NODE_CIDR), certificates and configs in $NODE_DIR"
done
step "services $KUBE_SVC_CIDR, API server $KUBE_GW:$KUBE_API_PORT"

# 6. Control plane, nodes, images.
start_control_plane
for ((i = 1; i <= KUBE_NODES; i++)); do
  node_env "$i"
  start_node
done
start_proxy
if [ "$IMAGES" = 1 ]; then load_dljob_images; fi
for ((i = 1; i <= KUBE_NODES; i++)); do node_env "$i"; advertise_gpus; done
for ((i = 1; i <= KUBE_NODES; i++)); do node_env "$i"; finish_node; done
finish_cluster

step "cluster up in $((SECONDS - DLJOB_T0))s"
print_use
