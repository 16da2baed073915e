# Shared by the multi-rank shell tests: source it after setting `train` and `mpirun`.
#   require_fashion_mnist   skip (exit 77) when dataset-fashion-mnist is not installed
#   tmp                     a private directory, removed on exit
#   on_ranks N ARGS...      runs dljob-train ARGS on N MPI ranks, one thread each
#   untangle FILE           puts back together, in place, rank 0's lines that another rank's
#                           metric line was printed into the middle of (see below)
#   params_close A B [N]    fails unless two --dump_params files hold the same float32 values
#                           within 1e-6 relative (and N of them, when N is given)
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

# mpirun forwards each rank's output from a pseudo-terminal, and the terminal hands a line over
# in pieces at every tab (the kernel's output processing), so another rank's line can land in the
# middle of one of rank 0's tab-separated lines ("loss\t6\t" + "DLJOB_METRIC {...}\n" +
# "1.79\n"). Metric lines hold no tab and arrive whole; untangle moves each one that starts
# inside a line to before that line, until none does.
untangle() {
  perl -0pi -e '1 while s/([^\n]+?)(DLJOB_METRIC \{[^\n]*\}\n)/$2$1/' "$1"
}

params_close() {
  python3 - "$1" "$2" "${3:-0}" <<'PY'
import array, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read())
b.frombytes(open(sys.argv[2], 'rb').read())
want = int(sys.argv[3])
assert len(a) == len(b) > 0 and (want == 0 or len(a) == want), (len(a), len(b), want)
worst = max(abs(x - y) / (1e-6 + abs(x)) for x, y in zip(a, b))
print(f"max relative parameter difference: {worst:.3g}")
sys.exit(0 if worst <= 1e-6 else 1)
PY
}
