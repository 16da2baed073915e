# shellcheck shell=bash
# Configuration files of the one-machine cluster's node components (sourced by
# scripts/cluster/kube-up.sh after scripts/cluster/kube/lib.sh): per node (write_node_configs,
# for the node node_env chose) containerd (its own root, state and socket under the node's
# directory; CRI with restrict_oom_score_adj, which runc here needs, and the local pause image),
# the CNI bridge network and the kubelet; once (write_configs) kube-proxy and the pods'
# resolv.conf. Rewritten at every start.

KUBE_PAUSE_IMAGE="docker.io/dljob/pause:$KUBE_VERSION"

write_node_configs() {
  local d="$NODE_DIR"
  mkdir -p "$d/containerd/root" "$d/containerd/opt" "$d/run/containerd/state" "$d/cni/net.d" \
    "$d/cni/networks" "$d/kubelet"

  cat >"$d/containerd/config.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/run/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$NODE_SOCK"
[ttrpc]
  address = "$NODE_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$KUBE_PAUSE_IMAGE"
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
    max_conf_num = 1
EOF

  cat >"$d/cni/net.d/10-dljob-kube.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "dljob-kube",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$NODE_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$NODE_CIDR", "gateway": "$NODE_GW"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$d/cni/networks"
      }
    }
  ]
}
EOF

  # nodeLeaseDurationSeconds 20: the kubelet renews its Lease every 5 s (a quarter of it), so
  # that the controller-manager's 20 s --node-monitor-grace-period sees 4 renewals before it
  # calls a node NotReady.
  cat >"$d/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_GW
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $NODE_HEALTHZ
tlsCertFile: $KUBE_DIR/pki/kubelet-serving$NODE_TAG.crt
tlsPrivateKeyFile: $KUBE_DIR/pki/kubelet-serving$NODE_TAG.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $KUBE_DIR/pki/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
clusterDomain: cluster.local
resolvConf: $KUBE_DIR/resolv.conf
nodeLeaseDurationSeconds: 20
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
serializeImagePulls: false
EOF
}

write_configs() {
  local d="$KUBE_DIR"
  mkdir -p "$d/etcd" "$d/logs"
  # Pods get no name server: nothing outside this machine is reachable, and there is no cluster
  # DNS. Names resolve through /etc/hosts (hostAliases) alone.
  printf 'search cluster.local\noptions ndots:1\n' >"$d/resolv.conf"

  # One kube-proxy for the whole host: every node's pods and services share its iptables.
  # hostnameOverride names node 1 (it only picks "local" endpoints, which no test relies on).
  cat >"$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
bindAddress: $KUBE_GW
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clientConnection: {kubeconfig: $d/kube-proxy.kubeconfig}
clusterCIDR: $KUBE_CLUSTER_CIDR
hostnameOverride: ${NODE_NAMES[0]}
mode: iptables
nodePortAddresses: ["$KUBE_GW/32"]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {masqueradeAll: false, syncPeriod: 30s, minSyncPeriod: 1s}
EOF
}
