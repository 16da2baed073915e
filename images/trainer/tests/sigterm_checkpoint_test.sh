#!/bin/bash
# SIGTERM mid-training stops every rank at the same step with a checkpoint of it, and a rerun
# resumes there (stop_signal.h). Two ranks train mnist_cnn on Fashion-MNIST:
#   first:     a long run with --checkpoint_dir and an interval it never reaches; once it has
#              trained a few steps, SIGTERM goes to rank 1 only (rank 0 learns of it through the
#              step's allreduce). Every rank must stop at the same step K, rank 0 must save a
#              checkpoint of K, and mpirun must exit 143 (128 + SIGTERM);
#   straight:  K + 3 steps in one run;
#   resumed:   the first command with --num_batches=K+3 resumes at step K + 1 and must print the
#              straight run's losses for K+1..K+3 and end with its parameters.
# Usage: sigterm_checkpoint_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
require_fashion_mnist
fail() { echo "FAIL: $*"; exit 1; }
flags=(--model=mnist_cnn --batch_size=16 --num_warmup_batches=0 --display_every=1 --eval=false
       --seed=7 --print_losses)
ckpt="$tmp/checkpoints"

# The loss lines in a file so far: 0 until the background job's shell has created it (grep would
# print nothing for a missing file, and the loop's arithmetic would break on that).
steps_in() {
  [[ -e $1 ]] || { echo 0; return; }
  grep -c $'^loss\t' "$1" || true
}

# mpirun itself in the background (not on_ranks, a function: $! would be its subshell), so that
# its children are the ranks.
"$mpirun" --allow-run-as-root --oversubscribe -np 2 -x OMP_NUM_THREADS=1 "$train" "${flags[@]}" \
  --num_batches=1000000 --checkpoint_dir="$ckpt" --checkpoint_every=100000 \
  >"$tmp/first.out" 2>"$tmp/first.err" &
launcher=$!
trap 'kill -KILL $launcher 2>/dev/null || true; rm -rf "$tmp"' EXIT
for (( i = 0; i < 1200 && $(steps_in "$tmp/first.out") < 3; i++ )); do sleep 0.1; done
(( $(steps_in "$tmp/first.out") >= 3 )) \
  || { cat "$tmp/first.out" "$tmp/first.err"; fail "first: no training steps"; }
rank1=
for child in $(pgrep -P "$launcher"); do
  if tr '\0' '\n' <"/proc/$child/environ" | grep -x 'OMPI_COMM_WORLD_RANK=1' >/dev/null; then
    rank1=$child
  fi
done
[[ -n $rank1 ]] || fail "first: rank 1 not found among mpirun's children"
kill -TERM "$rank1"
rc=0
wait "$launcher" || rc=$?
cat "$tmp/first.err"
untangle "$tmp/first.out"
[[ $rc == 143 ]] || { tail "$tmp/first.out"; fail "first: mpirun exited $rc, expected 143"; }
stop_line=$(grep '^Stopping at step ' "$tmp/first.out") || fail "first: no stop line"
echo "$stop_line"
k=$(sed 's/^Stopping at step \([0-9]*\) .*/\1/' <<<"$stop_line")
[[ $stop_line == *"; checkpoint of step $k saved in \"$ckpt\""* ]] || fail "first: no checkpoint"
[[ -e $ckpt/$(printf 'ckpt-%09d.manifest' "$k") ]] || fail "first: no manifest of step $k"
last=$(grep $'^loss\t' "$tmp/first.out" | tail -1 | cut -f2)
[[ $last == "$k" ]] || fail "first: trained to step $last but stopped at $k"

total=$(( k + 3 ))
on_ranks 2 "${flags[@]}" --num_batches="$total" --dump_params="$tmp/straight.params" \
  >"$tmp/straight.out" 2>"$tmp/straight.err" || { cat "$tmp/straight.err"; fail "straight run"; }
on_ranks 2 "${flags[@]}" --num_batches="$total" --checkpoint_dir="$ckpt" \
  --checkpoint_every=100000 --dump_params="$tmp/resumed.params" \
  >"$tmp/resumed.out" 2>"$tmp/resumed.err" || { cat "$tmp/resumed.err"; fail "resumed run"; }
grep -q "^Resuming from the checkpoint of step $k " "$tmp/resumed.out" \
  || { cat "$tmp/resumed.out"; fail "resumed: no resume line for step $k"; }
untangle "$tmp/straight.out"
untangle "$tmp/resumed.out"
grep $'^loss\t' "$tmp/straight.out" | awk -F'\t' -v k="$k" '$2 > k' >"$tmp/want"
grep $'^loss\t' "$tmp/resumed.out" >"$tmp/have"
paste "$tmp/want" "$tmp/have"
[[ $(wc -l <"$tmp/want") == 3 && $(wc -l <"$tmp/have") == 3 ]] || fail "resumed: not 3 steps"
paste "$tmp/want" "$tmp/have" | awk -F'\t' '
  function abs(x) { return x < 0 ? -x : x }
  $2 != $5 { print "FAIL: step numbers differ: " $2 " vs " $5; exit 1 }
  abs($3 - $6) > 1e-6 * abs($3) { print "FAIL: step " $2 ": " $3 " vs " $6; exit 1 }'
params_close "$tmp/straight.params.rank0" "$tmp/resumed.params.rank0" \
  || fail "resumed: parameters differ"
echo PASS
