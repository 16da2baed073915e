#!/usr/bin/env bash
# The local demo: installs what dljob needs, builds it, and trains the Fashion-MNIST CNN on 2 MPI
# ranks on this machine (examples/mnist-job.yaml), then shows the job's record.
#
# The set-up stages (packages, configure, build) each show one progress line — redrawn in place
# on a terminal, a few plain lines otherwise — while the package manager's and the compiler's
# output goes to the log files named at the start (build/demo-setup.log, build/demo-build.log).
# A stage that fails prints the end of its log and the log's path. The job's own output is shown
# as it runs, as `dljob submit` prints it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build}
mkdir -p "$BUILD_DIR"
SETUP_LOG=$BUILD_DIR/demo-setup.log
BUILD_LOG=$BUILD_DIR/demo-build.log
: >"$SETUP_LOG"
: >"$BUILD_LOG"

TTY=0
[ -t 1 ] && TTY=1
COLS=$(tput cols 2>/dev/null || echo 80)
EXIT_MARK="@@dljob-demo-exit-status@@ "

# CLOCK="M:SS" or "H:MM:SS" for $1 seconds.
clock() {
  local s=$1
  if ((s >= 3600)); then
    printf -v CLOCK '%d:%02d:%02d' $((s / 3600)) $((s / 60 % 60)) $((s % 60))
  else
    printf -v CLOCK '%d:%02d' $((s / 60)) $((s % 60))
  fi
}

# The stage's line, redrawn in place and cut to the terminal's width (terminal only); unchanged
# text is not drawn again.
SHOWN=""
show() {
  local text=${1:0:$((COLS - 1))}
  [ "$text" = "$SHOWN" ] && return
  SHOWN=$text
  printf '\r\033[K%s' "$text"
}

# follow LABEL LOG START: reads a stage's output (stdin) into LOG and shows how far the stage got:
# ninja's "[N/M]" once the build has started, else the last line (apt's, cmake's). On a terminal
# the line is redrawn as output arrives and every second; otherwise only each further tenth of
# the build is printed. Ends with the stage's result and returns its exit status (EXIT_MARK).
follow() {
  local label=$1 log=$2 start=$3
  local line partial="" detail="" summary="" building=0 tenth=0 rc=1 status n t
  while :; do
    if IFS= read -r -t 1 line; then status=0; else status=$?; fi
    if ((status > 128)); then  # a second without a whole line: keep what came, redraw the clock
      partial+=$line
      clock $((SECONDS - start))
      [ "$TTY" = 1 ] && show "$label  $CLOCK  $detail"
      continue
    fi
    line=$partial$line
    partial=""
    if ((status != 0)) && [ -z "$line" ]; then break; fi  # end of output
    if [[ $line == "$EXIT_MARK"* ]]; then
      rc=${line#"$EXIT_MARK"}
      continue
    fi
    printf '%s\n' "$line" >>"$log"
    if [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\  ]]; then  # ninja's status: "[12/240] Building CXX …"
      n=${BASH_REMATCH[1]} t=${BASH_REMATCH[2]}
      building=1
      detail="$n/$t"
      summary="$t steps"
      if [ "$TTY" = 0 ] && ((n * 10 / t > tenth)); then
        tenth=$((n * 10 / t))
        echo "$label: $detail"
      fi
    elif [[ $line == "ninja: no work to do." ]]; then
      detail="up to date"
      summary=$detail
    elif [ "$building" = 0 ]; then
      detail=$line
    fi
    clock $((SECONDS - start))
    [ "$TTY" = 1 ] && show "$label  $CLOCK  $detail"
    if ((status != 0)); then break; fi
  done
  clock $((SECONDS - start))
  [ "$TTY" = 1 ] && printf '\r\033[K'
  if [ "$rc" = 0 ]; then
    echo "$label: done in $CLOCK${summary:+ ($summary)}"
    return 0
  fi
  echo "$label: FAILED after $CLOCK (exit status $rc). The end of $log:"
  tail -n 30 "$log" | sed 's/^/    /'
  echo "The whole log: $log"
  return "$rc"
}

# stage LABEL LOG COMMAND…: runs COMMAND with its output appended to LOG, showing one line for it.
stage() {
  local label=$1 log=$2
  shift 2
  if [ "$TTY" = 1 ]; then show "$label"; else echo "$label ..."; fi
  local rc
  { "$@" 2>&1 && rc=0 || rc=$?; echo "$EXIT_MARK$rc"; } | follow "$label" "$log" "$SECONDS"
}

echo "dljob demo: set-up output goes to $SETUP_LOG and $BUILD_LOG"
stage "[1/4] Installing packages" "$SETUP_LOG" bash scripts/dev/setup.sh
stage "[2/4] Configuring the build" "$BUILD_LOG" bash scripts/dev/build.sh --configure
export NINJA_STATUS="[%f/%t] "  # the progress follow() reads
stage "[3/4] Building dljob and dljob-train" "$BUILD_LOG" bash scripts/dev/build.sh dljob dljob-train
echo "[4/4] Training Fashion-MNIST on 2 local MPI ranks (examples/mnist-job.yaml)"
echo

DLJOB=$BUILD_DIR/bin/dljob
$DLJOB delete mnist --ignore-not-found >/dev/null
$DLJOB submit --local -f examples/mnist-job.yaml
echo
$DLJOB list -o wide
echo
echo "The whole record: $DLJOB get mnist -o json   logs: $DLJOB logs mnist [--rank 1]"
