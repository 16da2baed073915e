#!/usr/bin/env bash
# Fails (exit 1) when an #include points up or sideways, or when a row of the table allows a
# directory that none of its files includes: checks every #include of every C++ file
# in the checkout (tracked, or new and not ignored) against scripts/ci/layers.txt, the one table of
# which directory may use which, and prints each violation as
#   file:line: #include "target": <rule broken>
# Includes of files outside the tree (system, third-party) are not checked. Takes well under a
# second; CI runs it first. Usage: scripts/ci/check-layers.sh [TABLE] (default
# scripts/ci/layers.txt).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cd "$ROOT"
table="${1:-scripts/ci/layers.txt}"

cxx_files
files=("${CXX_FILES[@]}")
[ ${#files[@]} -gt 0 ] || die --exit 2 "no C++ files found (run it in a git checkout)"

filelist=$(mktemp)
trap 'rm -f "$filelist"' EXIT
printf '%s\n' "${files[@]}" >"$filelist"

# grep exits 1 when no file has an #include; anything else is a real error.
{ grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' -- "${files[@]}" || [ $? -eq 1 ]; } |
  awk -v table="$table" -v filelist="$filelist" -v nfiles="${#files[@]}" '
  function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
  # The row a path belongs to: its directory or the nearest ancestor with a row ("" if none).
  function rowof(path,   d) {
    if (path !~ /\//) return ""
    d = path
    sub(/\/[^\/]*$/, "", d)
    while (1) {
      if (d in rows) return d
      if (d !~ /\//) return ""
      sub(/\/[^\/]*$/, "", d)
    }
  }
  function may_use(src, dst) {
    return src == dst || allowed[src] ~ (" \\* ") || index(allowed[src], " " dst " ") > 0
  }
  function is_test_code(path) {
    return path ~ /_test\.cc$/ || path ~ /(^|\/)testing\// || path ~ /^(tests|bench|jobs\/fuzz)\//
  }
  function violation(msg) {
    printf "%s:%s: #include %s: %s\n", file, line, shown, msg
    bad++
  }
  BEGIN {
    while ((getline l < table) > 0) {
      n++
      sub(/#.*/, "", l)
      if (l ~ /^[ \t]*$/) continue
      if (l !~ /:/) { printf "%s:%d: expected \"dir: deps...\"\n", table, n > "/dev/stderr"; exit 2 }
      dir = trim(substr(l, 1, index(l, ":") - 1))
      deps = trim(substr(l, index(l, ":") + 1))
      gsub(/[ \t]+/, " ", deps)
      rows[dir] = 1
      allowed[dir] = " " deps " "
      rule[dir] = dir ": " (deps == "" ? "(nothing)" : deps)
    }
    if (n == 0) { print "check-layers: cannot read " table > "/dev/stderr"; exit 2 }
    while ((getline l < filelist) > 0) exists[l] = 1
  }
  {
    # grep -n output: file:line:text (paths in this tree have no colons).
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2)
    line = rest; sub(/:.*/, "", line)
    text = substr(rest, length(line) + 2)
    if (!match(text, /#[ \t]*include[ \t]*[<"][^>"]*[>"]/)) next
    inc = substr(text, RSTART, RLENGTH)
    sub(/^#[ \t]*include[ \t]*/, "", inc)
    shown = inc
    target = substr(inc, 2, length(inc) - 2)
    # <...> names a file of ours only if the tree has it; "..." paths are from the root.
    if (substr(inc, 1, 1) == "<" && !(target in exists)) next
    dst = rowof(target)
    if (dst == "") next
    checked++
    src = rowof(file)
    if (src == "") {
      if (!(file in norow)) violation("no row in " table " for " file "\x27s directory (add one)")
      norow[file] = 1
      next
    }
    test_only = (target ~ /(^|\/)testing\//)
    if (test_only && !is_test_code(file)) {
      violation("test-only header in production code (only *_test.cc, testing/, tests/, bench/, jobs/fuzz/ may include it)")
    } else if (test_only && dst == "testing") {
      # testing/ itself: any test code may use it.
    } else if (!may_use(src, dst)) {
      violation(src " may not use " dst (test_only ? "/testing" : "") " (" table ": " rule[src] ")")
    } else if (src != dst) {
      used[src, dst] = 1
    }
  }
  END {
    # The table allows only what is used, so it stays a true picture of the architecture.
    for (dir in rows) {
      if (allowed[dir] ~ / \* /) continue
      ndeps = split(trim(allowed[dir]), dirdeps, " ")
      for (i = 1; i <= ndeps; i++) {
        if (!((dir, dirdeps[i]) in used)) {
          printf "%s: %s: allows %s, but no file of %s includes it (remove it from the row)\n", table, dir, dirdeps[i], dir
          bad++
        }
      }
    }
    if (bad > 0) {
      printf "check-layers: %d problem(s) (%d includes checked in %d files); fix the include, or change %s if the architecture changed (docs/concepts/architecture.md)\n", bad, checked, nfiles, table > "/dev/stderr"
      exit 1
    }
    printf "check-layers: ok (%d includes in %d files follow %s)\n", checked, nfiles, table
  }'
