#!/usr/bin/env bash
# The sanitizer and thread-safety configuration: builds the tests of the code that reads untrusted
# bytes (job files, metric lines, volume URIs, shards, HTTP requests) with clang++ under
# AddressSanitizer and UndefinedBehaviorSanitizer (any report fails the run) and with Clang's
# thread-safety analysis as an error, in its own build directory (build-asan/; LibTorch and the
# trainer are left out, the benchmarks are configured for step 3 but not built), then runs them:
#   base_test          Status, time, Env, Mutex
#   jobs_test          the DLJob codec, defaults, validation, metric lines, volume sources
#   storage_test       shards and IDX files, including shard_fuzz_test (every byte flipped, every
#                      truncation)
#   http_server_test   the HTTP/1.1 request parser and server, threads and all
#   http_client_test   the HTTP/1.1 client (socket_client.h): pooled connections, TLS, proxies,
#                      streams cancelled from another thread
#   job_parse_fuzzer   the libFuzzer target of jobs/fuzz, replaying its committed corpus once
#   http_parse_fuzzer  the same for http/fuzz (response and request heads, chunked bodies)
# First it proves the analysis is on: a snippet that reads a GUARDED_BY member without its lock
# must fail to compile.
#
#   scripts/ci/check-sanitizers.sh          # JOBS=N sets the build parallelism (default: nproc)
#
# Measured beside other builds at nice 19 (load 3-4 on 2 cores): about 7-8 min from an empty
# build-asan/, nearly all of it compiling; the thread-safety parse of ~48 units takes ~2 min of
# that, the tests seconds. Expect less on an idle machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
BUILD_DIR=${ASAN_BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
TARGETS=(base_test jobs_test storage_test http_server_test http_client_test job_parse_fuzzer
         http_parse_fuzzer)
start=$(date +%s)

CXX=${ASAN_CXX:-clang++}
need_command "$CXX" "run scripts/dev/setup.sh (Debian package clang)"

# 1. The thread-safety analysis rejects an unguarded access (else the annotations check nothing).
probe=$(mktemp --suffix=.cc)
trap 'rm -f "$probe"' EXIT
cat >"$probe" <<'EOF'
#include "base/mutex.h"
struct Counter {
  dljob::Mutex mu;
  int n GUARDED_BY(mu) = 0;
  int Locked() { dljob::MutexLock lock(mu); return n; }
  int Unlocked() { return n; }  // must not compile
};
int main() { Counter c; return c.Locked() + c.Unlocked(); }
EOF
if "$CXX" -std=c++20 -I. -fsyntax-only -Wthread-safety -Werror=thread-safety "$probe" 2>/dev/null; then
  die "an unguarded read of a GUARDED_BY member compiled: the thread-safety analysis is off"
fi
sed -i 's/return n; }  \/\/ must not compile/dljob::MutexLock lock(mu); return n; }/' "$probe"
if ! "$CXX" -std=c++20 -I. -fsyntax-only -Wthread-safety -Werror=thread-safety "$probe"; then
  die "a correctly locked read did not compile (above)"
fi
say "thread-safety analysis rejects unguarded access"

# 2. Configure.
flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
flags+=" -Wthread-safety -Werror=thread-safety"
cmake_args
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  mkdir -p "$BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DDLJOB_BUILD_TRAINER=OFF -DDLJOB_BUILD_BENCH=ON >"$BUILD_DIR/configure.log" 2>&1 || {
    cat "$BUILD_DIR/configure.log" >&2
    die "configuring $BUILD_DIR failed (above)"
  }
elif grep -q '^DLJOB_BUILD_BENCH:BOOL=OFF' "$BUILD_DIR/CMakeCache.txt"; then
  # Configured before the benchmarks were: add them, so step 3 parses them too.
  cmake -S . -B "$BUILD_DIR" -DDLJOB_BUILD_BENCH=ON >"$BUILD_DIR/configure.log" 2>&1 || {
    cat "$BUILD_DIR/configure.log" >&2
    die "reconfiguring $BUILD_DIR with the benchmarks failed (above)"
  }
fi

# 3. The thread-safety analysis over every translation unit (LibTorch's aside) that reaches
#    base/mutex.h, built here or not: the annotated state of the operator, the test API server and
#    the CLI is checked too, at the cost of a parse (-fsyntax-only) each.
python3 - "$BUILD_DIR" "$JOBS" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys, time
t0 = time.time()
build_dir, jobs = sys.argv[1], int(sys.argv[2])
root = os.getcwd()
inc = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
memo = {}
def reaches(path, stack=()):
    if path in ("base/mutex.h", "base/thread_annotations.h"):
        return True
    if path in memo or path in stack or not os.path.isfile(path):
        return memo.get(path, False)
    with open(path, errors="replace") as f:
        found = any(reaches(h, stack + (path,)) for h in inc.findall(f.read()))
    memo[path] = found
    return found
units, seen = [], set()
for e in json.load(open(os.path.join(build_dir, "compile_commands.json"))):
    rel = os.path.relpath(os.path.realpath(os.path.join(e["directory"], e["file"])), root)
    if rel in seen or rel.startswith("..") or not reaches(rel):
        continue
    seen.add(rel)
    args = shlex.split(e["command"])
    out, skip = [], False
    for a in args[1:]:  # drop the launcher, the output and the source
        if skip:
            skip = False
        elif a in ("-o", "-c", "-MF", "-MT"):
            skip = True
        elif a not in ("-MD", e["file"]):
            out.append(a)
    if args[0].endswith("ccache"):
        out = out[1:]
    units.append((rel, e["directory"], out))
def check(unit):
    rel, directory, flags = unit
    p = subprocess.run([os.environ.get("ASAN_CXX", "clang++")] + flags +
                       ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety",
                        os.path.join(root, rel)], cwd=directory, capture_output=True, text=True)
    return rel, p.returncode, p.stderr
bad = []
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for rel, rc, err in pool.map(check, units):
        if rc != 0:
            bad.append(rel)
            sys.stderr.write(err)
if bad:
    print("check-sanitizers: thread-safety analysis failed in: " + " ".join(bad), file=sys.stderr)
    sys.exit(1)
print("check-sanitizers: thread-safety analysis clean in %d translation units using base/mutex.h "
      "(%.0f s)" % (len(units), time.time() - t0))
PY

# 4. Build the sanitized tests.
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"
built=$(date +%s)

# 5. Run. A sanitizer report aborts the test binary, so any report fails this script.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=()
for t in base_test jobs_test storage_test http_server_test http_client_test; do
  say "$t"
  "$BUILD_DIR/bin/$t" --gtest_brief=1 || failed+=("$t")
done
say "job_parse_fuzzer over jobs/fuzz/corpus"
"$BUILD_DIR/bin/job_parse_fuzzer" -runs=0 -rss_limit_mb=2048 -timeout=10 jobs/fuzz/corpus ||
  failed+=(job_parse_fuzzer)
say "http_parse_fuzzer over http/fuzz/corpus"
"$BUILD_DIR/bin/http_parse_fuzzer" -runs=0 -rss_limit_mb=2048 -timeout=10 http/fuzz/corpus ||
  failed+=(http_parse_fuzzer)

end=$(date +%s)
say "build $((built - start)) s, tests $((end - built)) s"
if [ ${#failed[@]} -gt 0 ]; then
  die "FAILED under ASan/UBSan: ${failed[*]}"
fi
say "ok (${TARGETS[*]} clean under ASan, UBSan and -Werror=thread-safety)"
