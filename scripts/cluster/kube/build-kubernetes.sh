#!/usr/bin/env bash
# Builds the Kubernetes server binaries dljob's one-machine cluster needs, from Debian's
# `kubernetes` source package, into a cache kept per version outside any build tree.
#
# The cache directory ($CACHE/kubernetes-$VERSION, default /var/cache/dljob/kubernetes-1.20.2)
# holds bin/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy},
# bin/pause (static, from build/pause/linux/pause.c) and a file `complete` written last: a cache
# with `complete` is reused as it is; anything else is (re)built. The source tree lives in
# $CACHE/kubernetes-$VERSION/src while building and is removed once the binaries are in place.
#
# Steps: a deb-src entry for the archive the machine already uses (written once to
# /etc/apt/sources.list.d/dljob-deb-src.sources), `apt-get source --download-only`, the
# tarballs' sha256 checked against the .dsc, `dpkg-source -x`, vendor/github.com/modern-go/
# reflect2 replaced by Debian's 1.0.2 (the vendored 1.0.1 crashes Go >= 1.18 programs in map
# iteration), then `make WHAT=...` with GOPATH at a .go/src/k8s.io/kubernetes symlink and
# CGO_ENABLED=0, as the package's debian/rules does. Runs niced: the machine is shared.
#
# Usage: scripts/cluster/kube/build-kubernetes.sh        (environment: DLJOB_KUBE_CACHE,
# KUBE_VERSION) Prints progress lines "build-kubernetes: [Ns] ..."; exit 0 when the cache is
# complete.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"

VERSION="${KUBE_VERSION:-1.20.2}"
CACHE_ROOT="${DLJOB_KUBE_CACHE:-/var/cache/dljob}"
CACHE="$CACHE_ROOT/kubernetes-$VERSION"
WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet cmd/kube-proxy"

if [ -f "$CACHE/complete" ]; then
  step "reusing $CACHE/bin ($(cat "$CACHE/complete"))"
  exit 0
fi
mkdir -p "$CACHE/bin"
for tool in go rsync dpkg-source make gcc; do
  command -v "$tool" >/dev/null || die "missing $tool (apt-get install golang-go rsync dpkg-dev build-essential)"
done
[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ] \
  || die "missing Debian's reflect2 (apt-get install golang-github-modern-go-reflect2-dev)"

# 1. A deb-src entry for the Debian archive the machine already uses (first deb822 stanza of
# debian.sources, or the first `deb` line of sources.list), never another host.
SRC_LIST=/etc/apt/sources.list.d/dljob-deb-src.sources
if ! apt-cache showsrc kubernetes 2>/dev/null | grep -q "^Version: "; then
  if [ ! -f "$SRC_LIST" ]; then
    uri="" signed=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
      signed=$(awk '/^Signed-By:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    elif [ -f /etc/apt/sources.list ]; then
      uri=$(awk '$1=="deb" && $2 !~ /^\[/ {print $2; exit}' /etc/apt/sources.list)
    fi
    [ -n "$uri" ] || die "no Debian archive found in /etc/apt/sources.list*; add a deb-src line for it"
    codename=$(sed -n "s/^VERSION_CODENAME=//p" /etc/os-release); codename=${codename:-bookworm}
    step "adding $SRC_LIST (deb-src $uri $codename main)"
    {
      echo "# Written by dljob scripts/cluster/kube/build-kubernetes.sh: Debian's kubernetes source package."
      echo "Types: deb-src"
      echo "URIs: $uri"
      echo "Suites: $codename"
      echo "Components: main"
      [ -z "$signed" ] || echo "Signed-By: $signed"
    } >"$SRC_LIST"
  fi
  step "apt-get update (for the deb-src index)"
  apt-get update -q >"$CACHE/apt-update.log" 2>&1 || die "apt-get update failed; see $CACHE/apt-update.log"
fi
pkg_version=$(apt-cache showsrc kubernetes | awk '/^Version: /{print $2; exit}')
[ -n "$pkg_version" ] || die "apt-cache showsrc kubernetes found nothing; is $SRC_LIST right?"
case "$pkg_version" in
  *"$VERSION"*) ;;
  *) die "Debian's kubernetes source is $pkg_version, not $VERSION (set KUBE_VERSION)" ;;
esac

# 2. Fetch the source package, check every file's sha256 against the .dsc, unpack.
DL="$CACHE/download"
mkdir -p "$DL"
t0=$SECONDS
step "apt-get source --download-only kubernetes=$pkg_version"
(cd "$DL" && apt-get source -q --download-only "kubernetes=$pkg_version") >"$CACHE/source.log" 2>&1 \
  || die "apt-get source failed; see $CACHE/source.log"
dsc=$(ls "$DL"/kubernetes_*.dsc | head -1)
[ -f "$dsc" ] || die "no .dsc downloaded into $DL"
awk '/^Checksums-Sha256:/{on=1; next} /^[^ ]/{on=0} on && NF==3 {print $1 "  " $3}' "$dsc" \
  >"$DL/SHA256SUMS"
[ -s "$DL/SHA256SUMS" ] || die "$dsc has no Checksums-Sha256 field"
(cd "$DL" && sha256sum --check --strict SHA256SUMS) >"$CACHE/sha256.log" 2>&1 \
  || die "sha256 mismatch of the source package against $dsc; see $CACHE/sha256.log"
step "sha256 of $(awk '{print $2}' "$DL/SHA256SUMS" | tr '\n' ' ')checked against $(basename "$dsc")"
rm -rf "$CACHE/src"
dpkg-source -x "$dsc" "$CACHE/src" >>"$CACHE/source.log" 2>&1 || die "dpkg-source -x failed; see $CACHE/source.log"
step "source fetched and unpacked in $((SECONDS - t0))s"

# 3. reflect2 1.0.2 from Debian in place of the vendored 1.0.1.
SRC="$CACHE/src"
rm -rf "$SRC/vendor/github.com/modern-go/reflect2"
# The build runs in GOPATH mode (the top Makefile exports GO111MODULE=off), so vendor/modules.txt
# and go.mod, which still say v1.0.1, are not consulted.
cp -rL /usr/share/gocode/src/github.com/modern-go/reflect2 "$SRC/vendor/github.com/modern-go/reflect2"

# 4. The Go build, as debian/rules does it.
t0=$SECONDS
mkdir -p "$SRC/.go/src/k8s.io"
ln -sfn "$SRC" "$SRC/.go/src/k8s.io/kubernetes"
step "make WHAT=\"$WHAT\" (about 8 minutes on 2 quiet cores, 40 on busy ones; log: $CACHE/make.log)"
(
  cd "$SRC/.go/src/k8s.io/kubernetes"
  export GOPATH="$SRC/.go" GOCACHE="$CACHE/gocache" CGO_ENABLED=0
  export KUBE_GIT_TREE_STATE=clean KUBE_GIT_VERSION="v$VERSION" GOMAXPROCS=2
  nice -n 10 make WHAT="$WHAT"
) >"$CACHE/make.log" 2>&1 || { tail -30 "$CACHE/make.log" >&2; die "make failed; see $CACHE/make.log"; }
for b in $WHAT; do
  f="$SRC/_output/local/bin/linux/amd64/$(basename "$b")"
  [ -x "$f" ] || f=$(find "$SRC/_output" -type f -name "$(basename "$b")" | head -1)
  [ -n "$f" ] && [ -x "$f" ] || die "make succeeded but $(basename "$b") is not in $SRC/_output"
  cp "$f" "$CACHE/bin/"
done
step "Go build done in $((SECONDS - t0))s"

# 5. The pod sandbox ("pause") binary, static.
nice -n 10 gcc -Os -static -Wall -DVERSION="v$VERSION-dljob" -o "$CACHE/bin/pause" \
  "$SRC/build/pause/linux/pause.c" 2>"$CACHE/pause.log" || die "pause.c failed; see $CACHE/pause.log"
strip "$CACHE/bin/pause" || true

echo "kubernetes $pkg_version built $(date -u +%FT%TZ), sha256 checked against $(basename "$dsc")" \
  >"$CACHE/complete"
# dpkg-source -x leaves a copy of the orig tarball beside the tree; download/ keeps the package.
rm -rf "$SRC" "$CACHE/gocache" "$CACHE"/kubernetes_*.orig.tar.*
step "cache complete: $CACHE/bin"
