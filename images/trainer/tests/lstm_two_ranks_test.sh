#!/bin/bash
# The LSTM language model on 2 MPI ranks: a few steps on the King James Bible (the bible-kjv
# package) and on synthetic text, through every gradient path (allreduce ring with and without
# the backward overlap and fusion, fp16 allreduce, the hierarchical allreduce over two simulated
# nodes, parameter_server, 2-bit compression with error feedback). Each run must end with
# bit-identical parameters on both ranks, print words/sec (not images/sec), and the kjv runs a
# validation perplexity below the vocabulary's size (what a uniform model scores) in the text
# and in both ranks' metric lines.
# Usage: lstm_two_ranks_test.sh <dljob-train> <mpirun>
set -euo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
fail() { echo "FAIL: $*"; exit 1; }

if ! command -v bible >/dev/null; then
  fail "the bible program is missing: install the bible-kjv package (scripts/dev/setup.sh)"
fi

# run NAME DATA FLAGS...: trains on 2 ranks, checks the ranks agree and the output's units.
run() {
  local name=$1 data=$2
  shift 2
  if ! on_ranks 2 --model=lstm_lm --data_name="$data" --lstm_hidden_size=32 --batch_size=8 \
      --bptt=10 --num_batches=12 --num_warmup_batches=2 --display_every=4 \
      --dump_params="$tmp/$name" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
    cat "$tmp/$name.out" "$tmp/$name.err"; fail "$name ($*) exited non-zero"
  fi
  cmp "$tmp/$name.rank0" "$tmp/$name.rank1" || fail "$name ($*): the ranks' parameters differ"
  grep -q "words/sec: " "$tmp/$name.out" || fail "$name: no words/sec row"
  grep -q "^total words/sec: " "$tmp/$name.out" || fail "$name: no total words/sec"
  if grep -q "images" "$tmp/$name.out"; then fail "$name: speaks of images"; fi
  for rank in 0 1; do
    grep -q "DLJOB_METRIC .*\"rank\":$rank,.*\"words_per_sec\":" "$tmp/$name.out" ||
      fail "$name: rank $rank printed no words_per_sec metric line"
  done
}

# A perplexity below the vocabulary (10000 words): the model has learnt something.
check_perplexity() {
  local name=$1
  local ppl
  ppl=$(sed -n 's/^Epoch 1: validation perplexity = \([0-9.]*\) .*/\1/p' "$tmp/$name.out")
  [[ -n $ppl ]] || { cat "$tmp/$name.out"; fail "$name: no validation perplexity"; }
  python3 -c "import sys; sys.exit(0 if 1 < $ppl < 10000 else 1)" ||
    fail "$name: validation perplexity $ppl not below the vocabulary's 10000"
  [[ $(grep -c 'DLJOB_METRIC .*"perplexity":' "$tmp/$name.out") -ge 2 ]] ||
    fail "$name: the ranks' metric lines carry no perplexity"
  grep -q "unigram valid perplexity" "$tmp/$name.out" || fail "$name: no unigram baseline"
  echo "$name: validation perplexity $ppl"
}

run kjv_ring kjv
check_perplexity kjv_ring
run kjv_ps kjv --variable_update=parameter_server
check_perplexity kjv_ps
run synthetic_ring synthetic --eval=false
run synthetic_no_overlap synthetic --eval=false --nooverlap_backward --fusion_threshold_mb=0
run synthetic_fp16 synthetic --eval=false --fp16_allreduce
run synthetic_hierarchical synthetic --eval=false --allreduce_alg=hierarchical \
  --hierarchical_local_size=1
run synthetic_ps synthetic --eval=false --variable_update=parameter_server
run synthetic_2bit synthetic --eval=false --gradient_compression=2bit --compression_threshold=0.1
# The same updates travel different ways: the parameter server and the ring agree to rounding.
params_close "$tmp/synthetic_ring.rank0" "$tmp/synthetic_ps.rank0" ||
  fail "parameter_server and allreduce disagree"
echo PASS
