#!/bin/bash
# Resume-from-checkpoint continues the loss curve. Two ranks train mnist_cnn on Fashion-MNIST:
#   straight:  12 steps in one run;
#   first:     6 steps with --checkpoint_dir (checkpoints at 3 and 6);
#   resumed:   the same command with --num_batches=12 resumes at step 7 and must print the
#              straight run's losses for steps 7..12 and end with its parameters;
#   torn:      the newest checkpoint (12) truncated: a warning, and the run resumes from 9.
# Usage: checkpoint_resume_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
fail() { echo "FAIL: $*"; exit 1; }
run() {  # <name> <steps> [flags...]
  local name=$1 steps=$2
  shift 2
  on_ranks 2 --model=mnist_cnn --batch_size=16 --num_batches="$steps" --num_warmup_batches=0 \
    --display_every=1 --eval=false --seed=7 --print_losses --dump_params="$tmp/$name.params" \
    "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" \
    || { cat "$tmp/$name.out" "$tmp/$name.err"; fail "$name run exited non-zero"; }
  untangle "$tmp/$name.out"
  grep $'^loss\t' "$tmp/$name.out" >"$tmp/$name.loss" || true
}
# Losses of steps $2..$3 in run $1 against the straight run (9 significant digits, 1e-6 relative).
same_losses() {
  awk -F'\t' -v from="$2" -v to="$3" '$2 >= from && $2 <= to' "$tmp/straight.loss" >"$tmp/want"
  paste "$tmp/want" "$tmp/$1.loss"
  [[ $(wc -l <"$tmp/want") == $(wc -l <"$tmp/$1.loss") ]] || fail "$1: wrong number of steps"
  paste "$tmp/want" "$tmp/$1.loss" | awk -F'\t' '
    function abs(x) { return x < 0 ? -x : x }
    $2 != $5 { print "FAIL: step numbers differ: " $2 " vs " $5; exit 1 }
    abs($3 - $6) > 1e-6 * abs($3) { print "FAIL: step " $2 ": " $3 " vs " $6; exit 1 }'
}
same_params() {
  params_close "$tmp/straight.params.rank0" "$tmp/$1.params.rank0" 225034 \
    || fail "$1: parameters differ"
  cmp -s "$tmp/$1.params.rank0" "$tmp/$1.params.rank1" || fail "$1: ranks ended apart"
}

ckpt="$tmp/checkpoints"
run straight 12
[[ $(wc -l <"$tmp/straight.loss") == 12 ]] || fail "straight: expected 12 loss lines"
run first 6 --checkpoint_dir="$ckpt" --checkpoint_every=3
ls "$ckpt"
[[ -e $ckpt/ckpt-000000003.manifest && -e $ckpt/ckpt-000000006.manifest ]] \
  || fail "first: no checkpoints at steps 3 and 6"
same_losses first 1 6

run resumed 12 --checkpoint_dir="$ckpt" --checkpoint_every=3
grep -q '^Resuming from the checkpoint of step 6 ' "$tmp/resumed.out" || fail "resumed: no resume line"
first_step=$(grep -m1 '^DLJOB_METRIC ' "$tmp/resumed.out" | sed 's/.*"step":\([0-9]*\).*/\1/')
[[ $first_step == 7 ]] || fail "resumed: first metric line is step $first_step, expected 7"
same_losses resumed 7 12
same_params resumed

# A torn newest checkpoint: ignored with a warning, the one before is used.
truncate -s 1000 "$ckpt/ckpt-000000012.pt"
run torn 12 --checkpoint_dir="$ckpt" --checkpoint_every=3
grep -q 'warning: skipping checkpoint of step 12 .*truncated or corrupt' "$tmp/torn.err" \
  || { cat "$tmp/torn.err"; fail "torn: no warning"; }
grep -q '^Resuming from the checkpoint of step 9 ' "$tmp/torn.out" || fail "torn: did not fall back to 9"
same_losses torn 10 12
same_params torn
echo PASS
