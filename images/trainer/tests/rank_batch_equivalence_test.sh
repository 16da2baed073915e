#!/bin/bash
# 1 rank x batch 32 and 2 ranks x batch 16 see the same samples at every step (the sampler's union
# property) and average gradients, so their per-step losses must agree up to float rounding.
# Usage: rank_batch_equivalence_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
steps=8
run() {  # <ranks> <batch> <output>
  on_ranks "$1" \
    --model=mnist_cnn --batch_size="$2" --num_batches=$steps --num_warmup_batches=0 \
    --learning_rate=0.05 --seed=5 --eval=false --print_losses >"$3" 2>&1 \
    || { echo "FAIL: dljob-train -np $1 failed"; cat "$3"; exit 1; }
  untangle "$3"
}
run 1 32 "$tmp/one"
run 2 16 "$tmp/two"
grep $'^loss\t' "$tmp/one" >"$tmp/one.loss"
grep $'^loss\t' "$tmp/two" >"$tmp/two.loss"
paste "$tmp/one.loss" "$tmp/two.loss"
[[ $(wc -l <"$tmp/one.loss") == "$steps" && $(wc -l <"$tmp/two.loss") == "$steps" ]] \
  || { echo "FAIL: expected $steps loss lines from each run"; exit 1; }
# Losses must match to 1e-4 relative, and training must have moved them (else the check is empty).
paste "$tmp/one.loss" "$tmp/two.loss" | awk -F'\t' -v steps=$steps '
  function abs(x) { return x < 0 ? -x : x }
  $2 != $5 { print "FAIL: step mismatch"; exit 1 }
  { d = abs($3 - $6) / abs($3); if (d > 1e-4) { printf "FAIL: step %d: %s vs %s\n", $2, $3, $6; bad = 1 } }
  NR == 1 { first = $3 } NR == steps { last = $3 }
  END { if (bad) exit 1; if (!(last < first)) { print "FAIL: loss did not move"; exit 1 } print "PASS" }'
