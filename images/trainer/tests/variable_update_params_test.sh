#!/bin/bash
# Issue 3's "must show" for the gradient paths: mnist_cnn trains on synthetic data for 15 steps
# (batch 8 per rank) on 2 ranks with fusion on and off, the backward overlap on and off (also with
# channels-last, NHWC), --variable_update=allreduce and parameter_server, and --fp16_allreduce;
# and on 4 ranks with the
# flat and the hierarchical allreduce (--hierarchical_local_size=2: two simulated nodes). Every run
# must end with bit-identical parameters on all its ranks, and agree with the plain run of its rank
# count (allreduce, fusion on, no overlap):
#   - fusion, overlap and parameter_server change how the same float32 sums travel: relative
#     difference <= 1e-4 (as fusion_on_off_params_test.sh; measured: exactly equal);
#   - hierarchical sums 4 ranks in another association: the same 1e-4;
#   - fp16 rounds every gradient and every sum to 11 significant bits (at most 2^-12 relative
#     each, two roundings per value): each update is off by ~5e-4 of itself, so the parameters by
#     at most that fraction of how far training moved them, i.e. well under 1e-3 of their norm as
#     long as training does not amplify the difference. We require the relative L2 difference of
#     the whole parameter vector to be <= 5e-3 (10x headroom for that amplification over 15 steps;
#     measured 4e-4) and nonzero (zero would mean nothing was compressed).
# The overlap run also writes a --timeline, which must parse and hold every event name per rank.
# Usage: variable_update_params_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
fail() { echo "FAIL: $*"; exit 1; }

# run NAME RANKS FLAGS...: trains, checks the ranks agree, leaves $tmp/NAME.rank0.
run() {
  local name=$1 ranks=$2
  shift 2
  if ! on_ranks "$ranks" \
      --model=mnist_cnn --data_name=synthetic --batch_size=8 --num_batches=15 \
      --num_warmup_batches=1 --display_every=5 --eval=false --dump_params="$tmp/$name" "$@" \
      >"$tmp/$name.out" 2>"$tmp/$name.err"; then
    cat "$tmp/$name.out" "$tmp/$name.err"; fail "$name ($*) exited non-zero"
  fi
  for ((r = 1; r < ranks; r++)); do
    cmp "$tmp/$name.rank0" "$tmp/$name.rank$r" || fail "$name ($*): rank $r ended with other parameters than rank 0"
  done
}

# compare NAME BASE MAX_RELATIVE [fp16]: per-element relative difference (or, for fp16, the
# relative L2 difference, which must also be nonzero).
compare() {
  python3 - "$tmp/$1.rank0" "$tmp/$2.rank0" "$3" "${4:-}" <<'PY' || fail "$1 and $2 disagree"
import array, math, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read())
b.frombytes(open(sys.argv[2], 'rb').read())
assert len(a) == len(b) == 225034, (len(a), len(b))
limit = float(sys.argv[3])
if sys.argv[4] == "fp16":
    diff = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    norm = math.sqrt(sum(y * y for y in b))
    worst = diff / norm
    print(f"{sys.argv[1]}: relative L2 difference {worst:.3g} (limit {limit:g}, must be > 0)")
    sys.exit(0 if 0 < worst <= limit else 1)
worst = max(abs(x - y) / (1e-3 + abs(y)) for x, y in zip(a, b))
print(f"{sys.argv[1]}: max relative difference {worst:.3g} (limit {limit:g})")
sys.exit(0 if worst <= limit else 1)
PY
}

run plain 2 --overlap_backward=false
run overlap 2 --overlap_backward=true --timeline="$tmp/trace.json"
run overlap_nofusion 2 --overlap_backward=true --fusion_threshold_mb=0
run nofusion 2 --overlap_backward=false --fusion_threshold_mb=0
run ps 2 --variable_update=parameter_server
run ps_nofusion 2 --variable_update=parameter_server --fusion_threshold_mb=0
run fp16 2 --fp16_allreduce
for name in overlap overlap_nofusion nofusion ps ps_nofusion; do compare $name plain 1e-4; done
# Channels-last conv weights have non-contiguous gradients: the overlap stages them all the same.
run plain_nhwc 2 --data_format=NHWC --overlap_backward=false
run overlap_nhwc 2 --data_format=NHWC --overlap_backward=true
compare overlap_nhwc plain_nhwc 1e-4
compare fp16 plain 5e-3 fp16

run plain4 4 --overlap_backward=false
run hierarchical4 4 --allreduce_alg=hierarchical --hierarchical_local_size=2
compare hierarchical4 plain4 1e-4

for r in 0 1; do
  python3 - "$tmp/trace.rank$r.json" <<'PY' || fail "timeline of rank $r"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in events if e.get("ph") == "X"}
want = {"FORWARD", "BACKWARD", "OPTIMIZER", "NEGOTIATE", "FUSE", "ALLREDUCE", "UNFUSE"}
missing = want - names
assert not missing, f"missing events {missing}"
steps = {e["args"]["step"] for e in events if e.get("name") == "ALLREDUCE"}
assert steps == set(range(1, 16)), f"ALLREDUCE in steps {sorted(steps)}"
print(f"{sys.argv[1]}: {len(events)} events")
PY
done
echo "PASS"
