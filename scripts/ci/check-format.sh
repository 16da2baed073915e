#!/usr/bin/env bash
# Fails (exit 1) when a C++ file of the checkout (tracked, or new and not ignored) differs from
# what clang-format makes of it with the root .clang-format, naming each file and how many places
# drift. Changes nothing. Needs Debian's clang-format 14 (scripts/dev/setup.sh installs it): other
# versions format some constructs differently, so CLANG_FORMAT=... may name another binary only
# at your own risk. Fix a file with `clang-format -i FILE`.
#   scripts/ci/check-format.sh [-v]     # -v: also print clang-format's diagnostics
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
verbose=0
[ "${1:-}" = -v ] && verbose=1

cf="${CLANG_FORMAT:-}"
if [ -z "$cf" ]; then
  for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null 2>&1; then cf="$c"; break; fi
  done
fi
[ -n "$cf" ] || die --exit 2 "clang-format not found; run scripts/dev/setup.sh (Debian package clang-format)"
version=$("$cf" --version | sed -nE 's/.*version ([0-9]+)\..*/\1/p')
if [ "$version" != 14 ] && [ -z "${CLANG_FORMAT:-}" ]; then
  die --exit 2 "$cf is version ${version:-?}, the tree is formatted with 14 (scripts/dev/setup.sh)"
fi

export CF="$cf"
cxx_files
files=("${CXX_FILES[@]}")

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# Two processes halve the time on the 2-core machines; each batch of files logs to its own file
# (so diagnostics never interleave) and leaves a .failed mark if clang-format itself failed.
printf '%s\0' "${files[@]}" | xargs -0 -P 2 -n 48 sh -c '
  log=$(mktemp -p "$0" batch.XXXXXX)
  "$CF" --dry-run -Werror --style=file "$@" 2>"$log" ||
    grep -q "clang-format-violations" "$log" || mv "$log" "$log.failed"' "$logs" || true

if ls "$logs"/*.failed >/dev/null 2>&1; then
  cat "$logs"/*.failed >&2
  die --exit 2 "clang-format failed (above)"
fi
# Diagnostics read "file:line:col: error: code should be clang-formatted [...]", then the line.
drift=$(cat "$logs"/batch.* | { grep -E '^[^ :]+:[0-9]+:[0-9]+: error: .*clang-format-violations' || true; } |
  cut -d: -f1 | sort | uniq -c | awk '{ printf "%s: %d place(s) differ from clang-format\n", $2, $1 }')
if [ -n "$drift" ]; then
  [ "$verbose" = 1 ] && cat "$logs"/batch.*
  echo "$drift"
  n=$(echo "$drift" | wc -l)
  die "$n of ${#files[@]} files drift from .clang-format; fix with: clang-format -i FILE... (or -v to see where)"
fi
say "ok (${#files[@]} files match .clang-format)"
