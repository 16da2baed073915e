#!/usr/bin/env bash
# Builds a dljob image with podman from programs this machine has already compiled, as ko does for
# Go: the CPU trainer image (dljob/trainer:cpu, images/cpu/Containerfile: dljob-train and dljob) or
# the operator image (dljob/operator:0.1.0, the name the Helm chart's values.yaml gives;
# images/operator/Containerfile: dljob-operator). Nothing is compiled in the image build: the
# programs are copied, stripped, from a host build directory into a small build context (bin/,
# beside a copy of images/common/), and the Containerfile's one stage installs the runtime
# packages and COPYs them in, then checks that every shared library they link against resolves
# in the image (images/common/check-programs.sh) and that they run. That works because the host is
# the images' distribution, Debian bookworm, with the same packages (Debian's LibTorch, Open MPI,
# OpenSSL, ...).
#
# No container registry is reachable from these machines, so the debian:bookworm base image is
# made here: a `debootstrap --variant=minbase bookworm` root filesystem (from the Debian archive,
# cached as a tarball under $DLJOB_IMAGE_CACHE) imported into podman.
#
# Usage: scripts/cluster/build-image.sh [--image cpu|operator] [--from-build DIR] [--tag NAME]
#                                       [--no-cache] [--no-install]
#        scripts/cluster/build-image.sh --build-programs [--image cpu|operator] [--from-build DIR]
#        scripts/cluster/build-image.sh --check [--image cpu|operator] [--from-build DIR]
#   --image cpu        dljob-train and dljob, Open MPI, sshd (default): dljob/trainer:cpu
#   --image operator   dljob-operator alone, run as a non-root user: dljob/operator:0.1.0
#   --from-build DIR   the host build directory whose bin/ holds the programs. Default: build-images/
#                      of this checkout when it holds the image's programs, else build/
#   --build-programs   compile the programs on this machine instead of building an image (every
#                      image's, or --image's), in DIR (default build-images/; a new directory is
#                      configured with the NCCL collective off, -DDLJOB_WITH_NCCL=OFF, since no
#                      image has CUDA; ccache serves all but the trainer's precompiled-header
#                      units), then --check them
#   --check            check DIR's programs as below and stop (no podman)
#   --tag NAME         image name to build instead of the image's default
#   --no-cache         build every layer again (fresh runtime packages), not from podman's cache
#   --no-install       never apt-get podman/debootstrap; exit 3 when they are missing
# Before any image is built, the programs are checked here; it refuses (exit 4, saying what to run)
# when one is missing from DIR/bin, when DIR is a Ninja build with work pending for them
# (`ninja -n`: a source or CMakeLists.txt changed since they were linked), or when one links a
# shared library that is not found or lies outside /lib and /usr/lib (libcudart from
# /usr/local/cuda, when DIR has the NCCL collective built in): no image has those. It prints the
# directory used, the checkout it was configured from, its build type and each program's time.
# Environment: DLJOB_IMAGE_CACHE (default /var/cache/dljob), DEBIAN_MIRROR (default
# http://deb.debian.org/debian); with --build-programs, BUILD_TYPE (a new directory's, default
# RelWithDebInfo as scripts/dev/build.sh) and JOBS (compile jobs, default every core).
# Exit codes: 0 built (or checked), 2 bad arguments, 3 podman cannot be installed or run here,
# 4 the build directory cannot supply the programs, other: the build failed.
{
# The whole script is one block, read before it runs: editing this file (a checkout switching
# branches) while an image builds does not change what the running build does.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
IMAGE=""
TAG=""
FROM_BUILD=""
MODE=image
INSTALL=1
CACHE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --image|--tag|--from-build)
      if [ $# -lt 2 ] || [ -z "$2" ]; then die --exit 2 "$1 needs a value (see --help)"; fi
      case "$1" in
        --image) IMAGE="$2" ;;
        --tag) TAG="$2" ;;
        *) FROM_BUILD="$2" ;;
      esac
      shift 2 ;;
    --build-programs) MODE=programs; shift ;;
    --check) MODE=check; shift ;;
    --no-cache) CACHE_ARGS=(--no-cache); shift ;;
    --no-install) INSTALL=0; shift ;;
    -h|--help) show_help; exit 0 ;;
    *) die --exit 2 "unknown argument '$1' (see --help)" ;;
  esac
done

# The images this script builds: each one's default tag and the programs staged into it
# (tests/image/containerfiles_test.sh reads these rows).
image_row() {
  case "$1" in
    cpu) DEFAULT_TAG="dljob/trainer:cpu"; PROGRAMS=(dljob-train dljob) ;;
    operator) DEFAULT_TAG="dljob/operator:0.1.0"; PROGRAMS=(dljob-operator) ;;
    *) return 1 ;;
  esac
}
if [ -n "$IMAGE" ]; then
  image_row "$IMAGE" || die --exit 2 "--image is cpu or operator, not '$IMAGE'"
elif [ "$MODE" = programs ]; then
  # Every image's programs.
  image_row cpu; all=("${PROGRAMS[@]}")
  image_row operator; PROGRAMS=("${all[@]}" "${PROGRAMS[@]}")
else
  IMAGE=cpu
  image_row cpu
fi
TAG="${TAG:-${DEFAULT_TAG:-}}"
CACHE="${DLJOB_IMAGE_CACHE:-/var/cache/dljob}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cannot() { die --exit 3 "$@"; }
# What to run to get programs fit for the images, for the messages below.
IMAGE_ARG="${IMAGE:+ --image $IMAGE}"
BUILD_HINT="scripts/cluster/build-image.sh --build-programs$IMAGE_ARG"
refuse() {
  echo "$PROG: $*" >&2
  exit 4
}
absolute() { (cd "$1" && pwd); }
has_programs() {
  local p
  for p in "${PROGRAMS[@]}"; do [ -x "$1/bin/$p" ] || return 1; done
}
cache_value() {
  if [ -f "$DIR/CMakeCache.txt" ]; then sed -n "s/^$1:[A-Z]*=//p" "$DIR/CMakeCache.txt"; fi
}

# 1. The build directory.
if [ -n "$FROM_BUILD" ]; then
  if [ "$MODE" = programs ]; then mkdir -p "$FROM_BUILD"; fi
  [ -d "$FROM_BUILD" ] || refuse "--from-build $FROM_BUILD: no such directory; build the programs there with $BUILD_HINT --from-build $FROM_BUILD"
  DIR="$(absolute "$FROM_BUILD")"
elif [ "$MODE" = programs ] || has_programs "$ROOT/build-images" || ! has_programs "$ROOT/build"; then
  DIR="$ROOT/build-images"
else
  DIR="$ROOT/build"
fi

# 2. --build-programs: configure a new directory (the NCCL collective off: it would link libcudart
# and libnccl, which no image has) and build the programs in it, through scripts/dev/build.sh.
if [ "$MODE" = programs ]; then
  command -v cmake >/dev/null 2>&1 ||
    die "cmake not found: install dljob's build packages first (scripts/dev/setup.sh)"
  if [ ! -f "$DIR/CMakeCache.txt" ]; then
    mkdir -p "$DIR"
    cmake_args
    step "configuring $DIR (${BUILD_TYPE:-RelWithDebInfo}, -DDLJOB_WITH_NCCL=OFF)"
    cmake -S "$ROOT" -B "$DIR" "${CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
      -DDLJOB_WITH_NCCL=OFF >"$DIR/configure.log" 2>&1 ||
      FAILED_LOG="$DIR/configure.log" die "configuring $DIR failed (log: $DIR/configure.log)"
  fi
  step "building ${PROGRAMS[*]} in $DIR"
  BUILD_DIR="$DIR" bash "$ROOT/scripts/dev/build.sh" "${PROGRAMS[@]}"
fi

# 3. The programs as built: present, up to date, linked only against the distribution's libraries.
if [ ! -d "$DIR" ] || ! has_programs "$DIR"; then
  refuse "$DIR/bin lacks some of ${PROGRAMS[*]}; build them on this machine first: $BUILD_HINT" \
    "(into build-images/), or scripts/dev/build.sh ${PROGRAMS[*]} (into build/) where no CUDA toolkit is installed"
fi
if [ -f "$DIR/build.ninja" ] && command -v ninja >/dev/null 2>&1; then
  pending="$(ninja -C "$DIR" -n "${PROGRAMS[@]}" 2>&1)" ||
    refuse "ninja -n in $DIR failed: $(tail -1 <<<"$pending")"
  if ! grep -q '^ninja: no work to do' <<<"$pending"; then
    steps="$(grep -c '^\[' <<<"$pending" || true)"
    refuse "${PROGRAMS[*]} in $DIR are older than their sources: ninja -n lists $steps step(s)" \
      "pending, e.g. '$(grep -m1 '^\[' <<<"$pending" | cut -c1-160)'; bring them up to date:" \
      "$BUILD_HINT${FROM_BUILD:+ --from-build $FROM_BUILD}"
  fi
  fresh="up to date (ninja -n: no work to do)"
else
  fresh="not checked for newer sources (not a Ninja build, or no ninja)"
fi
for p in "${PROGRAMS[@]}"; do
  # As the image will load it: without this shell's LD_LIBRARY_PATH.
  libs="$(env -u LD_LIBRARY_PATH ldd "$DIR/bin/$p" 2>&1)" || { grep -q 'not a dynamic executable' <<<"$libs" && continue; }
  if grep -q 'not found' <<<"$libs"; then
    refuse "$DIR/bin/$p lacks shared libraries on this machine: $(grep 'not found' <<<"$libs" | xargs)"
  fi
  outside="$(awk '$2 == "=>" && $3 ~ /^\// && $3 !~ /^\/(usr\/)?lib(32|64|x32)?\// { print $1 " (" $3 ")" }' <<<"$libs" | xargs)"
  if [ -n "$outside" ]; then
    refuse "$DIR/bin/$p links $outside, outside the distribution's /lib and /usr/lib: no image" \
      "has that (libcudart or libnccl: $DIR has the NCCL collective built in). Build the programs" \
      "in a directory of their own with it off: $BUILD_HINT (into build-images/, -DDLJOB_WITH_NCCL=OFF)"
  fi
done
source_dir="$(cache_value CMAKE_HOME_DIRECTORY)"
about=""
if [ -n "$source_dir" ]; then about=" (configured from $source_dir, $(cache_value CMAKE_BUILD_TYPE))"; fi
say "programs from $DIR$about, $fresh:"
for p in "${PROGRAMS[@]}"; do
  say "  $p  built $(date -r "$DIR/bin/$p" '+%Y-%m-%d %H:%M:%S %Z')  $(du -h "$DIR/bin/$p" | cut -f1)"
done
if [ -n "$source_dir" ] && [ "$source_dir" != "$ROOT" ]; then
  warn "$DIR was configured from $source_dir, not this checkout ($ROOT): the image gets that checkout's programs"
fi
if ! grep -qx 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null; then
  warn "this machine is not Debian bookworm, the images' base: its programs may not run there (the image build checks)"
fi
if [ "$MODE" != image ]; then exit 0; fi

# 4. podman, runc and debootstrap.
CONTAINERFILE="images/$IMAGE/Containerfile"
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

# 5. containers.conf: these machines run podman with runc and cgroupfs and without default
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

# Temporary directories (the base's root filesystem, the build context), removed on exit.
TEMPS=()
trap 'if [ ${#TEMPS[@]} -gt 0 ]; then $SUDO rm -rf "${TEMPS[@]}"; fi' EXIT

# 6. The debian:bookworm base image, from a cached debootstrap root filesystem.
if podman image exists debian:bookworm; then
  step "base image debian:bookworm present"
else
  TARBALL="$CACHE/debian-bookworm-minbase.tar"
  if [ ! -f "$TARBALL" ]; then
    step "debootstrap --variant=minbase bookworm from $MIRROR (a few minutes)"
    mkdir -p "$CACHE"
    ROOTFS="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
    TEMPS+=("$ROOTFS")
    $SUDO debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
      || FAILED_LOG="$CACHE/debootstrap.log" die "debootstrap failed (log: $CACHE/debootstrap.log)"
    # Package lists and the apt cache only bloat the base; images run apt-get update themselves.
    $SUDO rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/archives/*.deb
    $SUDO tar -C "$ROOTFS" -cf "$TARBALL.tmp" .
    mv "$TARBALL.tmp" "$TARBALL"
  fi
  step "importing $TARBALL as debian:bookworm"
  podman import --change 'CMD ["/bin/bash"]' "$TARBALL" debian:bookworm >/dev/null
fi

# 7. The build context: the programs, stripped, in bin/, and images/common/ (the Containerfiles
# name both by these paths; tests/image/containerfiles_test.sh checks they name nothing else).
CONTEXT="$(mktemp -d "${TMPDIR:-/tmp}/dljob-image-context.XXXXXX")"
TEMPS+=("$CONTEXT")
mkdir -p "$CONTEXT/bin" "$CONTEXT/images"
for p in "${PROGRAMS[@]}"; do
  install -m 0755 -s "$DIR/bin/$p" "$CONTEXT/bin/$p"
done
cp -r "$ROOT/images/common" "$CONTEXT/images/"
step "build context: ${PROGRAMS[*]} stripped ($(du -sh "$CONTEXT/bin" | cut -f1)) and images/common/"

# 8. The image itself.
step "podman build -f $CONTAINERFILE -t $TAG"
podman build --runtime runc --network host "${CACHE_ARGS[@]}" -f "$ROOT/$CONTAINERFILE" -t "$TAG" \
  "$CONTEXT"
step "built $TAG ($(podman image inspect --format '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}')) from $DIR"
exit 0
}
