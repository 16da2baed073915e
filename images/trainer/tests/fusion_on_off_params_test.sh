#!/bin/bash
# Two ranks train mnist_cnn on synthetic data for 15 steps with gradient fusion on (the default
# 64 MB buffer) and off (--fusion_threshold_mb=0, one allreduce per tensor). Each run must end
# with bit-identical parameters on both ranks, and the two runs must agree within floating-point
# tolerance (fusion changes how gradients travel, not what they sum to).
# Usage: fusion_on_off_params_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
fail() { echo "FAIL: $*"; exit 1; }

for mb in 64 0; do
  if ! on_ranks 2 \
      --model=mnist_cnn --data_name=synthetic --batch_size=8 --num_batches=15 \
      --num_warmup_batches=1 --display_every=5 --eval=false --fusion_threshold_mb=$mb \
      --dump_params="$tmp/fusion$mb" >"$tmp/out$mb" 2>"$tmp/err$mb"; then
    cat "$tmp/out$mb" "$tmp/err$mb"; fail "dljob-train --fusion_threshold_mb=$mb exited non-zero"
  fi
  cmp "$tmp/fusion$mb.rank0" "$tmp/fusion$mb.rank1" ||
    fail "--fusion_threshold_mb=$mb: ranks ended with different parameters"
done

python3 - "$tmp/fusion64.rank0" "$tmp/fusion0.rank0" <<'PY' || fail "fusion on and off disagree"
import array, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read())
b.frombytes(open(sys.argv[2], 'rb').read())
assert len(a) == len(b) == 225034, (len(a), len(b))
worst = max(abs(x - y) / (1e-3 + abs(y)) for x, y in zip(a, b))
print(f"max relative difference fusion on vs off: {worst:.3g}")
sys.exit(0 if worst <= 1e-4 else 1)
PY
echo "PASS"
