#!/bin/bash
# dljob-train's user-facing errors: one `dljob-train: error:` line plus a hint, exit code 2, never
# a stack trace; and a tiny synthetic run that succeeds.
# Usage: cli_errors_test.sh <dljob-train> [<mpirun>]
set -uo pipefail
train=$1
mpirun=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; exit 1; }
run() { "$train" "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

[[ $(run --help) == 0 ]] || fail "--help"
grep -q -- '--num_warmup_batches' "$tmp/out" || fail "--help lists no flags"

[[ $(run --model=mnist_cn) == 2 ]] || fail "unknown model: exit code"
[[ $(sed -n 1p "$tmp/err") == 'dljob-train: error: unknown model "mnist_cn" (known models: alexnet, googlenet, inception3, lstm_lm, mnist_cnn, mnist_mlp, resnet101, resnet152, resnet18, resnet34, resnet50, vgg16)' ]] \
  || fail "unknown model: message"
[[ $(sed -n 2p "$tmp/err") == 'hint: did you mean --model=mnist_cnn?' ]] || fail "unknown model: hint"
[[ $(wc -l <"$tmp/err") == 2 ]] || fail "unknown model: extra output"

[[ $(run --data_dir=/nonexistent/fmnist --num_batches=1) == 2 ]] || fail "missing data: exit code"
[[ $(sed -n 1p "$tmp/err") == 'dljob-train: error: cannot read Fashion-MNIST from "/nonexistent/fmnist": no such directory' ]] \
  || fail "missing data: message"
sed -n 2p "$tmp/err" | grep -q '^hint: install the dataset-fashion-mnist package' || fail "missing data: hint"
[[ $(wc -l <"$tmp/err") == 2 ]] || fail "missing data: extra output"

mkdir "$tmp/broken"
printf 'not an idx file' | gzip >"$tmp/broken/train-images-idx3-ubyte.gz"
cp /dev/null "$tmp/broken/train-labels-idx1-ubyte"
[[ $(run --data_dir="$tmp/broken") == 2 ]] || fail "corrupt data: exit code"
grep -q 'bad magic number' "$tmp/err" || fail "corrupt data: message"

[[ $(run --batch_size=0) == 2 ]] || fail "bad batch size"
[[ $(run --batch_size=70000 --num_batches=1) == 2 ]] || fail "batch larger than the data"

[[ $(OMP_NUM_THREADS=1 run --data_name=synthetic --model=mnist_mlp --num_batches=4 \
      --num_warmup_batches=1 --display_every=2) == 0 ]] || fail "synthetic run"
grep -q '^Devices: *cpu (no GPU found)$' "$tmp/out" || fail "device line"
grep -q '^Threads: *1 per rank$' "$tmp/out" || fail "threads line"
# Step 2, the epoch end at step 4 (standing in for step 4's line), the final line.
[[ $(grep -c '^DLJOB_METRIC ' "$tmp/out") == 3 ]] || fail "metric lines"
# --use_fp16 on a CPU-only machine is refused, not ignored (skipped where LibTorch sees a GPU).
code=$(run --model=mnist_mlp --data_name=synthetic --num_batches=1 --use_fp16)
if ! grep -q 'cuda:[0-9]' "$tmp/out"; then
  [[ $code == 2 ]] || fail "--use_fp16 on CPU: exit code"
  grep -q '^dljob-train: error: --use_fp16 needs a CUDA device' "$tmp/err" || fail "--use_fp16 on CPU: message"
  grep -q '^hint: ' "$tmp/err" || fail "--use_fp16 on CPU: hint"
fi

# Gradient-path flags that cannot go together: both named, exit 2, before MPI starts.
[[ $(run --variable_update=parameter_server --allreduce_alg=hierarchical) == 2 ]] \
  || fail "parameter_server + hierarchical: exit code"
grep -q '^dljob-train: error: --allreduce_alg=hierarchical .*--variable_update=parameter_server' \
  "$tmp/err" || fail "parameter_server + hierarchical: message"
[[ $(run --hierarchical_local_size=2) == 2 ]] || fail "--hierarchical_local_size alone"
grep -q -- '--allreduce_alg=hierarchical' "$tmp/err" || fail "--hierarchical_local_size: message"

! grep -qi 'terminate\|backtrace\|exception' "$tmp/err" || fail "stack trace on stderr"
if [[ -n $mpirun ]]; then  # all ranks fail together; exactly one of them says why
  "$mpirun" --allow-run-as-root --oversubscribe -np 2 "$train" --data_dir=/nonexistent/fmnist \
    >"$tmp/out" 2>"$tmp/err"
  [[ $? == 2 ]] || fail "2 ranks, missing data: exit code"
  [[ $(grep -c '^dljob-train: error: ' "$tmp/err") == 1 ]] || fail "2 ranks: not exactly one error"
  # Simulated nodes must divide the ranks: every rank refuses, one says why.
  "$mpirun" --allow-run-as-root --oversubscribe -np 3 -x OMP_NUM_THREADS=1 "$train" \
    --data_name=synthetic --num_batches=1 --allreduce_alg=hierarchical \
    --hierarchical_local_size=2 >"$tmp/out" 2>"$tmp/err"
  [[ $? == 2 ]] || fail "hierarchical on 3 ranks by 2: exit code"
  [[ $(grep -c '^dljob-train: error: --allreduce_alg=hierarchical: ' "$tmp/err") == 1 ]] \
    || fail "hierarchical on 3 ranks by 2: not exactly one error"
fi
echo PASS
