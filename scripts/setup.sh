#!/usr/bin/env bash
# Installs every Debian package dljob needs to build, test and run its local demo.
# Safe to run any number of times. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libopenmpi-dev openmpi-bin
  libturbojpeg0-dev libjpeg62-turbo-dev zlib1g-dev
  libtorch-dev
  dataset-fashion-mnist
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  libcpprest-dev libssl-dev openssl curl
  podman runc debootstrap  # scripts/build-image.sh and tests/image: the CPU image
)
# kubectl drives the operator tests against the test API server. Debian's kubernetes-client
# provides it unless the machine already has one (some images ship Google Cloud SDK's kubectl,
# whose package owns the same path).
if ! command -v kubectl >/dev/null 2>&1; then PACKAGES+=(kubernetes-client); fi
# node and npm install s3rver (below); some images ship their own node with npm bundled.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# s3rver, the S3-compatible server storage/objstore's tests run against, goes into the
# git-ignored .deps/ of the checkout (its tests skip when it is absent).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -f "$ROOT/.deps/s3rver/node_modules/s3rver/bin/s3rver.js" ]; then
  echo "setup: s3rver already installed"
elif command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
  echo "setup: installing s3rver into .deps/s3rver"
  npm install --prefix "$ROOT/.deps/s3rver" --no-audit --no-fund s3rver@3 \
    || echo "setup: s3rver could not be installed; the object-store tests against it will skip"
fi
echo "setup: done"
