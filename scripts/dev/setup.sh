#!/usr/bin/env bash
# Installs every Debian package dljob needs to build, test and run its local demo, and s3rver
# (the S3 server the object-store tests run against). Safe to run any number of times. Run as
# root (or with sudo available). Fails, saying what is missing and what to do, when anything the
# tests need cannot be installed: a suite that skips what it could not set up has not passed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
fail() { die "FAILED: $*"; }

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  ccache  # scripts/dev/build.sh compiles through it when it is on PATH
  lld  # the linker CMakeLists.txt picks when it is there (links several times faster than ld)
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libopenmpi-dev openmpi-bin
  libturbojpeg0-dev libjpeg62-turbo-dev zlib1g-dev
  libtorch-dev
  dataset-fashion-mnist
  bible-kjv  # dljob-train --data_name=kjv: the King James Bible, read through `bible`
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev clang-format clang-tidy  # scripts/ci/check-*.sh, scripts/dev/check-tidy.sh, fuzz.sh
  python3  # scripts/dev/check-tidy.sh reads build/compile_commands.json
  libssl-dev openssl curl
  libjemalloc2  # dljob-operator's allocator (operator/app/allocator.h)
  openssh-client  # ssh-keygen: operator/controller/ssh_keys_test checks the keys the operator makes
  podman runc debootstrap  # scripts/cluster/build-image.sh and tests/image: the CPU image
  prometheus  # tests/operator/prometheus_scrape_test: Debian's Prometheus scrapes the operator
)
# kubectl drives the operator tests against the test API server. Debian's kubernetes-client
# provides it unless the machine already has one (some images ship Google Cloud SDK's kubectl,
# whose package owns the same path).
if ! command -v kubectl >/dev/null 2>&1; then PACKAGES+=(kubernetes-client); fi
# node and npm install s3rver (below); some images ship their own node with npm bundled.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  say "all ${#PACKAGES[@]} packages already installed"
else
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q ||
    fail "apt-get update did not work; check the network and the apt sources, then run scripts/dev/setup.sh again"
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    fail "apt-get could not install: ${missing[*]} (see apt's message above); fix that and run scripts/dev/setup.sh again"
fi

# s3rver, the S3-compatible server storage/objstore's tests run against, goes into the
# git-ignored .deps/ of the checkout. Without it those tests fail (they do not skip), so a failed
# install stops here.
S3RVER="$ROOT/.deps/s3rver/node_modules/s3rver/bin/s3rver.js"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
  fail "node and npm are needed to install s3rver (Debian packages nodejs and npm) but are not on PATH"
if [ -f "$S3RVER" ]; then
  say "s3rver already installed"
else
  say "installing s3rver into .deps/s3rver"
  npm install --prefix "$ROOT/.deps/s3rver" --no-audit --no-fund s3rver@3 ||
    fail "npm could not install s3rver@3 into .deps/s3rver (see npm's message above); the object-store tests need it. Fix that (network, npm registry) and run scripts/dev/setup.sh again"
  [ -f "$S3RVER" ] || fail "npm finished but $S3RVER is missing; remove .deps/s3rver and run scripts/dev/setup.sh again"
fi
say "done"
