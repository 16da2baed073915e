# shellcheck shell=bash
# The nodes of the one-machine cluster (sourced by scripts/cluster/kube/lib.sh): the node table,
# and what each node has of its own.
#
# The node table has one line per node, `name gpus product clique rack zone` (# starts a
# comment); kube-up.sh takes it from --node-table FILE, or makes the default one for --nodes N:
#   N = 1: `dljob-node 8 NVIDIA-A100-SXM4-80GB clique-0 rack-0 zone-a`, the single node of old
#          (DLJOB_KUBE_NODE, DLJOB_KUBE_GPUS, _GPU_PRODUCT, _CLIQUE, _ZONE change it);
#   N > 1: dljob-node-1 … dljob-node-N, one NVLink clique each (clique-0 …), two per rack
#          (rack-0, rack-0, rack-1, …), all in $KUBE_ZONE with $KUBE_GPUS GPUs of one product.
# The table a cluster was started with is saved as $KUBE_DIR/nodes.table; later runs of kube-up
# and kube-down read that one.
#
# Node i (1-based) owns: the bridge ${KUBE_BRIDGE%%[0-9]*}<i-1> (dljob0 … dljob3) holding its
# pods' /24 (the third octet of $KUBE_POD_NET plus i-1: 10.213.0.0/24 … 10.213.3.0/24), whose
# gateway is the node's address (the kubelet's node IP, where it serves 10250); a containerd
# (root, state, socket, config, CNI config and host-local IPAM data); a kubelet (root, certificates,
# kubeconfig, healthz port). With one node these keep the paths of the single-node cluster
# ($KUBE_DIR/containerd, $KUBE_DIR/kubelet, pid files containerd and kubelet, healthz 10248).
# With several, each node's lie under $KUBE_DIR/nodes/NAME, its daemons are containerd-NAME and
# kubelet-NAME, its healthz port is 10270+i, and its containerd and kubelet run in a mount
# namespace of the node's own ($NODE_NS, a file under the node's directory) in which
# /var/log/pods and /var/log/containers are the node's $NODE_DIR/log/{pods,containers}: every
# minute a kubelet deletes each pod log directory of a pod it does not know (kuberuntime_gc.go,
# evictPodLogsDirectories), so kubelets sharing /var/log/pods delete each other's pods' logs.

KUBE_MAX_NODES=4
KUBE_NODE_TABLE="$KUBE_DIR/nodes.table"
KUBE_NODES=1
NODE_NAMES=() NODE_GPUS=() NODE_PRODUCTS=() NODE_CLIQUES=() NODE_RACKS=() NODE_ZONES=()

# default_node_table N: the table for N nodes (see above).
default_node_table() {
  local n="$1" i
  if [ "$n" = 1 ]; then
    echo "$KUBE_NODE $KUBE_GPUS $KUBE_GPU_PRODUCT $KUBE_CLIQUE rack-0 $KUBE_ZONE"
    return
  fi
  for ((i = 1; i <= n; i++)); do
    echo "dljob-node-$i $KUBE_GPUS $KUBE_GPU_PRODUCT clique-$((i - 1)) rack-$(((i - 1) / 2)) $KUBE_ZONE"
  done
}

# load_node_table FILE: fills NODE_NAMES, NODE_GPUS, … and KUBE_NODES; returns 1, saying why on
# stderr, when the table is malformed.
load_node_table() {
  local file="$1" line=0 name gpus product clique rack zone extra v
  NODE_NAMES=() NODE_GPUS=() NODE_PRODUCTS=() NODE_CLIQUES=() NODE_RACKS=() NODE_ZONES=()
  while read -r name gpus product clique rack zone extra; do
    line=$((line + 1))
    [ -n "$name" ] && [ "${name:0:1}" != '#' ] || continue
    if [ -z "$zone" ] || [ -n "$extra" ]; then
      echo "$file:$line: want 6 fields 'name gpus product clique rack zone'" >&2; return 1
    fi
    [[ "$name" =~ ^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$ ]] \
      || { echo "$file:$line: node name '$name' is not a DNS label of at most 32 characters" >&2; return 1; }
    [[ "$gpus" =~ ^[0-9]+$ ]] || { echo "$file:$line: gpus '$gpus' is not a count" >&2; return 1; }
    for v in "$product" "$clique" "$rack" "$zone"; do
      [[ "$v" =~ ^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$ ]] \
        || { echo "$file:$line: '$v' is not a label value" >&2; return 1; }
    done
    case " ${NODE_NAMES[*]} " in *" $name "*) echo "$file:$line: node $name twice" >&2; return 1 ;; esac
    NODE_NAMES+=("$name") NODE_GPUS+=("$gpus") NODE_PRODUCTS+=("$product")
    NODE_CLIQUES+=("$clique") NODE_RACKS+=("$rack") NODE_ZONES+=("$zone")
  done <"$file"
  KUBE_NODES=${#NODE_NAMES[@]}
  if [ "$KUBE_NODES" -lt 1 ] || [ "$KUBE_NODES" -gt "$KUBE_MAX_NODES" ]; then
    echo "$file: $KUBE_NODES nodes; 1 to $KUBE_MAX_NODES are supported" >&2; return 1
  fi
  local a b c
  IFS=. read -r a b c <<<"$KUBE_POD_NET"
  if [ "$KUBE_NODES" -gt 1 ] && [ $((c % 4)) != 0 ]; then
    echo "the pod network's third octet ($KUBE_POD_NET) must be a multiple of 4 for several nodes" >&2; return 1
  fi
  # kube-proxy's clusterCIDR: every node's pods (a /22 holds the 4 nodes' /24s).
  KUBE_CLUSTER_CIDR="$KUBE_POD_CIDR"
  [ "$KUBE_NODES" = 1 ] || KUBE_CLUSTER_CIDR="$a.$b.$c.0/22"
}

# node_bridge I: the bridge of node I (also without a node table: kube-down looks for all).
node_bridge() {
  if [ "$1" = 1 ]; then echo "$KUBE_BRIDGE"; else echo "${KUBE_BRIDGE%%[0-9]*}$(($1 - 1))"; fi
}

# node_env I: the NODE_* variables of node I (1-based) of the loaded table.
node_env() {
  local i="$1" a b c
  NODE_NAME="${NODE_NAMES[i - 1]}"
  IFS=. read -r a b c <<<"$KUBE_POD_NET"
  NODE_NET="$a.$b.$((c + i - 1))"
  NODE_CIDR="$NODE_NET.0/24"
  NODE_GW="$NODE_NET.1"
  NODE_BRIDGE="$(node_bridge "$i")"
  NODE_LABELS="nvidia.com/gpu.product=${NODE_PRODUCTS[i - 1]},nvidia.com/gpu.count=${NODE_GPUS[i - 1]}"
  NODE_LABELS="$NODE_LABELS,nvidia.com/gpu.clique=${NODE_CLIQUES[i - 1]}"
  NODE_LABELS="$NODE_LABELS,dljob.io/rack=${NODE_RACKS[i - 1]},topology.kubernetes.io/zone=${NODE_ZONES[i - 1]}"
  NODE_GPU_COUNT="${NODE_GPUS[i - 1]}"
  if [ "$KUBE_NODES" = 1 ]; then
    NODE_DIR="$KUBE_DIR" NODE_TAG="" NODE_HEALTHZ=10248 NODE_NS=""
  else
    NODE_DIR="$KUBE_DIR/nodes/$NODE_NAME" NODE_TAG="-$NODE_NAME" NODE_HEALTHZ=$((10270 + i))
    NODE_NS="$NODE_DIR/ns/mnt"
  fi
  NODE_SOCK="$NODE_DIR/run/containerd/containerd.sock"
  # Runs a command in the node's mount namespace (or the host's, with one node).
  NODE_EXEC=()
  [ -z "$NODE_NS" ] || NODE_EXEC=(nsenter "--mount=$NODE_NS" --)
}

# Loads the table the cluster in $KUBE_DIR was started with; without one, the single node.
load_saved_nodes() {
  if [ -f "$KUBE_NODE_TABLE" ]; then
    load_node_table "$KUBE_NODE_TABLE"
  else
    load_node_table <(default_node_table 1)
  fi
}

# make_node_namespace: node's mount namespace, held by the file $NODE_NS (a bind mount of the
# namespace on a private mount: a namespace file cannot live on a shared one). Host mounts made
# later still reach it (slave propagation); nothing mounted in it reaches the host. In it,
# /var/log/pods and /var/log/containers are the node's own directories.
make_node_namespace() {
  [ -n "$NODE_NS" ] || return 0
  local dir
  dir="$(dirname "$NODE_NS")"
  mkdir -p "$dir" "$NODE_DIR/log/pods" "$NODE_DIR/log/containers" /var/log/pods /var/log/containers
  mount --bind "$dir" "$dir"
  mount --make-private "$dir"
  touch "$NODE_NS"
  unshare --mount="$NODE_NS" --propagation slave true
  nsenter --mount="$NODE_NS" -- mount --bind "$NODE_DIR/log/pods" /var/log/pods
  nsenter --mount="$NODE_NS" -- mount --bind "$NODE_DIR/log/containers" /var/log/containers
}
