#!/usr/bin/env bash
# Runs the README's "A short tour of the CLI" block as the README shows it, line by line, so a
# green CI means the tour works too: each line of its ```sh block, as written, with this build's
# build/bin first on PATH (as the README says to put it), in a scratch directory holding a copy
# of examples/ (the tour's `advise --apply` writes into its job file) and with HOME there (the
# local job records, and no kubeconfig: the tour is the local backend's). Run after the build
# (scripts/demo.sh or scripts/test.sh). Prints each line before it runs; exits 1 at the first
# that fails, 0 when every one succeeded. Everything it starts ends with its commands.
#
# Usage: scripts/ci/check-readme-tour.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
BIN="$ROOT/${1:-build}/bin"
[ -x "$BIN/dljob" ] || { echo "check-readme-tour: no $BIN/dljob; build first (bash scripts/demo.sh)" >&2; exit 1; }

# The tour's block: the first ```sh fence after its heading, up to the closing fence.
mapfile -t LINES < <(awk '/^## A short tour of the CLI/{t=1} t&&/^```sh/{b=1;next} b&&/^```/{exit} b' README.md)
[ "${#LINES[@]}" -gt 0 ] || { echo "check-readme-tour: README.md has no tour block" >&2; exit 1; }

SCRATCH="$(mktemp -d /tmp/dljob-readme-tour.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
cp -r "$ROOT/examples" "$SCRATCH/examples"
cd "$SCRATCH"
export HOME="$SCRATCH" PATH="$BIN:$PATH"
unset KUBECONFIG XDG_STATE_HOME
for line in "${LINES[@]}"; do
  [ -n "${line// /}" ] || continue
  shown="${line%%#*}"
  echo "check-readme-tour: \$ ${shown%"${shown##*[! ]}"}"
  bash -c "$line" || { echo "check-readme-tour: FAIL: $line" >&2; exit 1; }
done
echo "check-readme-tour: ok (${#LINES[@]} lines of README.md's tour)"
