#!/bin/bash
# Two ranks train mnist_cnn on Fashion-MNIST for 20 steps; both must end with bit-identical
# parameters (each rank starts from a different initialisation and sees different data, so only a
# working broadcast + gradient allreduce makes the dumps equal).
# Usage: two_ranks_identical_params_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
require_fashion_mnist

if ! on_ranks 2 \
    --model=mnist_cnn --batch_size=16 --num_batches=20 --num_warmup_batches=2 \
    --display_every=5 --eval=false --dump_params="$tmp/params" >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: dljob-train exited non-zero"; cat "$tmp/out" "$tmp/err"; exit 1
fi
cat "$tmp/out"
fail() { echo "FAIL: $*"; exit 1; }

# mnist_cnn has 225,034 float32 parameters.
for r in 0 1; do
  [[ $(stat -c %s "$tmp/params.rank$r") == 900136 ]] || fail "params.rank$r has the wrong size"
done
cmp "$tmp/params.rank0" "$tmp/params.rank1" || fail "ranks ended with different parameters"

# Human text once (rank 0), metric lines from both ranks, flushed as whole lines.
[[ $(grep -c '^Model:' "$tmp/out") == 1 ]] || fail "header printed more than once"
[[ $(grep -c '^total images/sec: ' "$tmp/out") == 1 ]] || fail "no single total line"
for r in 0 1; do
  n=$(grep '^DLJOB_METRIC ' "$tmp/out" | grep -c "\"rank\":$r,") || true
  (( n >= 5 )) || fail "rank $r printed $n metric lines, expected >= 5"
done
grep -q '"step":20,' "$tmp/out" || fail "no metric line for the last step"
echo "PASS"
