#!/usr/bin/env bash
# Runs clang-tidy (Debian's clang-tidy 14, the checks in .clang-tidy) with Clang's thread-safety
# analysis over every C++ translation unit of build/compile_commands.json that does not include
# LibTorch, and fails (exit 1) on any finding, printing each with file:line and the check's name.
#
# LibTorch's translation units (dljob-train, its tests, the trainer benchmarks) are left out: each
# takes clang-tidy a minute or more on the 2-core machines, several times everything else together.
# Even so the whole run is slow: 242 units took 2,267 s (36.5 min of CPU) beside other builds, so
# CI does not run it; give a REGEX for what you changed.
#
#   scripts/dev/check-tidy.sh [REGEX]   # only files whose path matches REGEX (e.g. '^storage/')
#
# Needs build/compile_commands.json: configures build/ (no compiling) if it is missing.
# JOBS=N sets the parallelism (default: nproc); TIDY_BUILD_DIR another build directory.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
BUILD_DIR=${TIDY_BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
filter="${1:-}"

tidy=""
for c in clang-tidy-14 clang-tidy; do
  if command -v "$c" >/dev/null 2>&1; then tidy="$c"; break; fi
done
[ -n "$tidy" ] || die --exit 2 "clang-tidy not found; run scripts/dev/setup.sh"
need_command python3 "run scripts/dev/setup.sh"

if [ ! -f "$BUILD_DIR/compile_commands.json" ]; then
  say "configuring $BUILD_DIR for its compile_commands.json"
  cmake_args
  cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
fi

exec python3 - "$tidy" "$ROOT" "$BUILD_DIR" "$JOBS" "$filter" <<'PY'
import concurrent.futures, json, os, re, shlex, subprocess, sys, tempfile, time

tidy, root, build_dir, jobs, pattern = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
start = time.time()
with open(os.path.join(build_dir, "compile_commands.json")) as f:
    db = json.load(f)

selected, skipped_torch, seen = [], 0, set()
for entry in db:
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    rel = os.path.relpath(path, root)
    if rel.startswith("..") or rel.startswith(build_dir + os.sep) or rel in seen:
        continue  # generated or outside the tree, or a file compiled into several targets
    command = entry.get("command") or " ".join(map(shlex.quote, entry["arguments"]))
    # LibTorch's headers (or a precompiled header made of them) put a TU out of reach.
    if "/torch" in command or "cmake_pch" in command:
        skipped_torch += 1
        continue
    if pattern and not re.search(pattern, rel):
        continue
    seen.add(rel)
    selected.append((rel, dict(entry, file=path)))

if not selected:
    print("check-tidy: no translation unit selected", file=sys.stderr)
    sys.exit(2)

dbdir = tempfile.mkdtemp(prefix="dljob-tidy-")
with open(os.path.join(dbdir, "compile_commands.json"), "w") as f:
    json.dump([e for _, e in selected], f)

def run(item):
    rel, _ = item
    cmd = [tidy, "-p", dbdir, "--quiet", "--extra-arg=-Wthread-safety",
           "--extra-arg=-Wno-unknown-warning-option", os.path.join(root, rel)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return rel, p.returncode, p.stdout, p.stderr

findings, failed = [], []
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
    for rel, rc, out, err in pool.map(run, selected):
        lines = [l for l in out.splitlines() if re.search(r": (warning|error): ", l)]
        if rc != 0 or lines:
            failed.append(rel)
            text = out.strip() or err.strip()
            findings.append(text.replace(root + "/", ""))

for text in findings:
    print(text)
os.remove(os.path.join(dbdir, "compile_commands.json"))
os.rmdir(dbdir)
elapsed = time.time() - start
summary = "%d translation units in %.0f s (%d LibTorch ones left out)" % (len(selected), elapsed, skipped_torch)
if failed:
    print("check-tidy: findings in %d of %s: %s" % (len(failed), summary, " ".join(failed)), file=sys.stderr)
    sys.exit(1)
print("check-tidy: ok (%s)" % summary)
PY
