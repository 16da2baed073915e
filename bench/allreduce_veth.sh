#!/usr/bin/env bash
# allreduce_bench between two "pods" on one machine: two network namespaces, each with one veth
# (named eth0 inside, MTU 1500, as a pod's) plugged into a bridge of its own, one rank in each,
# Open MPI's TCP transport (no shared memory) over the bridge. The raw TCP stream baseline takes
# the same interface (btl_tcp_if_include). Everything is created under names of its own
# (namespaces arw-a and arw-b, bridge arw-br0, subnet 10.231.7.0/24) and removed on exit, also on
# failure or Ctrl-C; the script refuses to start if any of them exists already. Needs root.
#
# Usage: bench/allreduce_veth.sh BENCH [MPIRUN_ARGS... --] [BENCH_ARGS...]
#   BENCH        the allreduce_bench binary (e.g. build-rel/bin/allreduce_bench)
#   MPIRUN_ARGS  extra mpirun arguments (e.g. --mca btl_tcp_links 4), ended by --
#   BENCH_ARGS   allreduce_bench's (e.g. --rounds 9 --iters 3)
# Example: bench/allreduce_veth.sh build-rel/bin/allreduce_bench --mca btl_tcp_links 2 -- --rounds 9
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
[ $# -ge 1 ] || { show_help >&2; exit 2; }
case "$1" in -h|--help) show_help; exit 0 ;; esac
[ "$(id -u)" = 0 ] || die --exit 2 "needs root (ip netns, ip link)"
need_command ip "install iproute2"
need_command mpirun "install Open MPI (openmpi-bin)"
bench=$(realpath "$1")
shift
[ -x "$bench" ] || die --exit 2 "$bench is not an executable"
mpirun_args=()
if printf '%s\n' "$@" | grep -qx -- --; then
  while [ "$1" != -- ]; do mpirun_args+=("$1"); shift; done
  shift
fi

subnet=10.231.7
bridge=arw-br0
namespaces=(arw-a arw-b)
for ns in "${namespaces[@]}"; do
  [ ! -e "/run/netns/$ns" ] || die "network namespace $ns exists already (another run?)"
done
! ip link show "$bridge" >/dev/null 2>&1 || die "link $bridge exists already (another run?)"

cleanup() {
  for ns in "${namespaces[@]}"; do
    ip link del "$ns-h" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$bridge" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip link add "$bridge" type bridge
ip addr add "$subnet.1/24" dev "$bridge"
ip link set "$bridge" up
i=2
for ns in "${namespaces[@]}"; do
  ip netns add "$ns"
  ip link add "$ns-h" type veth peer name "$ns-p"
  ip link set "$ns-h" master "$bridge" up
  ip link set "$ns-p" netns "$ns"
  ip -n "$ns" link set "$ns-p" name eth0
  ip -n "$ns" addr add "$subnet.$i/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  i=$((i + 1))
done
say "ranks in ${namespaces[*]} at $subnet.2 and $subnet.3 on bridge $bridge (MTU 1500)"

# Each rank is started inside its namespace by `ip netns exec`; they reach mpirun's PMIx server
# at the bridge's address (PMIx listens on TCP, on loopback unless told), and each other only
# over the bridge (btl self,tcp: no shared memory).
PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include="$bridge" \
mpirun --allow-run-as-root --bind-to none --mca btl self,tcp \
  --mca btl_tcp_if_include "$subnet.0/24" "${mpirun_args[@]}" \
  -np 1 ip netns exec "${namespaces[0]}" "$bench" "$@" : \
  -np 1 ip netns exec "${namespaces[1]}" "$bench" "$@"
