# shellcheck shell=bash
# What the dljob scripts share (sourced, never run). A script sources it by its own path:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"     # from scripts/dev/, scripts/ci/, ...
# and may set PROG first (the name its messages start with; default: the script's file name
# without .sh). Sourcing changes nothing but variables and functions; `cd "$ROOT"` is the
# script's own choice.
#
#   ROOT                  the checkout's root, absolute
#   PROG                  the name messages start with ("build-image: ...")
#   SUDO                  "" when running as root, else "sudo" (for apt-get and the like)
#   say MSG...            PROG: MSG
#   warn MSG...           PROG: warning: MSG, on stderr
#   die [--exit N] MSG... PROG: MSG on stderr, then the last 25 lines of $FAILED_LOG when that
#                         names a file, and exits N (default 1)
#   need_command CMD WHAT exits 2 saying "CMD not found; WHAT" unless CMD is on PATH
#   step MSG...           PROG: [Ns] MSG (N: seconds since the script began) and starts timing
#                         the step MSG, ending the one before it
#   run_step NAME CMD...  runs CMD as the step NAME, printing its status and seconds when it
#                         ends; returns CMD's status
#   step_times            the table of every step's seconds so far (ends the open step)
#   show_help             the script's header comment (its lines 2.. up to the first non-#)
#   cmake_args            CMAKE_ARGS=(-G Ninja when ninja is installed, ccache as the compiler
#                         launcher when it is on PATH, shared between clones): the generator and
#                         launcher every build directory is configured with
#   cxx_files             CXX_FILES=(every C++ file of the checkout: tracked, or new and not
#                         ignored)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROG="${PROG:-$(basename "$0" .sh)}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
DLJOB_T0=${DLJOB_T0:-$SECONDS}

say() { echo "$PROG: $*"; }
warn() { echo "$PROG: warning: $*" >&2; }

die() {
  local code=1
  if [ "${1:-}" = --exit ]; then code=$2; shift 2; fi
  echo "$PROG: $*" >&2
  if [ -n "${FAILED_LOG:-}" ] && [ -f "$FAILED_LOG" ]; then
    echo "$PROG: last lines of $FAILED_LOG:" >&2
    tail -n 25 "$FAILED_LOG" | sed 's/^/    /' >&2
  fi
  exit "$code"
}

need_command() {
  command -v "$1" >/dev/null 2>&1 || die --exit 2 "$1 not found; $2"
}

STEP_TIMES=()
_step_name=""
_step_start=0
_step_end() {
  [ -n "$_step_name" ] || return 0
  STEP_TIMES+=("$(printf '%5ds  %s' $((SECONDS - _step_start)) "$_step_name")")
  _step_name=""
}
step() {
  _step_end
  _step_name="$*"
  _step_start=$SECONDS
  echo "$PROG: [$((SECONDS - DLJOB_T0))s] $*"
}
run_step() {
  local name=$1 start=$SECONDS rc=0 secs result=ok
  shift
  _step_end
  echo "=== $PROG: $name ($(date -u +%H:%M:%S))"
  "$@" || rc=$?
  secs=$((SECONDS - start))
  [ "$rc" = 0 ] || result="FAILED (exit $rc)"
  STEP_TIMES+=("$(printf '%5ds  %s' "$secs" "$name")$([ "$rc" = 0 ] || echo "  $result")")
  echo "=== $PROG: $name: $result in ${secs}s"
  return "$rc"
}
step_times() {
  _step_end
  [ ${#STEP_TIMES[@]} -gt 0 ] || return 0
  echo "$PROG: seconds per step ($((SECONDS - DLJOB_T0))s in all):"
  printf '%s\n' "${STEP_TIMES[@]}"
}

show_help() { sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; }

cmake_args() {
  CMAKE_ARGS=()
  if command -v ninja >/dev/null 2>&1; then CMAKE_ARGS+=(-G Ninja); fi
  # Paths under the checkout are hashed relative to it (CCACHE_BASEDIR) and the build directory's
  # own path not at all (CCACHE_NOHASHDIR, which -g would otherwise add), so a clone in another
  # folder, CI's included, reuses what any other clone compiled.
  if command -v ccache >/dev/null 2>&1; then
    CMAKE_ARGS+=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$ROOT;CCACHE_NOHASHDIR=1;ccache")
  fi
}

cxx_files() {
  CXX_FILES=()
  local f
  while IFS= read -r f; do
    [ -f "$ROOT/$f" ] && CXX_FILES+=("$f")
  done < <(git -C "$ROOT" ls-files --cached --others --exclude-standard -- '*.h' '*.cc' | sort -u)
}
