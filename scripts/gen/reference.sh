#!/usr/bin/env bash
# Regenerates docs/reference/dljob.md and dlqueue.md from the field tables (jobs/dljob_fields.h,
# jobs/dlqueue_fields.h) through `dljob-gen-crd --markdown` (jobs/reference.h).
# jobs/reference_test.cc fails when a committed page differs from the generator's output.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
bash scripts/dev/build.sh dljob-gen-crd
mkdir -p docs/reference
for pair in dljobs:dljob dlqueues:dlqueue; do
  plural=${pair%%:*}
  page=docs/reference/${pair##*:}.md
  "$BUILD_DIR/bin/dljob-gen-crd" --markdown "$plural" > "$page"
  echo "wrote $page"
done
