#!/usr/bin/env bash
# Several nodes on the one-machine cluster (scripts/cluster/kube-up.sh --nodes N, N >= 2): each
# node Ready with its own address, its GPUs (nvidia.com/gpu allocatable = the
# nvidia.com/gpu.count label) and the labels dljob's scheduler reads, equal to kube-up's node
# table when this user can read it; then one pod of dljob/trainer:cpu pinned by nodeSelector to
# each of two nodes (the first and the last), each serving one line on TCP 8000 (perl): each pod
# reaches the other by its pod IP across the nodes' bridges (bash's /dev/tcp), and the server saw
# the client's own pod IP (routed, not masqueraded). After both kubelets' container garbage
# collection has run twice (it runs every minute, and deletes the log directory of every pod its
# kubelet does not know), `kubectl logs` still shows each pod's first line. With one node it
# FAILS, saying how to start several. Usage: nodes.sh. Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
GC_SECONDS="${GC_SECONDS:-130}"  # two container-GC rounds (kubelet: every 60 s) and some

require_cluster
mapfile -t NODES < <(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
[ ${#NODES[@]} -ge 2 ] || fail "this cluster has ${#NODES[@]} node(s) (${NODES[*]}); the test needs 2 or more: start them with 'sudo bash scripts/cluster/kube-down.sh && sudo bash scripts/cluster/kube-up.sh --nodes 2'"
NS="dljob-ct-nodes-$$"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/dljob-cluster-nodes.XXXXXX")"
trap cleanup EXIT
trap 'exit 1' INT TERM
note "nodes: ${NODES[*]}"

# 1. Every node: Ready, its own InternalIP, GPUs and labels (as the node table says, if readable).
nf() { kubectl get node "$1" -o "jsonpath={$2}"; }
label() { nf "$1" ".metadata.labels.${2//./\\.}"; }
TABLE="$KUBE_DIR/nodes.table"
[ -r "$TABLE" ] || note "$TABLE is not readable here; labels checked for presence only"
declare -A seen_ip=()
for node in "${NODES[@]}"; do
  [ "$(nf "$node" '.status.conditions[?(@.type=="Ready")].status')" = True ] || fail "node $node is not Ready"
  ip="$(nf "$node" '.status.addresses[?(@.type=="InternalIP")].address')"
  [ -n "$ip" ] || fail "node $node has no InternalIP"
  [ -z "${seen_ip[$ip]:-}" ] || fail "nodes $node and ${seen_ip[$ip]} share the InternalIP $ip"
  seen_ip[$ip]="$node"
  gpus="$(nf "$node" '.status.allocatable.nvidia\.com/gpu')"
  count="$(label "$node" nvidia.com/gpu.count)"
  if [ -z "$gpus" ] || [ "$gpus" != "$count" ]; then
    fail "node $node: allocatable nvidia.com/gpu '$gpus', label nvidia.com/gpu.count '$count'"
  fi
  got="$node $gpus"
  for l in nvidia.com/gpu.product nvidia.com/gpu.clique dljob.io/rack topology.kubernetes.io/zone; do
    v="$(label "$node" "$l")"
    [ -n "$v" ] || fail "node $node has no label $l"
    got="$got $v"
  done
  if [ -r "$TABLE" ]; then
    want="$(awk -v n="$node" '$1 == n' "$TABLE")"
    [ "$got" = "$want" ] || fail "node $node is '$got' (name gpus product clique rack zone); kube-up's table says '$want'"
  fi
  note "node $node Ready at $ip: $got"
done

# 2. A pod on each of two nodes, each serving one line with its name and the peer it served.
kubectl create namespace "$NS" >/dev/null || fail "kubectl create namespace $NS"
A="${NODES[0]}"
B="${NODES[${#NODES[@]} - 1]}"  # the first and the last: different racks with 3 or more
pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: serve
    image: docker.io/dljob/trainer:cpu
    imagePullPolicy: Never
    command:
    - perl
    - -MIO::Socket::INET
    - -e
    - |
      \$| = 1;
      my \$s = IO::Socket::INET->new(LocalPort => 8000, Listen => 5, ReuseAddr => 1) or die "listen: \$!";
      print "listening on 8000 on \$ENV{NODE}\n";
      while (my \$c = \$s->accept) { print "served ", \$c->peerhost, "\n"; print \$c "hello from $1 on \$ENV{NODE}\n"; close \$c; }
    env:
    - name: NODE
      valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
YAML
}
{ pod on-a "$A"; echo ---; pod on-b "$B"; } >"$TMP/pods.yaml"
kubectl apply -f "$TMP/pods.yaml" >/dev/null || fail "kubectl apply of the two pods"
both_running() {
  local p reason
  for p in on-a on-b; do
    reason="$(kubectl -n "$NS" get pod "$p" -o jsonpath='{.status.containerStatuses[0].state.waiting.reason}')"
    [ "$reason" != ErrImageNeverPull ] \
      || fail "pod $p: ErrImageNeverPull: a node lacks docker.io/dljob/trainer:cpu (kube-up.sh without --no-images loads it)"
  done
  [ "$(kubectl -n "$NS" get pod on-a -o jsonpath='{.status.phase}')" = Running ] \
    && [ "$(kubectl -n "$NS" get pod on-b -o jsonpath='{.status.phase}')" = Running ]
}
wait_until "both pods Running" both_running
STARTED=$SECONDS
for p in on-a:$A on-b:$B; do
  [ "$(kubectl -n "$NS" get pod "${p%%:*}" -o jsonpath='{.spec.nodeName}')" = "${p#*:}" ] \
    || fail "pod ${p%%:*} is not on ${p#*:}"
done
IP_A="$(kubectl -n "$NS" get pod on-a -o jsonpath='{.status.podIP}')"
IP_B="$(kubectl -n "$NS" get pod on-b -o jsonpath='{.status.podIP}')"
note "on-a $IP_A on $A, on-b $IP_B on $B"
[ "${IP_A%.*}" != "${IP_B%.*}" ] || fail "the pods share a /24 ($IP_A, $IP_B): not on different nodes' networks"
# logs_have POD LINE: POD's log (all of it read: no early close under pipefail) has LINE.
logs_have() {
  local log
  log="$(kubectl -n "$NS" logs "$1" 2>/dev/null)" && grep -qxF -- "$2" <<<"$log"
}
listening() { logs_have "$1" "listening on 8000 on $2"; }
wait_until "on-a listening" listening on-a "$A"
wait_until "on-b listening" listening on-b "$B"

# 3. Each pod reaches the other across the nodes, and the server saw the client's pod IP.
connect() {  # connect FROM TO_IP: the line the server at TO_IP:8000 sends
  kubectl -n "$NS" exec "$1" -- timeout 10 bash -c "exec 3<>/dev/tcp/$2/8000 && cat <&3" 2>&1
}
got="$(connect on-b "$IP_A")"
[ "$got" = "hello from on-a on $A" ] || fail "on-b ($B) -> on-a $IP_A:8000 ($A): '$got'"
note "on-b -> on-a: $got"
got="$(connect on-a "$IP_B")"
[ "$got" = "hello from on-b on $B" ] || fail "on-a ($A) -> on-b $IP_B:8000 ($B): '$got'"
note "on-a -> on-b: $got"
logs_have on-a "served $IP_B" \
  || fail "on-a did not see on-b's address $IP_B: $(kubectl -n "$NS" logs on-a | tail -3)"
logs_have on-b "served $IP_A" \
  || fail "on-b did not see on-a's address $IP_A: $(kubectl -n "$NS" logs on-b | tail -3)"

# 4. Both pods' logs outlive every kubelet's container garbage collection.
left=$((GC_SECONDS - (SECONDS - STARTED)))
if [ $left -gt 0 ]; then
  note "waiting ${left}s: every kubelet's log garbage collection runs at least twice"
  sleep "$left"
fi
listening on-a "$A" || fail "kubectl logs on-a ($A) lost its first line after ${GC_SECONDS}s: '$(kubectl -n "$NS" logs on-a 2>&1 | head -3)'"
listening on-b "$B" || fail "kubectl logs on-b ($B) lost its first line after ${GC_SECONDS}s: '$(kubectl -n "$NS" logs on-b 2>&1 | head -3)'"
note "PASS: ${#NODES[@]} nodes Ready with their GPUs and labels; pods on $A and $B reach each other; their logs outlived ${GC_SECONDS}s of both kubelets' GC"
