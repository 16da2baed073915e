#!/usr/bin/env bash
# Regenerates charts/dljob/crds/dljob.io_dljobs.yaml and dljob.io_dlqueues.yaml from the jobs/
# types (see jobs/crd.h).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dljob-gen-crd
mkdir -p charts/dljob/crds
for plural in dljobs dlqueues; do
  build/bin/dljob-gen-crd "$plural" > "charts/dljob/crds/dljob.io_$plural.yaml"
  echo "wrote charts/dljob/crds/dljob.io_$plural.yaml"
done
