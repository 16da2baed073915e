# Shared by the multi-rank shell tests: source it after setting `train` and `mpirun`.
#   require_fashion_mnist   skip (exit 77) when dataset-fashion-mnist is not installed
#   tmp                     a private directory, removed on exit
#   on_ranks N ARGS...      runs dljob-train ARGS on N MPI ranks, one thread each
fashion_mnist=/usr/share/datasets/fashion-mnist

require_fashion_mnist() {
  if [[ ! -e $fashion_mnist/train-images-idx3-ubyte.gz ]]; then
    echo "SKIP: dataset-fashion-mnist is not installed"
    exit 77
  fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

on_ranks() {
  local ranks=$1
  shift
  "$mpirun" --allow-run-as-root --oversubscribe -np "$ranks" -x OMP_NUM_THREADS=1 "$train" "$@"
}
