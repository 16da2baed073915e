#!/usr/bin/env bash
# The trainer images' Containerfiles, checked without building them (tests/image/image_e2e.sh
# builds and runs the CPU image; the CUDA image cannot be built here):
#   1. the shared scripts in images/common/ parse (sh -n);
#   2. every images/*/Containerfile runs the shared stages (install-packages.sh, build-dljob.sh,
#      setup-runtime.sh), so no image sets itself up on its own and drifts (the CUDA image once
#      lacked dljob, which the operator's cache init containers run in the job's image);
#   3. every file a Containerfile COPYs from the checkout exists and is in the build context;
#   4. every directory the top-level CMakeLists.txt adds (but tests/ and bench/, which the image
#      build turns off) is in the build context: .containerignore leaves none out.
# Exit codes: 0 pass, 1 fail.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Whether .containerignore leaves out the checkout path $1 (a top-level pattern matches its first
# component; a **/ pattern any component).
ignored() {
  local path="$1" pattern part
  while read -r pattern; do
    case "$pattern" in '' | \#*) continue ;; esac
    pattern="${pattern%/}"
    if [[ "$pattern" == '**/'* ]]; then
      for part in ${path//\// }; do
        # shellcheck disable=SC2053
        [[ "$part" == ${pattern#'**/'} ]] && return 0
      done
    else
      # shellcheck disable=SC2053
      [[ "${path%%/*}" == $pattern || "$path" == $pattern ]] && return 0
    fi
  done <"$ROOT/.containerignore"
  return 1
}

# 1.
for script in "$ROOT"/images/common/*.sh; do
  sh -n "$script" || fail "${script#"$ROOT"/} does not parse"
done

containerfiles=("$ROOT"/images/*/Containerfile)
[ ${#containerfiles[@]} -ge 2 ] || fail "expected the cpu and cuda Containerfiles, found ${#containerfiles[@]}"
for file in "${containerfiles[@]}"; do
  name="${file#"$ROOT"/}"
  # 2.
  for stage in install-packages.sh build-dljob.sh setup-runtime.sh; do
    grep -Eq "^RUN .*images/common/$stage|^RUN .*/opt/dljob-image/$stage|^ +sh images/common/$stage" \
      "$file" || fail "$name does not run images/common/$stage"
  done
  # 3. COPY lines without --from: every argument but the last is a path in the checkout.
  while read -r -a words; do
    if [ ${#words[@]} -lt 3 ] || [ "${words[0]}" != COPY ]; then continue; fi
    args=("${words[@]:1}")
    [[ "${args[0]}" == --from=* ]] && continue
    while [[ "${args[0]}" == --* ]]; do args=("${args[@]:1}"); done
    for src in "${args[@]:0:${#args[@]}-1}"; do
      src="${src%/}"
      [ "$src" = . ] && continue
      [ -e "$ROOT/$src" ] || fail "$name copies $src, which does not exist"
      ignored "$src" && fail "$name copies $src, which .containerignore leaves out"
    done
  done <"$file"
done

# 4.
while read -r dir; do
  case "$dir" in tests | bench) continue ;; esac
  [ -d "$ROOT/$dir" ] || fail "CMakeLists.txt adds $dir, which does not exist"
  ignored "$dir" && fail "CMakeLists.txt adds $dir, which .containerignore leaves out of the image build"
done < <(sed -n 's/^ *add_subdirectory(\([^) ]*\).*/\1/p' "$ROOT/CMakeLists.txt")

if [ "$failures" -gt 0 ]; then
  echo "$failures problem(s) in the Containerfiles"
  exit 1
fi
echo "PASS: ${#containerfiles[@]} Containerfiles use images/common and copy only what the context holds"
