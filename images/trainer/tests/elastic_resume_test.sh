#!/bin/bash
# Elastic resume: a checkpoint continues at another rank count (images/trainer/elastic.h).
# mnist_mlp on Fashion-MNIST, --batch_size=16 as the job's flags, global batch 32 on 2 ranks:
#   straight: 20 steps on 2 ranks in one run (the reference);
#   first:    5 steps on 2 ranks, checkpoint at 5;
#   up:       resumed on 4 ranks to step 12 (per-rank batch 8, the global batch 32 kept);
#   down:     resumed from up's checkpoint on 2 ranks to step 20.
# Each step's samples (--trace_samples, all ranks together) must be the straight run's, so the
# epoch's position is continuous; the losses and final parameters must match the straight run up
# to float rounding (the tolerances are far below what one wrong batch changes). Then
# --elastic_lr_scaling: resumed on 4 ranks with the per-rank batch kept, its samples continue the
# epoch's order where the checkpoint left it; and 2 -> 3 ranks without it is refused, naming both
# numbers.
# Usage: elastic_resume_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
fail() { echo "FAIL: $*"; exit 1; }
run() {  # <name> <ranks> <steps> [flags...]
  local name=$1 ranks=$2 steps=$3
  shift 3
  on_ranks "$ranks" --model=mnist_mlp --batch_size=16 --num_batches="$steps" \
    --num_warmup_batches=0 --display_every=1 --eval=false --seed=7 --print_losses \
    --dump_params="$tmp/$name.params" --trace_samples="$tmp/$name.trace" "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" \
    || { cat "$tmp/$name.out" "$tmp/$name.err"; fail "$name run exited non-zero"; }
  untangle "$tmp/$name.out"
}
# compare.py <mode> ...: the checks on traces, losses and parameters.
cat >"$tmp/compare.py" <<'PY'
import array, glob, sys
def trace(name):  # {step: sorted samples of all ranks}
    steps = {}
    for path in glob.glob(f"{name}.trace.rank*"):
        for line in open(path):
            f = [int(x) for x in line.split()]
            steps.setdefault(f[0], []).extend(f[2:])
    return {s: sorted(v) for s, v in steps.items()}
def losses(name):
    return {int(l.split("\t")[1]): float(l.split("\t")[2])
            for l in open(f"{name}.out") if l.startswith("loss\t")}
mode, tmp = sys.argv[1], sys.argv[2]
p = lambda n: f"{tmp}/{n}"
if mode == "same_steps":  # runs... : together they are the straight run, step by step
    want, got, lost = trace(p("straight")), {}, {}
    for run in sys.argv[3:]:
        t = trace(p(run))
        assert not set(t) & set(got), f"{run}: steps trained twice"
        got.update(t)
        lost.update(losses(p(run)))
    assert sorted(got) == sorted(want), (sorted(got), sorted(want))
    for s in want:
        assert got[s] == want[s], f"step {s}: samples {got[s][:5]}... vs {want[s][:5]}..."
    ref = losses(p("straight"))
    worst = max(abs(lost[s] - ref[s]) / abs(ref[s]) for s in ref)
    print(f"{len(want)} steps, same samples; max relative loss difference {worst:.3g}")
    assert worst < 1e-4, "losses differ"
elif mode == "params":  # a b
    a, b = array.array('f'), array.array('f')
    a.frombytes(open(p(sys.argv[3]), 'rb').read())
    b.frombytes(open(p(sys.argv[4]), 'rb').read())
    assert len(a) == len(b) > 0
    worst = max(abs(x - y) for x, y in zip(a, b))
    print(f"max absolute parameter difference: {worst:.3g}")
    assert worst < 1e-5, "parameters differ"
elif mode == "continues":  # run, straight steps: run's samples are the straight run's first ones
    want = sorted(x for s, v in trace(p("straight")).items() if s <= int(sys.argv[4]) for x in v)
    got = []
    for run in sys.argv[3].split(","):
        got += [x for v in trace(p(run)).values() for x in v]
    assert len(set(got)) == len(got), "a sample trained twice"
    assert sorted(got) == want, "the samples are not the epoch's order continued"
    print(f"{len(got)} samples, each once, the epoch's first ones")
PY
compare() { python3 "$tmp/compare.py" "$1" "$tmp" "${@:2}" || fail "$1 ${*:2}"; }

ckpt="$tmp/checkpoints"
run straight 2 20
run first 2 5 --checkpoint_dir="$ckpt" --checkpoint_every=100
lr="$tmp/lr-checkpoints"  # the same checkpoint of step 5, for --elastic_lr_scaling below
mkdir "$lr" && cp "$ckpt"/ckpt-000000005.* "$lr"/
run up 4 12 --checkpoint_dir="$ckpt" --checkpoint_every=100
grep -q '^Resuming from the checkpoint of step 5 ' "$tmp/up.out" || fail "up: no resume line"
grep -qF 'resumed at step 5 on 4 ranks (checkpoint written on 2): global batch 32 kept, per-rank batch 16 → 8' \
  "$tmp/up.out" || { cat "$tmp/up.out"; fail "up: no resize line"; }
first_metric=$(grep -m1 '^DLJOB_METRIC ' "$tmp/up.out")
[[ $first_metric == *'"step":6,'* && $first_metric == *'"resizes":1'* \
   && $first_metric == *'"world_size":4'* ]] || fail "up: first metric line is $first_metric"
run down 2 20 --checkpoint_dir="$ckpt" --checkpoint_every=100
grep -qF 'resumed at step 12 on 2 ranks (checkpoint written on 4): global batch 32 kept, per-rank batch 8 → 16' \
  "$tmp/down.out" || { cat "$tmp/down.out"; fail "down: no resize line"; }
grep -q '"resizes":2' "$tmp/down.out" || fail "down: metric lines do not count 2 resizes"
compare same_steps first up down
compare params straight.params.rank0 down.params.rank0
cmp -s "$tmp/down.params.rank0" "$tmp/down.params.rank1" || fail "down: ranks ended apart"

# --elastic_lr_scaling: first's 5 steps of 32 on 2 ranks, then 4 steps of 64 on 4 ranks = the
# straight run's first 13 steps' samples.
run lr_up 4 9 --checkpoint_dir="$lr" --elastic_lr_scaling
grep -qF 'resumed at step 5 on 4 ranks (checkpoint written on 2): per-rank batch 16 kept, global batch 32 → 64, learning rate 0.1 (--learning_rate=0.05 x 4 / 2 ranks)' \
  "$tmp/lr_up.out" || { cat "$tmp/lr_up.out"; fail "lr_up: no resize line"; }
compare continues first,lr_up 13

# 32 samples a step do not divide among 3 ranks.
if on_ranks 3 --model=mnist_mlp --batch_size=16 --num_batches=20 --eval=false --seed=7 \
  --checkpoint_dir="$ckpt" >"$tmp/three.out" 2>"$tmp/three.err"; then
  fail "3 ranks: resumed a global batch of 32"
fi
grep -q "global batch of 32 (2 ranks x 16) does not divide among 3 ranks" "$tmp/three.err" \
  || { cat "$tmp/three.err"; fail "3 ranks: no clear error"; }
echo PASS
