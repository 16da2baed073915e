#!/usr/bin/env bash
# The operator's scale check, as Kueue's CI checks its scheduler performance test against a range
# spec: two small runs of the operator benchmarks (bench/) against the test API server, each
# failing (exit 3) past a threshold set well above what this 2-core machine measures, so that a
# change that makes the operator several times slower or fatter fails CI while load does not:
#
#   queue_bench --scale 0.02     300 one-worker DLJobs through 30 DLQueues in 5 cohorts (the
#                                Kueue-shaped case, 1/50 of it): every job must Succeed, within
#                                MAX_QUEUE_WALL s (measured about 15 s), the operator's peak RSS
#                                within MAX_QUEUE_RSS MiB (measured about 70)
#   operator_bench --jobs 200    200 DLJobs of 5 pods vs the same pods created directly: operator
#                                time at most MAX_RATIO x the baseline's (measured 7.2x, 41 s for both;
#                                4.4x on 2026-11-28), the operator's RSS growth at most MAX_RSS_GROWTH
#                                MiB per 10,000 pods (measured 148-163; 247-255 before the caches
#                                were packed, so a return to unpacked caches fails)
#
# The figures behind the defaults are in docs/benchmarks/operator.md. It builds what it runs
# (queue_bench, operator_bench, dljob-operator, dljob-test-apiserver) into build/ with
# scripts/dev/build.sh, which the README's commands then reuse.
#
#   scripts/ci/check-scale.sh   # MAX_QUEUE_WALL=120 MAX_QUEUE_RSS=256 MAX_RATIO=20 MAX_RSS_GROWTH=220
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
BIN="${BIN:-build/bin}"
bash scripts/dev/build.sh queue_bench operator_bench dljob-operator dljob-test-apiserver

say "queue_bench --scale 0.02 (300 DLJobs, 30 DLQueues in 5 cohorts)"
"$BIN/queue_bench" --scale 0.02 --sample-seconds 30 --max-wall-seconds "${MAX_QUEUE_WALL:-120}" \
  --max-peak-rss-mib "${MAX_QUEUE_RSS:-256}"
say "operator_bench --jobs 200"
"$BIN/operator_bench" --jobs 200 --max-ratio "${MAX_RATIO:-20}" \
  --max-rss-growth-mib "${MAX_RSS_GROWTH:-220}"
say "ok (load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
