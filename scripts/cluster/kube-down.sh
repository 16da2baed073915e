#!/usr/bin/env bash
# Stops the one-machine Kubernetes that scripts/cluster/kube-up.sh started and removes everything it
# made, for every node: its processes (by their pid files, and containerd's shims, which name the
# cluster's socket), every pod's containers and network namespace, the mounts under its state
# directory (the nodes' mount namespaces with them), each node's CNI bridge and its veths, the
# iptables rules (the FORWARD guard, the kubelet's and
# kube-proxy's KUBE-* chains), the sysctls it changed (restored), the paths the components
# create outside it (/var/log/pods, /var/log/containers, /var/lib/cni, /run/containerd: removed
# when they did not exist before), and the state directory itself. The binary cache stays.
# Then it checks that nothing is left (processes, mounts, mount namespaces, interfaces, iptables
# chains) and says what is, exiting 1.
#
# Usage: scripts/cluster/kube-down.sh [--quiet]        (environment: DLJOB_KUBE_DIR, as kube-up.sh)
#   --quiet  print only problems (kube-up.sh uses it to clean up after a failure)
# Safe to run any number of times, and on a half-started cluster.
set -uo pipefail

PROG=kube-down
QUIET=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quiet) QUIET=1; shift ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "kube-down: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# shellcheck source=kube/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/kube/lib.sh"
[ "$(id -u)" = 0 ] || { echo "kube-down: needs root" >&2; exit 1; }
say() { [ "$QUIET" = 1 ] || step "$@"; }
# The nodes the cluster was started with (without a saved table: the single node).
load_saved_nodes || { warn "unreadable $KUBE_NODE_TABLE; taking one node"; load_node_table <(default_node_table 1); }
# Every bridge a cluster here may have made (kube-down without state looks for all of them).
ALL_BRIDGES=()
for ((i = 1; i <= KUBE_MAX_NODES; i++)); do ALL_BRIDGES+=("$(node_bridge "$i")"); done
any_bridge() { local b; for b in "${ALL_BRIDGES[@]}"; do ip link show "$b" >/dev/null 2>&1 && return 0; done; return 1; }
ctr_node() { ctr -a "$NODE_SOCK" -n k8s.io "$@"; }
# Processes of this cluster: a cluster binary or a containerd shim whose command line names the
# state directory (never a shell or an editor that happens to).
cluster_pids() {
  local f pid exe
  for f in $(grep -l -s -F "$KUBE_DIR" /proc/[0-9]*/cmdline); do
    pid=$(echo "$f" | cut -d/ -f3)
    exe=$(basename "$(readlink "/proc/$pid/exe" 2>/dev/null)")
    case "$exe" in
      containerd|containerd-shim*|etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy) echo "$pid" ;;
    esac
  done
}

if [ ! -e "$KUBE_DIR" ] && ! any_bridge; then
  say "no cluster in $KUBE_DIR"
  exit 0
fi

# 1. Pods first, while the API server and the kubelet still run: stop creating new ones, delete
# every pod, and let the kubelet tear them down (containers, sandboxes, CNI DEL).
kubelets=0
for ((i = 1; i <= KUBE_NODES; i++)); do
  node_env "$i"
  if daemon_pid "kubelet$NODE_TAG" >/dev/null; then kubelets=$((kubelets + 1)); fi
done
running_tasks() {
  local i
  for ((i = 1; i <= KUBE_NODES; i++)); do
    node_env "$i"
    ctr_node tasks ls 2>/dev/null | awk 'NR>1 && $3=="RUNNING"' | grep -q . && return 0
  done
  return 1
}
if daemon_pid kube-apiserver >/dev/null && [ "$kubelets" -gt 0 ]; then
  stop_daemon kube-controller-manager
  stop_daemon kube-scheduler
  pods=$(kctl get pods -A --no-headers 2>/dev/null || true)
  if [ -n "$pods" ]; then
    say "deleting every pod"
    kctl delete pods -A --all --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    end=$((SECONDS + 60))
    while running_tasks; do
      [ $SECONDS -lt $end ] || { say "some pods still run after 60s; killing them"; break; }
      sleep 1
    done
  fi
fi

# 2. The daemons, in reverse order of start.
NODE_DAEMONS=()
for ((i = KUBE_NODES; i >= 1; i--)); do node_env "$i"; NODE_DAEMONS+=("kubelet$NODE_TAG"); done
for name in kube-proxy "${NODE_DAEMONS[@]}" kube-scheduler kube-controller-manager kube-apiserver etcd; do
  if daemon_pid "$name" >/dev/null; then say "stopping $name"; fi
  # The API server drains its requests (watches included) before it exits: give it longer.
  if [ "$name" = kube-apiserver ]; then stop_daemon "$name" 30; else stop_daemon "$name"; fi
done

# 3. Each node's containerd: kill what still runs, note each sandbox's network namespace (a
# file under /run/netns; with several nodes its mount lives in the node's mount namespace), then
# stop it.
NETNS=()
for ((i = 1; i <= KUBE_NODES; i++)); do
  node_env "$i"
  if daemon_pid "containerd$NODE_TAG" >/dev/null; then
    for id in $(ctr_node tasks ls -q 2>/dev/null); do
      ctr_node tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 1
    for id in $(ctr_node containers ls -q 2>/dev/null); do
      ns=$(ctr_node containers info "$id" 2>/dev/null \
        | jq -r '.Spec.linux.namespaces[]? | select(.type=="network") | .path // empty' 2>/dev/null)
      [ -z "$ns" ] || NETNS+=("$ns")
      ctr_node tasks delete -f "$id" >/dev/null 2>&1 || true
    done
    say "stopping containerd$NODE_TAG"
  fi
  stop_daemon "containerd$NODE_TAG"
done
# Shims outlive containerd (they name the cluster's socket on their command line), and so do
# the containers under them: kill each shim's descendants, then the shim.
descendants() { local c; for c in $(pgrep -P "$1"); do descendants "$c"; echo "$c"; done; }
for pid in $(cluster_pids); do
  for child in $(descendants "$pid"); do kill -KILL "$child" 2>/dev/null || true; done
  kill -KILL "$pid" 2>/dev/null && say "killed leftover $(cat "/proc/$pid/comm" 2>/dev/null) (pid $pid)"
done

# Whatever still runs in a node's mount namespace is the cluster's (only kube-up starts
# processes there): killed, so that unmounting the namespace's file below ends the namespace
# and with it every mount made in it (containers' root filesystems, volumes, network namespaces,
# the node's /var/log/pods).
NODE_MNT_NS=()
for ((i = 1; i <= KUBE_NODES; i++)); do
  node_env "$i"
  if [ -z "$NODE_NS" ] || ! mountpoint -q "$NODE_NS" 2>/dev/null; then continue; fi
  ino=$(stat -L -c %i "$NODE_NS")
  NODE_MNT_NS+=("mnt:[$ino]")
  # The pods' network namespaces are mounted in the node's namespace only; the host has an
  # empty file of that name in /run/netns (removed below), also when containerd died first.
  while read -r ns; do NETNS+=("$ns"); done < <(nsenter --mount="$NODE_NS" -- \
    awk '$3 == "nsfs" && $2 ~ "^/(var/)?run/netns/" {print $2}' /proc/self/mounts 2>/dev/null)
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "mnt:[$ino]" ] || continue
    kill -KILL "${p#/proc/}" 2>/dev/null && say "killed $(cat "$p/comm" 2>/dev/null) (pid ${p#/proc/}), left in $NODE_NAME's mount namespace"
  done
done
in_node_namespaces() {
  local p
  [ ${#NODE_MNT_NS[@]} -gt 0 ] || return 0
  for p in /proc/[0-9]*; do
    case " ${NODE_MNT_NS[*]} " in *" $(readlink "$p/ns/mnt" 2>/dev/null) "*) echo "${p#/proc/}" ;; esac
  done
}

# 4. Mounts: under the state directory, and the sandboxes' network namespaces.
# Without containerd to ask (it died, or a state directory is gone): the cni-* namespaces whose
# interfaces hold an address of this cluster's pod network.
if [ ${#NETNS[@]} -eq 0 ] && [ -d /run/netns ]; then
  for ns in /run/netns/cni-*; do
    [ -e "$ns" ] || continue
    for ((i = 1; i <= KUBE_NODES; i++)); do
      node_env "$i"
      ip netns exec "$(basename "$ns")" ip -4 -o addr show 2>/dev/null \
        | grep -q "inet ${NODE_NET//./\\.}\." && NETNS+=("$ns")
    done
  done
fi
for ns in "${NETNS[@]}"; do
  if [ -e "$ns" ]; then umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null; rm -f "$ns"; fi
done
for _ in 1 2 3; do
  mapfile -t mounts < <(awk -v d="$KUBE_DIR" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r)
  [ ${#mounts[@]} -gt 0 ] || break
  for m in "${mounts[@]}"; do
    m=$(printf '%b' "$m")  # /proc/mounts escapes spaces as \040
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
done

# 5. Network: veths on the bridge, the bridge, iptables; only when this cluster set them up (a
# kube-up that failed before, say on a port in use, must not touch another cluster's rules).
NETWORK=0
[ -f "$KUBE_DIR/host/network" ] && NETWORK=1
[ -e "$KUBE_DIR" ] || NETWORK=1  # no state left at all: clean up whatever this cluster left
for bridge in "${ALL_BRIDGES[@]}"; do
  [ "$NETWORK" = 1 ] || break
  for veth in $(ip -o link show master "$bridge" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$veth" 2>/dev/null || true
  done
  if ip link show "$bridge" >/dev/null 2>&1; then
    ip link del "$bridge" && say "removed bridge $bridge"
  fi
done
if [ "$NETWORK" = 1 ] && [ -x "$KUBE_BIN/kube-proxy" ]; then
  "$KUBE_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
fi
# What kube-proxy --cleanup leaves (the kubelet's KUBE-FIREWALL, KUBE-MARK-*, canaries) and the
# guard.
for ipt in iptables ip6tables; do
  [ "$NETWORK" = 1 ] || break
  command -v "$ipt" >/dev/null || continue
  for table in filter nat mangle; do
    "$ipt" -t "$table" -S 2>/dev/null | grep -E -- "^-A [A-Z]+ .*-j (KUBE-[A-Z0-9-]+|$KUBE_GUARD_CHAIN)\$" \
      | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) ' | while read -r -a rule; do
        rule[0]=-D
        "$ipt" -t "$table" "${rule[@]}" 2>/dev/null || true
      done
    for chain in $("$ipt" -t "$table" -S 2>/dev/null | awk -v g="$KUBE_GUARD_CHAIN" \
        '$1=="-N" && ($2 ~ /^KUBE-/ || $2==g) {print $2}'); do
      "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $("$ipt" -t "$table" -S 2>/dev/null | awk -v g="$KUBE_GUARD_CHAIN" \
        '$1=="-N" && ($2 ~ /^KUBE-/ || $2==g) {print $2}'); do
      "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
done
if [ "$NETWORK" = 1 ]; then
  for ((i = 1; i <= KUBE_NODES; i++)); do
    node_env "$i"
    conntrack -D -s "$NODE_CIDR" >/dev/null 2>&1 || true
  done
  conntrack -D -d "$KUBE_SVC_CIDR" >/dev/null 2>&1 || true
  rm -f /var/lib/cni/results/dljob-kube-* 2>/dev/null || true
fi

# 6. Host state: sysctls back, paths made outside the state directory removed.
if [ -f "$KUBE_DIR/host/sysctl.saved" ]; then
  while IFS='=' read -r key value; do
    [ "$value" != '?' ] || continue
    [ "$(sysctl -n "$key" 2>/dev/null)" = "$value" ] && continue
    if [ "$key" = net.ipv4.ip_forward ] && ip -o link show type bridge | grep -q .; then
      say "leaving net.ipv4.ip_forward on: other bridges (podman's?) may need it"
      continue
    fi
    sysctl -qw "$key=$value" 2>/dev/null || warn "could not restore $key=$value"
  done <"$KUBE_DIR/host/sysctl.saved"
fi
if [ -f "$KUBE_DIR/host/preexisting" ]; then
  for p in "${KUBE_OUTSIDE_PATHS[@]}"; do
    grep -qxF "$p" "$KUBE_DIR/host/preexisting" && continue
    [ -e "$p" ] || continue
    if grep -q " $p/" /proc/mounts; then warn "$p still has mounts; left in place"; continue; fi
    rm -rf "$p"
  done
  for p in "${KUBE_SHARED_PATHS[@]}"; do
    grep -qxF "$p" "$KUBE_DIR/host/preexisting" && continue
    [ -d "$p" ] && [ -z "$(ls -A "$p")" ] || continue
    # ip-netns and containerd make /run/netns a bind mount of itself.
    if grep -q " $p " /proc/mounts; then umount "$p" 2>/dev/null || continue; fi
    rmdir "$p" 2>/dev/null || true
  done
fi
# containerd puts every container's cgroup under k8s.io/ in each hierarchy (cgroupfs driver),
# every node's containerd alike.
if [ -f "$KUBE_DIR/host/preexisting" ]; then
  for cg in /sys/fs/cgroup/*/k8s.io; do
    [ -d "$cg" ] || continue
    grep -qxF "$cg" "$KUBE_DIR/host/preexisting" && continue
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null || warn "could not remove cgroup $cg (tasks left in it?)"
  done
fi

# 7. The state directory.
if [ -e "$KUBE_DIR" ]; then
  if awk -v d="$KUBE_DIR" 'index($2, d) == 1' /proc/mounts | grep -q .; then
    warn "mounts remain under $KUBE_DIR; not removing it"
  else
    rm -rf "$KUBE_DIR"
    say "removed $KUBE_DIR"
  fi
fi

# 8. Check.
problems=()
left=$(cluster_pids | tr '\n' ' ')
[ -z "$left" ] || problems+=("cluster processes still run: pids $left")
awk -v d="$KUBE_DIR" 'index($2, d) == 1' /proc/mounts | grep -q . && problems+=("mounts under $KUBE_DIR remain")
left=$(in_node_namespaces | tr '\n' ' ')
[ -z "$left" ] || problems+=("processes still run in a node's mount namespace: pids $left")
if [ "$NETWORK" = 1 ]; then
  for bridge in "${ALL_BRIDGES[@]}"; do
    ip link show "$bridge" >/dev/null 2>&1 && problems+=("interface $bridge remains")
  done
  iptables-save 2>/dev/null | grep -q -E "KUBE-|$KUBE_GUARD_CHAIN" && problems+=("iptables KUBE-* rules remain")
fi
[ -e "$KUBE_DIR" ] && problems+=("$KUBE_DIR remains")
if [ ${#problems[@]} -gt 0 ]; then
  printf 'kube-down: left behind: %s\n' "${problems[@]}" >&2
  exit 1
fi
say "stopped; nothing left (the binary cache $KUBE_CACHE stays)"
