#!/usr/bin/env bash
# Builds a dljob image from this checkout with podman: the CPU trainer image (dljob/trainer:cpu,
# images/cpu/Containerfile) or the operator image (dljob/operator:0.1.0, the name the Helm chart's
# values.yaml gives; images/operator/Containerfile).
#
# No container registry is reachable from these machines, so the debian:bookworm base image is
# made here: a `debootstrap --variant=minbase bookworm` root filesystem (from the Debian archive,
# cached as a tarball under $DLJOB_IMAGE_CACHE) imported into podman. The rest is an ordinary
# multi-stage `podman build` of the image's Containerfile (set-up shared by all images:
# images/common/).
#
# Usage: scripts/cluster/build-image.sh [--image cpu|operator] [--tag NAME] [--no-install]
#   --image cpu        dljob-train and dljob, Open MPI, sshd (default): dljob/trainer:cpu
#   --image operator   dljob-operator alone, run as a non-root user: dljob/operator:0.1.0
#   --tag NAME         image name to build instead of the image's default
#   --no-install       never apt-get podman/debootstrap; exit 3 when they are missing
# Environment: DLJOB_IMAGE_CACHE (default /var/cache/dljob), DEBIAN_MIRROR (default
# http://deb.debian.org/debian), BUILD_JOBS (parallel compile jobs in the image build; default
# every core).
# Exit codes: 0 built, 2 bad arguments, 3 podman cannot be installed or run here, other: the build
# failed.
{
# The whole script is one block, read before it runs: editing this file (a checkout switching
# branches) while an image builds does not change what the running build does.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
IMAGE=cpu
TAG=""
INSTALL=1
while [ $# -gt 0 ]; do
  case "$1" in
    --image|--tag)
      if [ $# -lt 2 ] || [ -z "$2" ]; then die --exit 2 "$1 needs a value (see --help)"; fi
      if [ "$1" = --image ]; then IMAGE="$2"; else TAG="$2"; fi
      shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    -h|--help) show_help; exit 0 ;;
    *) die --exit 2 "unknown argument '$1' (see --help)" ;;
  esac
done
case "$IMAGE" in
  cpu) DEFAULT_TAG="dljob/trainer:cpu" ;;
  operator) DEFAULT_TAG="dljob/operator:0.1.0" ;;
  *) die --exit 2 "--image is cpu or operator, not '$IMAGE'" ;;
esac
TAG="${TAG:-$DEFAULT_TAG}"
CONTAINERFILE="images/$IMAGE/Containerfile"
CACHE="${DLJOB_IMAGE_CACHE:-/var/cache/dljob}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cannot() { die --exit 3 "$@"; }

# 1. podman, runc and debootstrap.
tools=(podman runc debootstrap)
missing=()
for t in "${tools[@]}"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$INSTALL" = 1 ] || cannot "missing ${missing[*]}; install them (apt-get install podman runc debootstrap) or drop --no-install"
  command -v apt-get >/dev/null 2>&1 || cannot "missing ${missing[*]} and no apt-get to install them with"
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends \
      podman runc debootstrap uidmap; } >/dev/null \
    || cannot "apt-get could not install ${missing[*]}"
fi

# 2. containers.conf: these machines run podman with runc and cgroupfs and without default
# ulimits (the defaults ask for limits the sandbox refuses). Written once; never overwritten.
CONF_DIR=/etc/containers/containers.conf.d
if [ "$(id -u)" != 0 ]; then CONF_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/containers/containers.conf.d"; fi
CONF="$CONF_DIR/50-dljob.conf"
if [ ! -f "$CONF" ]; then
  step "writing $CONF"
  mkdir -p "$CONF_DIR"
  cat >"$CONF" <<'CONF'
# Written by dljob scripts/cluster/build-image.sh: settings podman needs on the dljob build
# machines.
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
fi
podman info >/dev/null 2>&1 || cannot "podman is installed but 'podman info' fails: $(podman info 2>&1 | tail -1)"

# 3. The debian:bookworm base image, from a cached debootstrap root filesystem.
if podman image exists debian:bookworm; then
  step "base image debian:bookworm present"
else
  TARBALL="$CACHE/debian-bookworm-minbase.tar"
  if [ ! -f "$TARBALL" ]; then
    step "debootstrap --variant=minbase bookworm from $MIRROR (a few minutes)"
    mkdir -p "$CACHE"
    ROOTFS="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
    trap 'rm -rf "$ROOTFS"' EXIT
    $SUDO debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
      || FAILED_LOG="$CACHE/debootstrap.log" die "debootstrap failed (log: $CACHE/debootstrap.log)"
    # Package lists and the apt cache only bloat the base; images run apt-get update themselves.
    $SUDO rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/archives/*.deb
    $SUDO tar -C "$ROOTFS" -cf "$TARBALL.tmp" .
    mv "$TARBALL.tmp" "$TARBALL"
    rm -rf "$ROOTFS"
    trap - EXIT
  fi
  step "importing $TARBALL as debian:bookworm"
  podman import --change 'CMD ["/bin/bash"]' "$TARBALL" debian:bookworm >/dev/null
fi

# 4. The image itself.
step "podman build -f $CONTAINERFILE -t $TAG"
podman build --runtime runc --network host --build-arg "BUILD_JOBS=${BUILD_JOBS:-0}" \
  -f "$ROOT/$CONTAINERFILE" -t "$TAG" "$ROOT"
step "built $TAG ($(podman image inspect --format '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}'))"
exit 0
}
