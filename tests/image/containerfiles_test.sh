#!/usr/bin/env bash
# The images' Containerfiles, checked without building them (tests/image/image_e2e.sh builds and
# runs the CPU image; the CUDA image cannot be built here; scripts/cluster/build-image.sh --image
# operator builds the operator image):
#   1. the shared scripts in images/common/ parse (sh -n);
#   2. every trainer image (images/*/Containerfile but the operator's) runs the shared stages
#      (install-packages.sh, build-dljob.sh, setup-runtime.sh), so no image sets itself up on its
#      own and drifts, and carries dljob: the operator's cache init containers run `dljob data
#      cache` in the job's image (the CUDA image once lacked it);
#   3. the operator image runs the shared packages, build and library check (install-packages.sh,
#      build-dljob.sh --target dljob-operator, check-programs.sh) and fits the Helm chart: its
#      entrypoint is the program the Deployment's command names, on PATH; it runs as a numeric
#      non-root user; it exposes the metrics port; scripts/cluster/build-image.sh tags it with the
#      chart's image.repository:image.tag;
#   4. every file a Containerfile COPYs from the checkout exists and is in the build context;
#   5. every directory the top-level CMakeLists.txt adds (but tests/ and bench/, which the image
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

# A Containerfile with its continuation lines joined: one instruction a line.
joined() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }
# Whether the RUN instructions of Containerfile $1 run the images/common/ script $2 with the
# arguments matching the extended regular expression $3 (default: any).
runs() {
  joined "$1" | grep -Eq "^RUN .*(images/common|/opt/dljob-image)/$2${3:+ ([^&;|]* )?$3}"
}

containerfiles=("$ROOT"/images/*/Containerfile)
[ -f "$ROOT/images/operator/Containerfile" ] || fail "images/operator/Containerfile is missing"
[ ${#containerfiles[@]} -ge 3 ] ||
  fail "expected the cpu, cuda and operator Containerfiles, found ${#containerfiles[@]}"
for file in "${containerfiles[@]}"; do
  name="${file#"$ROOT"/}"
  if [ "$name" = images/operator/Containerfile ]; then
    # 3. (the chart's side is checked below)
    runs "$file" install-packages.sh || fail "$name does not run images/common/install-packages.sh"
    runs "$file" build-dljob.sh "--target dljob-operator" ||
      fail "$name does not build dljob-operator with images/common/build-dljob.sh --target"
    runs "$file" check-programs.sh "dljob-operator" ||
      fail "$name does not check dljob-operator's libraries with images/common/check-programs.sh"
  else
    # 2.
    for stage in install-packages.sh build-dljob.sh setup-runtime.sh; do
      runs "$file" "$stage" || fail "$name does not run images/common/$stage"
    done
    # build-dljob.sh builds dljob unless --target names others without it.
    if joined "$file" | grep -E "images/common/build-dljob.sh" | grep -q -- "--target" &&
      ! runs "$file" build-dljob.sh "--target dljob( |$)"; then
      fail "$name builds no dljob, which the operator's cache init containers run in the job's image"
    fi
  fi
  # 4. COPY lines without --from: every argument but the last is a path in the checkout.
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

# 3., the chart's side: the Deployment's command and ports, values.yaml's image, build-image.sh's
# tag.
operator="$ROOT/images/operator/Containerfile"
if [ -f "$operator" ]; then
  entrypoint="$(sed -n 's/^ENTRYPOINT \["\([^"]*\)".*/\1/p' "$operator")"
  chart_command="$(awk '/^ *command:/ { getline; sub(/^ *- */, ""); print; exit }' \
    "$ROOT/charts/dljob/templates/deployment.yaml")"
  [ -n "$chart_command" ] || fail "charts/dljob/templates/deployment.yaml has no command"
  [ "$entrypoint" = "/usr/local/bin/${chart_command##*/}" ] ||
    fail "images/operator/Containerfile's ENTRYPOINT is '$entrypoint'; the chart's Deployment runs '$chart_command' (expected /usr/local/bin/${chart_command##*/})"
  grep -Eq '^ENV PATH=([^ ]*:)?/usr/local/bin(:| |$)' "$operator" ||
    fail "images/operator/Containerfile does not put /usr/local/bin on PATH (the chart's command is '$chart_command')"
  user="$(sed -n 's/^USER \([^ ]*\).*/\1/p' "$operator" | tail -1)"
  [[ "$user" =~ ^[0-9]+(:[0-9]+)?$ && "${user%%:*}" != 0 ]] ||
    fail "images/operator/Containerfile's USER is '$user', not a numeric non-root uid[:gid]"
  values="$ROOT/charts/dljob/values.yaml"
  repository="$(awk '/^image:/ { f = 1; next } f && /^ +repository:/ { print $2; exit }' "$values")"
  tag="$(awk '/^image:/ { f = 1; next } f && /^ +tag:/ { gsub(/"/, "", $2); print $2; exit }' "$values")"
  grep -q "operator) DEFAULT_TAG=\"$repository:$tag\"" "$ROOT/scripts/cluster/build-image.sh" ||
    fail "scripts/cluster/build-image.sh --image operator does not tag $repository:$tag (charts/dljob/values.yaml)"
  port="$(awk '/^metrics:/ { f = 1; next } f && /^ +port:/ { print $2; exit }' "$values")"
  grep -Eq "^EXPOSE ([0-9 ]* )?$port( |$)" "$operator" ||
    fail "images/operator/Containerfile does not EXPOSE the chart's metrics port $port"
fi

# 5.
while read -r dir; do
  case "$dir" in tests | bench) continue ;; esac
  [ -d "$ROOT/$dir" ] || fail "CMakeLists.txt adds $dir, which does not exist"
  ignored "$dir" && fail "CMakeLists.txt adds $dir, which .containerignore leaves out of the image build"
done < <(sed -n 's/^ *add_subdirectory(\([^) ]*\).*/\1/p' "$ROOT/CMakeLists.txt")

if [ "$failures" -gt 0 ]; then
  echo "$failures problem(s) in the Containerfiles"
  exit 1
fi
echo "PASS: ${#containerfiles[@]} Containerfiles use images/common, trainer images carry dljob, the operator image fits the chart, and they copy only what the context holds"
