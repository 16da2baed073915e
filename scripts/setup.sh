#!/usr/bin/env bash
# Installs every Debian package dljob needs to build, test and run its local demo.
# Safe to run any number of times. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libopenmpi-dev openmpi-bin
  libturbojpeg0-dev zlib1g-dev
  libtorch-dev
  dataset-fashion-mnist
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev
  libcpprest-dev libssl-dev openssl
)
# kubectl drives the operator tests against the test API server. Debian's kubernetes-client
# provides it unless the machine already has one (some images ship Google Cloud SDK's kubectl,
# whose package owns the same path).
if ! command -v kubectl >/dev/null 2>&1; then PACKAGES+=(kubernetes-client); fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
