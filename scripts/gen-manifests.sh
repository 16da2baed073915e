#!/usr/bin/env bash
# Regenerates charts/manifests/dljob.yaml (the chart rendered with its default values, for
# `kubectl apply -f` without Helm). A test fails when the file and the chart disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh dljob-render-chart
mkdir -p charts/manifests
build/bin/dljob-render-chart --chart charts/dljob > charts/manifests/dljob.yaml
echo "wrote charts/manifests/dljob.yaml"
