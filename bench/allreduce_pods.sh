#!/usr/bin/env bash
# allreduce_bench between two pods on DIFFERENT nodes of a running multi-node cluster
# (scripts/cluster/kube-up.sh --nodes 2 or more): the raw TCP stream baseline and the MPI methods
# over the pod network, printing allreduce_bench's table (docs/benchmarks/allreduce.md).
#
# How: a namespace of its own (allreduce-bench-<pid>, deleted on exit, whatever happened) with
# two pods of dljob/trainer:cpu pinned by nodeSelector to the first and the last node, each
# running sshd as a DLJob worker does (dljob-entrypoint worker, port 2222, a key pair made here in
# a Secret) and mounting the host-built benchmark's directory read-only by hostPath (every node is
# this machine, so the path is the same on all; the image is the same Debian bookworm with
# Debian's libtorch and Open MPI, and the script checks with ldd in the pod that nothing is
# missing). Then, in the first pod, `mpirun -np 2 --host <pod IP 1>,<pod IP 2>` starts one rank
# per pod over ssh, as the launcher does, with coll_tuned_use_dynamic_rules on so that the
# benchmark's --algorithms rows can force Open MPI's allreduce algorithms (the other rows keep
# Open MPI's own choices: with no rules file and no forced algorithm the fixed decisions apply).
# Needs kubectl, ssh-keygen and read access to the benchmark.
#
# Usage: bench/allreduce_pods.sh [BENCH] [-- BENCH_ARGS...]
#   BENCH       the host-built allreduce_bench (default: build-rel/bin/allreduce_bench, else
#               build/bin/allreduce_bench, of this checkout)
#   BENCH_ARGS  allreduce_bench's (default: --rounds 9 --iters 2 --sum_segments 4096,16384
#               --algorithms 4,6)
# Environment: KUBECONFIG (default /var/lib/dljob-kube/kubeconfig, kube-up's), IMAGE (default
#   docker.io/dljob/trainer:cpu), MPIRUN_ARGS (more mpirun arguments, e.g.
#   "--mca btl_tcp_links 2"), WAIT_SECONDS (default 300).
# Exit codes: 0 measured, 1 failed (what failed is printed), 2 bad usage.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
case "${1:-}" in -h|--help) show_help; exit 0 ;; esac
bench=""
if [ $# -gt 0 ] && [ "$1" != -- ]; then bench="$1"; shift; fi
[ "${1:-}" != -- ] || shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--rounds 9 --iters 2 --sum_segments "4096,16384" --algorithms "4,6")
if [ -z "$bench" ]; then
  for b in "$ROOT/build-rel/bin/allreduce_bench" "$ROOT/build/bin/allreduce_bench"; do
    [ -x "$b" ] && { bench="$b"; break; }
  done
fi
if [ -z "$bench" ] || [ ! -x "$bench" ]; then
  die --exit 2 "no allreduce_bench at '$bench' (build it: cmake --build build-rel --target allreduce_bench)"
fi
bench="$(realpath "$bench")"
need_command kubectl "scripts/dev/setup.sh installs it"
need_command ssh-keygen "install openssh-client"
export KUBECONFIG="${KUBECONFIG:-/var/lib/dljob-kube/kubeconfig}"
IMAGE="${IMAGE:-docker.io/dljob/trainer:cpu}"
WAIT_SECONDS="${WAIT_SECONDS:-300}"

kubectl get --raw /readyz >/dev/null 2>&1 \
  || die "no cluster answers at $KUBECONFIG; start one with 'sudo scripts/cluster/kube-up.sh --nodes 2'"
mapfile -t nodes < <(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
[ ${#nodes[@]} -ge 2 ] \
  || die "the cluster has ${#nodes[@]} node(s); start two with 'sudo scripts/cluster/kube-down.sh && sudo scripts/cluster/kube-up.sh --nodes 2'"
node_a="${nodes[0]}"
node_b="${nodes[${#nodes[@]} - 1]}"

ns="allreduce-bench-$$"
tmp="$(mktemp -d)"
cleanup() {
  kubectl delete namespace "$ns" --wait=true --timeout=180s >/dev/null 2>&1 \
    || warn "namespace $ns not deleted; delete it with: kubectl delete namespace $ns"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

kubectl create namespace "$ns" >/dev/null
ssh-keygen -q -t rsa -b 3072 -N "" -C allreduce-bench -f "$tmp/id_rsa"
cp "$tmp/id_rsa.pub" "$tmp/authorized_keys"
kubectl -n "$ns" create secret generic ssh --from-file="$tmp/id_rsa" \
  --from-file="$tmp/authorized_keys" >/dev/null

pod() {  # pod NAME NODE
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $ns}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: worker
    image: $IMAGE
    imagePullPolicy: Never
    args: [worker]
    readinessProbe: {tcpSocket: {port: 2222}, periodSeconds: 2}
    volumeMounts:
    - {name: ssh, mountPath: /root/.ssh, readOnly: true}
    - {name: bench, mountPath: /opt/allreduce-bench, readOnly: true}
  volumes:
  - name: ssh
    secret:
      secretName: ssh
      defaultMode: 0600
      items: [{key: id_rsa, path: id_rsa}, {key: authorized_keys, path: authorized_keys}]
  - name: bench
    hostPath: {path: $(dirname "$bench"), type: Directory}
YAML
}
{ pod rank-0 "$node_a"; echo ---; pod rank-1 "$node_b"; } | kubectl apply -f - >/dev/null
say "pods rank-0 on $node_a, rank-1 on $node_b (namespace $ns); waiting until both are Ready"
if ! kubectl -n "$ns" wait --for=condition=Ready pod --all --timeout="${WAIT_SECONDS}s" >/dev/null; then
  kubectl -n "$ns" get pods -o wide >&2
  kubectl -n "$ns" get events --sort-by=.lastTimestamp 2>&1 | tail -20 >&2
  die "the pods are not Ready after ${WAIT_SECONDS}s (ErrImageNeverPull: kube-up.sh loads $IMAGE)"
fi
field() { kubectl -n "$ns" get pod "$1" -o "jsonpath={$2}"; }
ip_a="$(field rank-0 .status.podIP)"
ip_b="$(field rank-1 .status.podIP)"
if [ "$(field rank-0 .spec.nodeName)" != "$node_a" ] || [ "$(field rank-1 .spec.nodeName)" != "$node_b" ]; then
  die "the pods are not on $node_a and $node_b"
fi
say "rank-0 $ip_a on $node_a, rank-1 $ip_b on $node_b"
in_pod=/opt/allreduce-bench/$(basename "$bench")
missing="$(kubectl -n "$ns" exec rank-0 -- ldd "$in_pod" | grep 'not found' || true)"
[ -z "$missing" ] || die "the image lacks libraries $(basename "$bench") needs: $missing"

read -r -a mpirun_args <<<"${MPIRUN_ARGS:-}"
echo "=== allreduce_bench between pods on $node_a and $node_b ($(date -u '+%Y-%m-%d %H:%M UTC'), machine load:$(cut -d' ' -f1-3 /proc/loadavg))"
kubectl -n "$ns" exec rank-0 -- mpirun --allow-run-as-root -np 2 --host "$ip_a:1,$ip_b:1" \
  --bind-to none \
  --mca plm_rsh_args "-p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null" \
  --mca coll_tuned_use_dynamic_rules 1 "${mpirun_args[@]}" "$in_pod" "${args[@]}"
