# shellcheck shell=bash
# The stages of scripts/cluster/kube-up.sh (sourced after scripts/cluster/kube/lib.sh, certs.sh and
# configs.sh): packages, images, host state, network, control plane, node. Each stage prints a
# progress line and, on failure, names the log to read (kube-up prints its tail) and exits non-zero.

# Packages each needed command comes from (Debian bookworm).
install_packages() {
  local -A pkg_of=([etcd]=etcd-server [containerd]=containerd [ctr]=containerd [runc]=runc
    [iptables]=iptables [ip6tables]=iptables [conntrack]=conntrack [socat]=socat [go]=golang-go
    [rsync]=rsync [dpkg-source]=dpkg-dev [podman]=podman [openssl]=openssl [curl]=curl [jq]=jq
    [gcc]=build-essential [make]=build-essential [kubectl]=kubernetes-client [ip]=iproute2
    [setsid]=util-linux)
  local missing=() cmd
  for cmd in "${!pkg_of[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${pkg_of[$cmd]}")
  done
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] \
    || missing+=(containernetworking-plugins)
  [ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] \
    || missing+=(golang-github-modern-go-reflect2-dev)
  if [ ${#missing[@]} -eq 0 ]; then
    step "packages present"
    return 0
  fi
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  step "apt-get install ${missing[*]}"
  mkdir -p "$KUBE_DIR/logs"
  FAILED_LOG="$KUBE_DIR/logs/apt.log"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -q && nice -n 10 apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    >"$FAILED_LOG" 2>&1 || die "apt-get could not install ${missing[*]}"
  FAILED_LOG=""
}

# dljob's images in podman, made by scripts/cluster/build-image.sh from programs compiled on
# this machine in the checkout's build-images/ (the NCCL collective off: no image has CUDA), or in
# $DLJOB_IMAGE_PROGRAMS_DIR; the image builds compile nothing. Built when podman lacks them, or
# all with --rebuild-images. IMAGE_NAMES (kube-up's --images): which of them, cpu and operator.
IMAGE_PROGRAMS_DIR="${DLJOB_IMAGE_PROGRAMS_DIR:-$ROOT/build-images}"
declare -A DLJOB_IMAGE_TAGS=([cpu]=dljob/trainer:cpu [operator]=dljob/operator:0.1.0)
IMAGE_NAMES="${IMAGE_NAMES:-cpu operator}"

# IMAGES_TO_BUILD: the images (build-image.sh's --image names) to build now.
images_to_build() {
  local image
  IMAGES_TO_BUILD=()
  for image in $IMAGE_NAMES; do
    if [ "$REBUILD_IMAGES" = 1 ] || ! podman image exists "localhost/${DLJOB_IMAGE_TAGS[$image]}"; then
      IMAGES_TO_BUILD+=("$image")
    fi
  done
}

# The programs the images to build carry, compiled (or brought up to date: with ccache warm,
# mostly links) on this machine. kube-up runs this before the Kubernetes build starts: both
# compile, and on 2 cores side by side each takes several times longer.
build_image_programs() {
  images_to_build
  [ ${#IMAGES_TO_BUILD[@]} -gt 0 ] || return 0
  local t0=$SECONDS args=()
  if [ ${#IMAGES_TO_BUILD[@]} = 1 ]; then args=(--image "${IMAGES_TO_BUILD[0]}"); fi
  mkdir -p "$KUBE_DIR/logs"
  FAILED_LOG="$KUBE_DIR/logs/build-programs.log"
  step "compiling the images' programs in $IMAGE_PROGRAMS_DIR (build-image.sh --build-programs; log: $FAILED_LOG)"
  nice -n 10 bash "$ROOT/scripts/cluster/build-image.sh" --build-programs "${args[@]}" \
    --from-build "$IMAGE_PROGRAMS_DIR" >"$FAILED_LOG" 2>&1 \
    || die "scripts/cluster/build-image.sh --build-programs failed"
  step "the images' programs built in $((SECONDS - t0))s"
  FAILED_LOG=""
}

# The images from those programs: no compile, mostly apt-get of the runtime packages, so they
# can run beside the Kubernetes build.
build_dljob_images() {
  local image tag t0
  images_to_build
  mkdir -p "$KUBE_DIR/logs"
  for image in $IMAGE_NAMES; do
    tag="${DLJOB_IMAGE_TAGS[$image]}"
    if [[ " ${IMAGES_TO_BUILD[*]} " != *" $image "* ]]; then
      step "$tag present in podman (reused; --rebuild-images rebuilds it)"
      continue
    fi
    t0=$SECONDS
    FAILED_LOG="$KUBE_DIR/logs/build-image-$image.log"
    step "building $tag (scripts/cluster/build-image.sh --image $image; log: $FAILED_LOG)"
    nice -n 10 bash "$ROOT/scripts/cluster/build-image.sh" --image "$image" \
      --from-build "$IMAGE_PROGRAMS_DIR" >"$FAILED_LOG" 2>&1 \
      || die "scripts/cluster/build-image.sh --image $image failed"
    step "$tag built in $((SECONDS - t0))s"
  done
  FAILED_LOG=""
}

# The pod sandbox image, FROM scratch around the static pause binary; an OCI archive in the cache.
build_pause_image() {
  local tar="$KUBE_CACHE/pause.oci.tar" ctx="$KUBE_CACHE/pause-context"
  [ -f "$tar" ] && return 0
  rm -rf "$ctx"
  mkdir -p "$ctx"
  cp "$KUBE_BIN/pause" "$ctx/pause"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$ctx/Containerfile"
  local tag="localhost/dljob/pause:$KUBE_VERSION"
  podman build -q -t "$tag" -f "$ctx/Containerfile" "$ctx" >"$KUBE_CACHE/pause-build.log" 2>&1 \
    || { FAILED_LOG="$KUBE_CACHE/pause-build.log"; die "podman could not build the pause image"; }
  podman save -q --format oci-archive -o "$tar.tmp" "$tag" && mv "$tar.tmp" "$tar"
  podman rmi "$tag" >/dev/null 2>&1 || true
  rm -rf "$ctx"
  step "pause image built from build/pause/linux/pause.c ($tar)"
}

# Saves what a cluster changes on the host, for kube-down.sh to restore: sysctls, and which of
# the paths the components create outside $KUBE_DIR existed before.
record_host_state() {
  mkdir -p "$KUBE_DIR/host"
  [ -f "$KUBE_DIR/host/sysctl.saved" ] && return 0
  local s p
  for s in "${KUBE_SYSCTLS[@]}"; do
    echo "$s=$(sysctl -n "$s" 2>/dev/null || echo '?')"
  done >"$KUBE_DIR/host/sysctl.saved"
  for p in "${KUBE_OUTSIDE_PATHS[@]}" "${KUBE_SHARED_PATHS[@]}" /sys/fs/cgroup/*/k8s.io; do [ -e "$p" ] && echo "$p"; done \
    >"$KUBE_DIR/host/preexisting" || true
}

# One bridge per node, its gateway the node's address. The host routes between the bridges
# (all in its network namespace: each /24 is a connected route), so pods of different nodes
# reach each other through ip_forward; the guard lets exactly that pass.
setup_network() {
  local i net bridges=()
  for ((i = 1; i <= KUBE_NODES; i++)); do
    node_env "$i"
    bridges+=("$NODE_BRIDGE")
    if ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
      die "interface $NODE_BRIDGE exists already; run scripts/cluster/kube-down.sh (or set DLJOB_KUBE_BRIDGE)"
    fi
    for net in "$NODE_NET" "$KUBE_SVC_NET"; do
      if ip -4 -o addr show | grep -q "inet ${net//./\\.}\." || ip -4 route show | grep -q "^${net//./\\.}\."; then
        die "$net.0/24 is in use on this machine (ip addr / ip route); set DLJOB_KUBE_POD_NET / DLJOB_KUBE_SVC_NET"
      fi
    done
  done
  # From here on the host's network is this cluster's to clean up (kube-down.sh reads the mark).
  touch "$KUBE_DIR/host/network"
  for ((i = 1; i <= KUBE_NODES; i++)); do
    node_env "$i"
    ip link add "$NODE_BRIDGE" type bridge
    ip addr add "$NODE_GW/24" dev "$NODE_BRIDGE"
    ip link set "$NODE_BRIDGE" up
  done
  # Services to pods on the same bridge need forwarding and bridged traffic through iptables.
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  iptables -N "$KUBE_GUARD_CHAIN" 2>/dev/null || iptables -F "$KUBE_GUARD_CHAIN"
  local from to
  for from in "${bridges[@]}"; do
    for to in "${bridges[@]}"; do
      iptables -A "$KUBE_GUARD_CHAIN" -i "$from" -o "$to" -j RETURN
    done
  done
  for from in "${bridges[@]}"; do
    iptables -A "$KUBE_GUARD_CHAIN" -i "$from" -j DROP
    iptables -A "$KUBE_GUARD_CHAIN" -o "$from" -j DROP
  done
  guard_first
}

# Puts the jump to the guard chain first in FORWARD (kube-proxy prepends its own jumps).
guard_first() {
  while iptables -D FORWARD -j "$KUBE_GUARD_CHAIN" 2>/dev/null; do :; done
  iptables -I FORWARD 1 -j "$KUBE_GUARD_CHAIN"
}

api_ready() {
  curl -sf --max-time 3 --cacert "$KUBE_DIR/pki/ca.crt" --cert "$KUBE_DIR/pki/admin.crt" \
    --key "$KUBE_DIR/pki/admin.key" "https://$KUBE_GW:$KUBE_API_PORT/readyz" | grep -qx ok
}

# start_and_wait NAME TIMEOUT CHECK -- COMMAND...: starts a daemon and polls CHECK (a function).
start_and_wait() {
  local name="$1" timeout="$2" check="$3" t0=$SECONDS
  shift 4
  start_daemon "$name" "$@"
  FAILED_LOG="$KUBE_DIR/logs/$name.log"
  local end=$((SECONDS + timeout))
  until $check >/dev/null 2>&1; do
    daemon_pid "$name" >/dev/null || die "$name exited during start-up"
    [ $SECONDS -lt $end ] || die "$name not ready after ${timeout}s"
    sleep 0.5
  done
  FAILED_LOG=""
  step "$name up (pid $(daemon_pid "$name"), $((SECONDS - t0))s)"
}

etcd_ready() { curl -sf --max-time 2 "http://127.0.0.1:$KUBE_ETCD_PORT/health" | grep -q '"health":"true"'; }
cm_ready() { curl -skf --max-time 2 https://127.0.0.1:$KUBE_CM_PORT/healthz | grep -qx ok; }
sched_ready() { curl -skf --max-time 2 https://127.0.0.1:10259/healthz | grep -qx ok; }
ctr_ready() { ctr -a "$NODE_SOCK" version; }
kubelet_ready() { curl -sf --max-time 2 "http://127.0.0.1:$NODE_HEALTHZ/healthz" | grep -qx ok; }
proxy_ready() { iptables -t nat -S KUBE-SERVICES 2>/dev/null | grep -q -- "-d $KUBE_SVC_IP/32"; }

# Before anything is changed on the host: the ports the cluster listens on are free.
check_ports() {
  local port i healthz=()
  for ((i = 1; i <= KUBE_NODES; i++)); do node_env "$i"; healthz+=("$NODE_HEALTHZ"); done
  for port in $KUBE_API_PORT $KUBE_ETCD_PORT $KUBE_ETCD_PEER_PORT 10250 $KUBE_CM_PORT 10259 10249 10256 \
      "${healthz[@]}"; do
    if ss -Hltn "sport = :$port" | grep -q .; then
      die "port $port is in use on this machine (ss -ltnp 'sport = :$port'); is another cluster running?"
    fi
  done
}

start_control_plane() {
  start_etcd
  start_apiserver
  start_controller_manager
  start_scheduler
}

# Each control-plane component alone (kube-fault.sh restarts them one at a time).
start_etcd() {
  local d="$KUBE_DIR"
  start_and_wait etcd 60 etcd_ready -- etcd --name dljob-kube --data-dir "$d/etcd" \
    --listen-client-urls "http://127.0.0.1:$KUBE_ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$KUBE_ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$KUBE_ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$KUBE_ETCD_PEER_PORT" \
    --initial-cluster "dljob-kube=http://127.0.0.1:$KUBE_ETCD_PEER_PORT"
}

start_apiserver() {
  local d="$KUBE_DIR" pki="$KUBE_DIR/pki"
  start_and_wait kube-apiserver 180 api_ready -- "$KUBE_BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$KUBE_ETCD_PORT" \
    --bind-address="$KUBE_GW" --advertise-address="$KUBE_GW" --secure-port="$KUBE_API_PORT" \
    --insecure-port=0 --cert-dir="$pki/generated" \
    --service-cluster-ip-range="$KUBE_SVC_CIDR" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --token-auth-file="$d/tokens.csv" \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --allow-privileged=true --profiling=false --v=1 \
    ${KUBE_APISERVER_EXTRA_ARGS[@]+"${KUBE_APISERVER_EXTRA_ARGS[@]}"}
}

start_controller_manager() {
  local d="$KUBE_DIR" pki="$KUBE_DIR/pki"
  start_and_wait kube-controller-manager 120 cm_ready -- "$KUBE_BIN/kube-controller-manager" \
    --kubeconfig="$d/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$d/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$d/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KUBE_CM_PORT" --port=0 --cert-dir="$pki/generated" \
    --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
    --cluster-name=dljob-kube --profiling=false --v=1 \
    --node-monitor-period=2s --node-monitor-grace-period=20s
}

start_scheduler() {
  local d="$KUBE_DIR" pki="$KUBE_DIR/pki"
  start_and_wait kube-scheduler 120 sched_ready -- "$KUBE_BIN/kube-scheduler" \
    --kubeconfig="$d/scheduler.kubeconfig" \
    --authentication-kubeconfig="$d/scheduler.kubeconfig" \
    --authorization-kubeconfig="$d/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=10259 --port=0 --cert-dir="$pki/generated" \
    --leader-elect=false --profiling=false --v=1
}

# start_node: containerd and the kubelet of the node node_env chose (in its mount namespace).
start_node() {
  local d="$NODE_DIR"
  make_node_namespace
  # No registry is reachable from here, and none may be tried: every pull goes to a proxy on a
  # closed loopback port and fails at once ("proxyconnect ... connection refused").
  start_and_wait "containerd$NODE_TAG" 60 ctr_ready -- "${NODE_EXEC[@]}" env HTTP_PROXY=http://127.0.0.1:9 \
    HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 \
    NO_PROXY= no_proxy= containerd --config "$d/containerd/config.toml"
  ctr_import "$KUBE_CACHE/pause.oci.tar" "localhost/dljob/pause:$KUBE_VERSION" "$KUBE_PAUSE_IMAGE"
  start_kubelet
}

# start_kubelet: the kubelet of the node node_env chose, on its running containerd (kube-fault.sh
# starts it again after stopping it).
start_kubelet() {
  local d="$NODE_DIR"
  # No --cgroup-root: with cgroupsPerQOS off the kubelet makes no pod cgroups and removes none
  # (kubelet.go: cleanupOrphanedPodCgroups runs only with cgroupsPerQOS), and gives pods no
  # cgroup parent, --cgroup-root or not; every node's containers are in /k8s.io/<container id>
  # (containerd's default), each under its own id, none cleaned up by another node.
  # AWS_EC2_METADATA_DISABLED: the kubelet's in-tree ECR credential provider otherwise asks the
  # EC2 metadata address (169.254.169.254) for credentials at start-up.
  start_and_wait "kubelet$NODE_TAG" 120 kubelet_ready -- "${NODE_EXEC[@]}" env AWS_EC2_METADATA_DISABLED=true \
    "$KUBE_BIN/kubelet" --config="$d/kubelet/config.yaml" --kubeconfig="$d/kubelet.kubeconfig" \
    --root-dir="$d/kubelet" --cert-dir="$KUBE_DIR/pki/generated-kubelet$NODE_TAG" \
    --volume-plugin-dir="$d/kubelet/volume-plugins" \
    --container-runtime=remote --container-runtime-endpoint="unix://$NODE_SOCK" \
    --runtime-request-timeout=10m --pod-infra-container-image="$KUBE_PAUSE_IMAGE" \
    --node-ip="$NODE_GW" --hostname-override="$NODE_NAME" --node-labels="$NODE_LABELS" --v=1
}

# One kube-proxy for the host: all nodes share its network namespace and iptables.
start_proxy() {
  start_and_wait kube-proxy 120 proxy_ready -- "$KUBE_BIN/kube-proxy" --config="$KUBE_DIR/kube-proxy.yaml" --v=1
  guard_first
}

# ctr_import ARCHIVE NAME_IN_ARCHIVE NAME: loads an OCI archive into the containerd of the node
# node_env chose (its k8s.io namespace) and names the image NAME (the name pods use).
ctr_import() {
  local tar="$1" from="$2" to="$3"
  FAILED_LOG="$KUBE_DIR/logs/ctr-import.log"
  ctr -a "$NODE_SOCK" -n k8s.io images import "$tar" >>"$FAILED_LOG" 2>&1 \
    || die "ctr could not import $tar"
  if [ "$from" != "$to" ]; then
    ctr -a "$NODE_SOCK" -n k8s.io images tag --force "$from" "$to" >>"$FAILED_LOG" 2>&1 \
      || die "ctr could not name $from $to"
    ctr -a "$NODE_SOCK" -n k8s.io images rm "$from" >>"$FAILED_LOG" 2>&1 || true
  fi
  FAILED_LOG=""
}

# Whether the node's containerd's docker.io/NAME is podman's localhost/NAME: an import also names the image
# by its config digest (podman's image ID), and both names then share one manifest digest.
image_current() {
  local id digest_by_id digest_by_name
  id=$(podman image inspect --format '{{.Id}}' "localhost/$1" 2>/dev/null) || return 1
  digest_by_id=$(ctr -a "$NODE_SOCK" -n k8s.io images ls "name==sha256:$id" 2>/dev/null | awk 'NR==2 {print $3}')
  digest_by_name=$(ctr -a "$NODE_SOCK" -n k8s.io images ls "name==docker.io/$1" 2>/dev/null | awk 'NR==2 {print $3}')
  [ -n "$digest_by_id" ] && [ "$digest_by_id" = "$digest_by_name" ]
}

# dljob's podman images into every node's containerd, under the names the chart and examples
# use: saved once to an OCI archive, imported into each node that lacks the current one.
load_dljob_images() {
  local image name t0 tar="$KUBE_DIR/image.oci.tar" i stale
  for image in $IMAGE_NAMES; do
    name="${DLJOB_IMAGE_TAGS[$image]}"
    if ! podman image exists "localhost/$name"; then
      warn "podman has no $name; not loaded"
      continue
    fi
    stale=()
    for ((i = 1; i <= KUBE_NODES; i++)); do
      node_env "$i"
      image_current "$name" || stale+=("$i")
    done
    if [ ${#stale[@]} = 0 ]; then
      step "docker.io/$name in containerd is podman's current one (not loaded again)"
      continue
    fi
    t0=$SECONDS
    podman save -q --format oci-archive -o "$tar" "localhost/$name" \
      || die "podman save localhost/$name failed"
    for i in "${stale[@]}"; do
      node_env "$i"
      ctr_import "$tar" "localhost/$name" "docker.io/$name"
    done
    rm -f "$tar"
    step "loaded docker.io/$name into containerd of node(s) ${stale[*]} ($((SECONDS - t0))s)"
  done
}

node_gpus() { kctl get node "$NODE_NAME" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}' | grep -qx "$NODE_GPU_COUNT"; }
node_ready() {
  kctl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True
}
default_sa() { kctl -n default get serviceaccount default; }

# advertise_gpus: the node node_env chose registered, its GPUs advertised (its kubelet reports
# them allocatable at its next status update, up to 10 s later: finish_node waits for that).
advertise_gpus() {
  FAILED_LOG="$KUBE_DIR/logs/kubelet$NODE_TAG.log"
  wait_for 120 kctl get node "$NODE_NAME" || die "node $NODE_NAME did not register"
  # The documented way to advertise an extended resource: a JSON patch of the node's status.
  curl -sSf --max-time 10 --cacert "$KUBE_DIR/pki/ca.crt" --cert "$KUBE_DIR/pki/admin.crt" \
    --key "$KUBE_DIR/pki/admin.key" -X PATCH -H 'Content-Type: application/json-patch+json' \
    --data "[{\"op\":\"add\",\"path\":\"/status/capacity/nvidia.com~1gpu\",\"value\":\"$NODE_GPU_COUNT\"}]" \
    "https://$KUBE_GW:$KUBE_API_PORT/api/v1/nodes/$NODE_NAME/status" >/dev/null \
    || die "could not patch node $NODE_NAME's status capacity"
  FAILED_LOG=""
}

# finish_node: the node node_env chose Ready, with its GPUs allocatable.
finish_node() {
  FAILED_LOG="$KUBE_DIR/logs/kubelet$NODE_TAG.log"
  wait_for 180 node_ready || die "node $NODE_NAME is not Ready after 180s"
  wait_for 60 node_gpus || die "node $NODE_NAME does not show $NODE_GPU_COUNT nvidia.com/gpu allocatable"
  step "node $NODE_NAME Ready with $NODE_GPU_COUNT nvidia.com/gpu ($NODE_LABELS)"
  FAILED_LOG=""
}

finish_cluster() {
  FAILED_LOG="$KUBE_DIR/logs/kube-controller-manager.log"
  wait_for 120 default_sa || die "the default service account was not created"
  FAILED_LOG=""
  guard_first
}
