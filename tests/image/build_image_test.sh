#!/usr/bin/env bash
# scripts/cluster/build-image.sh's checks of the host-built programs it is given (--check: no
# podman, no image), each on a build directory made here with a stand-in dljob-operator:
#   1. a directory without the program: exit 4, naming what is missing and what to run;
#   2. a Ninja build directory whose program is current (ninja -n: no work to do): exit 0,
#      printing the directory, that it is up to date, and the program's build time;
#   3. the same after the program's source changed: exit 4, "older than their sources", with the
#      pending step;
#   4. a program that links a shared library from outside /lib and /usr/lib (through its
#      RUNPATH, as dljob-train links libcudart from /usr/local/cuda when NCCL is built in):
#      exit 4, naming the library and the directory it lies in;
#   5. the same program with its library gone: exit 4, naming the library not found;
#   6. bad arguments: exit 2.
# Needs ninja and a C compiler (cc), as building dljob does. Exit codes: 0 pass, 1 fail.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_IMAGE="$ROOT/scripts/cluster/build-image.sh"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for tool in ninja cc; do
  command -v "$tool" >/dev/null 2>&1 || { echo "FAIL: $tool not found; this test needs it"; exit 1; }
done
TMP="$(mktemp -d "${TMPDIR:-/tmp}/dljob-build-image-test.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# Runs build-image.sh --check --image operator --from-build DIR; sets rc and out (both streams).
check() {
  out="$(bash "$BUILD_IMAGE" --check --image operator --from-build "$1" 2>&1)"
  rc=$?
}
indent() { sed 's/^/    /'; }
# Expects exit code $1 and the extended regular expression $2 in the output, for case $3.
expect() {
  if [ "$rc" != "$1" ]; then
    fail "$3: exit $rc, expected $1; output:"
    indent <<<"$out"
  elif ! grep -Eq -- "$2" <<<"$out"; then
    fail "$3: no '$2' in the output:"
    indent <<<"$out"
  fi
}

# 1.
mkdir -p "$TMP/empty/bin"
check "$TMP/empty"
expect 4 "lacks some of dljob-operator.*--build-programs --image operator" "1. no program"

# 2. A Ninja build whose one step copies a stand-in program (a dynamic executable linking libc
# only) to bin/dljob-operator.
dir="$TMP/ninja"
mkdir -p "$dir/src"
cp "$(type -P true)" "$dir/src/program"
cat >"$dir/build.ninja" <<'NINJA'
rule copy
  command = cp $in $out
build bin/dljob-operator: copy src/program
build dljob-operator: phony bin/dljob-operator
NINJA
ninja -C "$dir" -v >/dev/null || fail "2. ninja could not build the stand-in"
check "$dir"
expect 0 "programs from $dir, up to date \(ninja -n: no work to do\)" "2. current program"
expect 0 "dljob-operator +built [0-9]{4}-[0-9]{2}-[0-9]{2} " "2. current program's build time"

# 3.
touch -d "@$(($(date +%s) + 5))" "$dir/src/program"
check "$dir"
expect 4 "older than their sources: ninja -n lists 1 step\(s\) pending, e.g. '\[1/1\] cp src/program" \
  "3. a newer source"

# 4. A program linked against a library in the build tree, found through its RUNPATH.
dir="$TMP/runpath"
mkdir -p "$dir/bin" "$dir/lib"
echo 'int dljob_stand_in(void) { return 0; }' >"$TMP/lib.c"
echo 'int dljob_stand_in(void); int main(void) { return dljob_stand_in(); }' >"$TMP/main.c"
cc -shared -fPIC -o "$dir/lib/libdljobstandin.so" "$TMP/lib.c" || fail "4. cc could not build the library"
cc -o "$dir/bin/dljob-operator" "$TMP/main.c" -L"$dir/lib" -ldljobstandin -Wl,-rpath,"$dir/lib" ||
  fail "4. cc could not build the stand-in"
check "$dir"
expect 4 "links libdljobstandin.so \($dir/lib/libdljobstandin.so\), outside the distribution's /lib and /usr/lib" \
  "4. a library outside /lib and /usr/lib"
expect 4 "-DDLJOB_WITH_NCCL=OFF" "4. what to run"

# 5.
rm "$dir/lib/libdljobstandin.so"
check "$dir"
expect 4 "lacks shared libraries on this machine: libdljobstandin.so => not found" "5. a library not found"

# 6.
for args in "--image gpu --check" "--from-build" "--frobnicate"; do
  # shellcheck disable=SC2086
  out="$(bash "$BUILD_IMAGE" $args 2>&1)"
  rc=$?
  expect 2 "." "6. build-image.sh $args"
done

if [ "$failures" -gt 0 ]; then
  echo "$failures problem(s) in build-image.sh's checks"
  exit 1
fi
echo "PASS: build-image.sh refuses missing, out-of-date and wrongly linked programs (exit 4) and takes current ones"
