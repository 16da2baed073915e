#!/usr/bin/env bash
# Runs the ctest suite several times in a row on a deliberately busy machine, to check a suspected
# flaky test: CPU-burning processes run beside every run, as on a loaded CI machine. Stops at the
# first run with a failure and says which tests failed in which run.
#
# Usage: scripts/dev/stress-test.sh [-n RUNS] [-k BURNERS] [-j JOBS] [-R REGEX] [-E REGEX]
#                               [--build-dir DIR]
#   -n RUNS       runs of the suite in a row (default 3)
#   -k BURNERS    CPU-burning processes beside it (default 2)
#   -j JOBS       tests ctest runs at once (default: the number of CPUs)
#   -R REGEX      only tests whose name matches (ctest -R)
#   -E REGEX      leave out tests whose name matches (ctest -E)
#   --build-dir   the configured and built build directory (default build)
# Tests labelled "container" are left out unless DLJOB_IMAGE_TESTS=1 (as in scripts/test.sh).
# It builds nothing: build first (scripts/dev/build.sh). Each run's ctest output is kept in a log
# directory, printed at the end and removed when every run passed.
# Exit codes: 0 every run passed, 1 a run failed, 2 bad usage or no build directory.
#
# Examples:
#   scripts/dev/stress-test.sh                                  # the whole suite, 3 runs, 2 burners
#   scripts/dev/stress-test.sh -R 'LoaderTest' -n 10 -k 4       # one suspect, harder
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
RUNS=3
BURNERS=2
JOBS="$(nproc)"
BUILD_DIR="$ROOT/build"
FILTER=()
bad() { die --exit 2 "$@"; }
while [ $# -gt 0 ]; do
  case "$1" in
    -n) RUNS="${2:?-n needs a number}"; shift 2 ;;
    -k) BURNERS="${2:?-k needs a number}"; shift 2 ;;
    -j) JOBS="${2:?-j needs a number}"; shift 2 ;;
    -R | -E) FILTER+=("$1" "${2:?$1 needs a regular expression}"); shift 2 ;;
    --build-dir) BUILD_DIR="${2:?--build-dir needs a directory}"; shift 2 ;;
    -h | --help) show_help; exit 0 ;;
    *) bad "unknown argument '$1' (see --help)" ;;
  esac
done
for n in "$RUNS" "$BURNERS" "$JOBS"; do
  [[ "$n" =~ ^[0-9]+$ ]] || bad "'$n' is not a number"
done
[ "$RUNS" -ge 1 ] || bad "-n must be at least 1"
[ "$JOBS" -ge 1 ] || bad "-j must be at least 1"
[ -f "$BUILD_DIR/CTestTestfile.cmake" ] ||
  bad "$BUILD_DIR is not a configured build directory (run scripts/dev/build.sh first)"
LABELS=(-LE container)
if [ "${DLJOB_IMAGE_TESTS:-0}" = 1 ]; then LABELS=(); fi

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/dljob-stress.XXXXXX")"
BURNER_PIDS=()
CTEST_PID=""
# Stops the burners, each by the PID it was started with. Runs on every exit: success, failure,
# Ctrl-C and TERM.
stop_burners() {
  local pid
  for pid in "${BURNER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${BURNER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  BURNER_PIDS=()
}
# On INT or TERM: passes the signal to the running ctest and its tests (their own process group,
# so a TERM sent to this script alone reaches them too), gives them 10 s, then KILLs the group.
on_signal() {
  echo "stress-test: $1: stopping ctest; logs in $LOGS" >&2
  if [ -n "$CTEST_PID" ]; then
    kill -"$1" -- "-$CTEST_PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$CTEST_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$CTEST_PID" 2>/dev/null || true
    wait "$CTEST_PID" 2>/dev/null || true
  fi
  exit "$2"
}
trap stop_burners EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM

# A burner spins in the shell and checks every ~100k iterations that this script still lives (not
# gone, not a zombie), so one left behind by a script killed with SIGKILL (no trap runs) ends by
# itself within a second.
for ((i = 0; i < BURNERS; i++)); do
  sh -c 'while read -r _ _ state _ <"/proc/$1/stat" && [ "$state" != Z ]; do
           i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done
         done 2>/dev/null' stress-burner "$$" &
  BURNER_PIDS+=("$!")
done
echo "stress-test: $RUNS run(s) of ctest -j $JOBS ${FILTER[*]:-(all tests)} beside $BURNERS" \
  "CPU burner(s) (pids ${BURNER_PIDS[*]:-none}) on $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

START=$SECONDS
for ((run = 1; run <= RUNS; run++)); do
  log="$LOGS/run-$run.log"
  run_start=$SECONDS
  # In the background so that a signal to this script is handled at once (see on_signal), in a
  # process group of its own (setsid), with SIGINT at its default (a background command of a
  # script would otherwise ignore it, and so would every test it runs).
  (
    trap - INT QUIT
    exec setsid ctest --test-dir "$BUILD_DIR" -j "$JOBS" --timeout 600 --output-on-failure \
      --no-tests=error "${LABELS[@]}" "${FILTER[@]}" </dev/null >"$log" 2>&1
  ) &
  CTEST_PID=$!
  code=0
  wait "$CTEST_PID" || code=$?
  CTEST_PID=""
  summary="$(grep -E '^[0-9]+% tests passed' "$log" | tail -1 || true)"
  echo "stress-test: run $run/$RUNS: ${summary:-no summary (ctest exited $code)}" \
    "[$((SECONDS - run_start))s]"
  if [ "$code" != 0 ]; then
    # ctest ends with "The following tests FAILED:" and lines like "  12 - name (Failed)".
    failed="$(sed -n '/^The following tests FAILED:/,$p' "$log" |
      sed -n 's/^[[:space:]]*[0-9]\{1,\} - \(.*\)$/\1/p')"
    if [ -n "$failed" ]; then
      echo "stress-test: failed in run $run:"
      sed 's/^/  /' <<<"$failed"
    else
      echo "stress-test: ctest exited $code in run $run:"
      tail -5 "$log" | sed 's/^/  | /'
    fi
    echo "stress-test: FAILED in run $run of $RUNS with $BURNERS burner(s)" \
      "[$((SECONDS - START))s]; full output: $log"
    exit 1
  fi
done
echo "stress-test: PASSED $RUNS of $RUNS run(s) with $BURNERS burner(s)," \
  "$(grep -oE '[0-9]+$' <<<"$summary" || echo '?') tests each [$((SECONDS - START))s]"
rm -rf "$LOGS"
