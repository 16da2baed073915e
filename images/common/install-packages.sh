#!/bin/sh
# Installs the packages of one stage of the dljob images (images/cpu, images/cuda, images/operator)
# with apt-get: what every image needs in that stage, plus the PACKAGEs its Containerfile names for
# its base (LibTorch, MPI, and shared libraries under that distribution's names).
#   install-packages.sh build   [PACKAGE...]   compiler, CMake, Ninja and dljob's -dev packages
#   install-packages.sh runtime [PACKAGE...]   a trainer image's runtime: OpenSSH server and
#                                              client, CA certificates
#   install-packages.sh libs    PACKAGE...     only the PACKAGEs (the operator's shared libraries)
# Package lists are removed afterwards, so the layer holds only the packages.
set -eu

case "${1:-}" in
  build)
    common="cmake ninja-build g++ pkg-config libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
            libspdlog-dev libfmt-dev libturbojpeg0-dev libjpeg-dev zlib1g-dev
            libssl-dev"
    ;;
  runtime)
    common="openssh-server openssh-client ca-certificates"
    ;;
  libs)
    common=""
    [ $# -gt 1 ] || { echo "install-packages.sh: libs needs at least one PACKAGE" >&2; exit 2; }
    ;;
  *)
    echo "install-packages.sh: the first argument is build, runtime or libs, not '${1:-}'" >&2
    exit 2
    ;;
esac
shift

apt-get update -q
# $common is a word list on purpose.
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $common "$@"
rm -rf /var/lib/apt/lists/*
