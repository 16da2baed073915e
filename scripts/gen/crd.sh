#!/usr/bin/env bash
# Regenerates charts/dljob/crds/dljob.io_dljobs.yaml and dljob.io_dlqueues.yaml from the jobs/
# types (see jobs/crd.h).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
bash scripts/dev/build.sh dljob-gen-crd
mkdir -p charts/dljob/crds
for plural in dljobs dlqueues; do
  build/bin/dljob-gen-crd "$plural" > "charts/dljob/crds/dljob.io_$plural.yaml"
  say "wrote charts/dljob/crds/dljob.io_$plural.yaml"
done
