#!/usr/bin/env bash
# Regenerates charts/dljob/crds/dljob.io_dljobs.yaml from the jobs/ types (see jobs/crd.h).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dljob-gen-crd
mkdir -p charts/dljob/crds
build/bin/dljob-gen-crd > charts/dljob/crds/dljob.io_dljobs.yaml
echo "wrote charts/dljob/crds/dljob.io_dljobs.yaml"
