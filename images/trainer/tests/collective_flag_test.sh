#!/bin/bash
# --collective: `auto` runs over MPI where no CUDA device is usable; `nccl` there is refused with
# one error line, a hint and exit code 2. On a machine with a CUDA device (and a dljob-train built
# with NCCL) the refusal checks are skipped and `auto` must pick nccl instead.
# Usage: collective_flag_test.sh <dljob-train>
set -uo pipefail
train=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }
run() { OMP_NUM_THREADS=1 "$train" "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
tiny=(--model=mnist_mlp --data_name=synthetic --num_batches=2 --num_warmup_batches=1 --noeval)

[[ $(run --help) == 0 ]] || fail "--help"
grep -q -- '--collective' "$tmp/out" || fail "--help does not list --collective"

[[ $(run "${tiny[@]}" --collective=mpi) == 0 ]] || fail "--collective=mpi run"
grep -q '^Ranks: *1 (mpi)$' "$tmp/out" || fail "--collective=mpi: ranks line"

[[ $(run "${tiny[@]}" --collective=gloo) == 2 ]] || fail "unknown collective: exit code"
grep -q '^dljob-train: error: --collective' "$tmp/err" || fail "unknown collective: message"

has_gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then has_gpu=1; fi

code=$(run "${tiny[@]}" --collective=auto)
[[ $code == 0 ]] || fail "--collective=auto run: exit code $code"
if [[ $has_gpu == 0 ]]; then
  grep -q '^Ranks: *1 (mpi)$' "$tmp/out" || fail "--collective=auto without a GPU: not mpi"

  [[ $(run "${tiny[@]}" --collective=nccl) == 2 ]] || fail "--collective=nccl without a GPU: exit code"
  [[ $(sed -n 1p "$tmp/err") == 'dljob-train: error: --collective=nccl '* ]] \
    || fail "--collective=nccl without a GPU: message"
  grep -q 'needs a CUDA device\|built without CUDA and NCCL' "$tmp/err" \
    || fail "--collective=nccl without a GPU: reason"
  [[ $(sed -n 2p "$tmp/err") == 'hint: pass --collective=mpi'* ]] || fail "--collective=nccl: hint"
  [[ $(wc -l <"$tmp/err") == 2 ]] || fail "--collective=nccl: extra output"
  [[ ! -s "$tmp/out" ]] || fail "--collective=nccl: started training anyway"
else
  echo "a CUDA device is present: the no-GPU refusal checks do not apply here"
fi
echo PASS
