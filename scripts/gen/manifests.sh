#!/usr/bin/env bash
# Regenerates charts/manifests/dljob.yaml (the chart rendered with its default values, for
# `kubectl apply -f` without Helm). A test fails when the file and the chart disagree.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
bash scripts/dev/build.sh dljob-render-chart
mkdir -p charts/manifests
build/bin/dljob-render-chart --chart charts/dljob > charts/manifests/dljob.yaml
say "wrote charts/manifests/dljob.yaml"
