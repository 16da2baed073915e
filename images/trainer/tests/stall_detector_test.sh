#!/bin/bash
# A rank that stops taking part must end the job, not hang it, and the job must say which rank.
#  1. SIGSTOP rank 1 mid-run (alive but silent, as a wedged or cut-off rank is): rank 0's stall
#     detector must exit non-zero after --stall_timeout, naming rank 1.
#  2. SIGKILL rank 1 mid-run: the job exits non-zero and its stderr names rank 1 (mpirun or the
#     detector, whichever notices first).
# The waits below are failure limits, not timing assertions.
# Usage: stall_detector_test.sh <dljob-train> <mpirun>
set -uo pipefail
train=$1
mpirun=$2
source "$(dirname "$0")/test_lib.sh"
timeout_s=5
limit_s=$((timeout_s + 60))
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- stderr"; cat "$tmp/err"; echo "--- stdout (tail)"; tail -5 "$tmp/out"; exit 1; }

# Waits up to $2 seconds for a line matching $1 in $tmp/out.
wait_for_output() {
  for ((i = 0; i < $2 * 10; i++)); do
    grep -qs "$1" "$tmp/out" && return 0
    sleep 0.1
  done
  return 1
}

# The PID of the rank-$1 process started by mpirun $2 (from the rank in its environment).
rank_pid() {
  for p in $(pgrep -P "$2"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

scenario() {  # <signal>
  rm -f "$tmp/out" "$tmp/err"  # the new job's, not the last one's, are waited for below
  "$mpirun" --allow-run-as-root --oversubscribe -np 2 -x OMP_NUM_THREADS=1 "$train" \
    --model=mnist_cnn --data_name=synthetic --batch_size=8 --num_batches=1000000 \
    --num_warmup_batches=0 --display_every=1 --eval=false --stall_timeout=$timeout_s \
    >"$tmp/out" 2>"$tmp/err" &
  local mp=$!
  pids+=("$mp")
  wait_for_output '"step":5,' 120 || fail "$1: the job never reached step 5"
  local victim
  victim=$(rank_pid 1 "$mp") || fail "$1: no rank-1 process under mpirun"
  pids+=("$victim")
  kill "-$1" "$victim"
  for ((i = 0; i < limit_s * 10; i++)); do
    kill -0 "$mp" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$mp" 2>/dev/null && fail "$1: the job still runs $limit_s s after rank 1 stopped"
  wait "$mp"
  code=$?
  [[ $code != 0 ]] || fail "$1: the job exited 0"
  ! kill -0 "$victim" 2>/dev/null || kill -KILL "$victim"
  pids=()  # both are gone; their PIDs may be reused
}

scenario STOP
line=$(grep '^dljob-train: rank 0 waited ' "$tmp/err") || fail "STOP: no stall message from rank 0"
echo "$line"
[[ $line =~ ': rank 1 has '.*'; exiting'$ ]] || fail "STOP: the stall message does not name rank 1"
[[ $line =~ '(step '[0-9]+'):' ]] || fail "STOP: the stall message gives no step"

scenario KILL
grep -q 'rank 1' "$tmp/err" || fail "KILL: stderr does not name rank 1"
echo PASS
