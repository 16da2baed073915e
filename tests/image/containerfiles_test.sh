#!/usr/bin/env bash
# The images' Containerfiles, checked without building them (tests/image/image_e2e.sh and
# operator_image_e2e.sh build and run the CPU and operator images; the CUDA image cannot be built
# here):
#   1. the shared scripts in images/common/ and the CUDA builder's images/cuda/build-dljob.sh
#      parse (sh -n);
#   2. every image scripts/cluster/build-image.sh builds (its image_row: cpu, operator) is made
#      from programs compiled on the host: one stage, no compiler, no builder, the programs COPYd
#      from the context's bin/, every other COPY from images/common/ (all build-image.sh stages
#      there); the programs it stages are exactly those the image checks (check-programs.sh, for
#      the trainer through setup-runtime.sh), so a program staged but never checked, or checked
#      but never staged, fails here; a trainer image carries dljob (the operator's cache init
#      containers run `dljob data cache` in the job's image; the CUDA image once lacked it);
#   3. every trainer image runs the shared stages (install-packages.sh, setup-runtime.sh), so no
#      image sets itself up on its own and drifts; the one image build-image.sh does not build
#      (images/cuda: its base is not the host's distribution) compiles in a builder stage with
#      images/cuda/build-dljob.sh, builds dljob, and copies only what its build context (the
#      checkout, less .containerignore) holds; the operator image runs install-packages.sh;
#   4. the operator image fits the Helm chart: its entrypoint is the program the Deployment's
#      command names, on PATH; it runs as a numeric non-root user; it exposes the metrics port;
#      build-image.sh tags it with the chart's image.repository:image.tag;
#   5. every directory the top-level CMakeLists.txt adds (but tests/ and bench/, which the CUDA
#      image build turns off) is in the CUDA image's build context: .containerignore leaves none
#      out.
# Exit codes: 0 pass, 1 fail.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_IMAGE="$ROOT/scripts/cluster/build-image.sh"
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
for script in "$ROOT"/images/common/*.sh "$ROOT"/images/cuda/build-dljob.sh; do
  sh -n "$script" || fail "${script#"$ROOT"/} does not parse"
done

# A Containerfile with its continuation lines joined: one instruction a line.
joined() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1"; }
# Whether the RUN instructions of Containerfile $1 run the script $2 (under images/common/,
# images/cuda/ or /opt/dljob-image/) with arguments matching the extended regular expression $3
# (default: any).
runs() {
  joined "$1" | grep -Eq "^RUN .*(images/(common|cuda)|/opt/dljob-image)/$2${3:+ ([^&;|]* )?$3}"
}
# The COPY sources of Containerfile $1 (COPY lines without --from), one a line.
copy_sources() {
  local words args src
  while read -r -a words; do
    if [ ${#words[@]} -lt 3 ] || [ "${words[0]}" != COPY ]; then continue; fi
    args=("${words[@]:1}")
    [[ "${args[0]}" == --from=* ]] && continue
    while [[ "${args[0]}" == --* ]]; do args=("${args[@]:1}"); done
    for src in "${args[@]:0:${#args[@]}-1}"; do echo "$src"; done
  done < <(joined "$1")
}
# The programs images/common/check-programs.sh is run with, in the script on stdin (comments
# skipped).
checked_programs() {
  grep -v '^ *#' | sed -n 's/.*check-programs\.sh"\{0,1\} \([a-z][a-z0-9 -]*[a-z0-9]\).*/\1/p' |
    tr ' ' '\n' | grep -v '^$' | sort
}

# build-image.sh's images: `NAME) DEFAULT_TAG="..."; PROGRAMS=(...) ;;`, as "NAME PROGRAM...".
mapfile -t rows < <(sed -n 's/^ *\([a-z0-9]*\)) DEFAULT_TAG="[^"]*"; PROGRAMS=(\([^)]*\)) ;;$/\1 \2/p' "$BUILD_IMAGE")
[ ${#rows[@]} -ge 2 ] || fail "scripts/cluster/build-image.sh's image_row lists ${#rows[@]} images, expected cpu and operator"
declare -A staged=()
for row in "${rows[@]}"; do staged[${row%% *}]="${row#* }"; done
# What build-image.sh puts in the build context: the programs in bin/, images/common/.
# shellcheck disable=SC2016
grep -q 'install -m 0755 -s "$DIR/bin/$p" "$CONTEXT/bin/$p"' "$BUILD_IMAGE" ||
  fail "scripts/cluster/build-image.sh no longer stages the programs, stripped, in the context's bin/"
# shellcheck disable=SC2016
grep -q 'cp -r "$ROOT/images/common" "$CONTEXT/images/"' "$BUILD_IMAGE" ||
  fail "scripts/cluster/build-image.sh no longer copies images/common/ into the context"

containerfiles=("$ROOT"/images/*/Containerfile)
[ -f "$ROOT/images/operator/Containerfile" ] || fail "images/operator/Containerfile is missing"
[ ${#containerfiles[@]} -ge 3 ] ||
  fail "expected the cpu, cuda and operator Containerfiles, found ${#containerfiles[@]}"
for image in "${!staged[@]}"; do
  [ -f "$ROOT/images/$image/Containerfile" ] ||
    fail "scripts/cluster/build-image.sh builds '$image', which has no images/$image/Containerfile"
done
for file in "${containerfiles[@]}"; do
  name="${file#"$ROOT"/}"
  image="${name#images/}"
  image="${image%/Containerfile}"
  if [ -n "${staged[$image]:-}" ]; then
    # 2.
    programs="$(tr ' ' '\n' <<<"${staged[$image]}" | sort)"
    [ "$(grep -c '^FROM ' "$file")" = 1 ] || fail "$name has $(grep -c '^FROM ' "$file") stages; an image of host-built programs has one"
    grep -Eq '^FROM .* AS ' "$file" && fail "$name names a stage (a builder?); it copies programs built on the host"
    grep -Eq '^COPY --from=' "$file" && fail "$name copies from another stage or image; its programs come from the context's bin/"
    if joined "$file" | grep -E '^RUN ' | grep -Eqw 'cmake|ninja|make|g\+\+|c\+\+|gcc|build-dljob\.sh|install-packages\.sh build'; then
      fail "$name compiles or installs a compiler; its programs come built from the host"
    fi
    grep -Eq '^COPY bin/ /usr/local/bin/$' "$file" || fail "$name does not COPY bin/ /usr/local/bin/ (the programs build-image.sh stages)"
    while read -r src; do
      case "$src" in
        bin/) ;;
        images/common/*) [ -e "$ROOT/${src%/}" ] || fail "$name copies $src, which does not exist" ;;
        *) fail "$name copies $src; build-image.sh's context holds only bin/ and images/common/" ;;
      esac
    done < <(copy_sources "$file")
    if [ "$image" = operator ]; then
      checked="$(joined "$file" | grep '^RUN ' | checked_programs)"
    else
      runs "$file" setup-runtime.sh || fail "$name does not run images/common/setup-runtime.sh"
      checked="$(checked_programs <"$ROOT/images/common/setup-runtime.sh")"
      grep -qx dljob <<<"$programs" ||
        fail "build-image.sh stages no dljob into $name, which the operator's cache init containers run in the job's image"
    fi
    [ "$programs" = "$checked" ] ||
      fail "build-image.sh stages '$(xargs <<<"$programs")' into $name, whose build checks '$(xargs <<<"$checked")' with check-programs.sh"
  else
    # 3., the image compiled in its own build (CUDA).
    joined "$file" | grep -Eq '^RUN .*images/cuda/build-dljob\.sh' ||
      fail "$name does not run images/cuda/build-dljob.sh"
    if joined "$file" | grep -E "images/cuda/build-dljob.sh" | grep -q -- "--target" &&
      ! runs "$file" build-dljob.sh "--target dljob( |$)"; then
      fail "$name builds no dljob, which the operator's cache init containers run in the job's image"
    fi
    runs "$file" setup-runtime.sh || fail "$name does not run images/common/setup-runtime.sh"
    while read -r src; do
      src="${src%/}"
      [ "$src" = . ] && continue
      [ -e "$ROOT/$src" ] || fail "$name copies $src, which does not exist"
      ignored "$src" && fail "$name copies $src, which .containerignore leaves out"
    done < <(copy_sources "$file")
  fi
  runs "$file" install-packages.sh || fail "$name does not run images/common/install-packages.sh"
  # Scripts run from the checkout by path exist.
  for script in $(joined "$file" | grep -E '^RUN ' | grep -oE 'images/[a-z0-9_/-]+\.sh' | sort -u); do
    [ -f "$ROOT/$script" ] || fail "$name runs $script, which does not exist"
  done
done

# 4. The chart's side: the Deployment's command and ports, values.yaml's image, build-image.sh's
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
  ignored "$dir" && fail "CMakeLists.txt adds $dir, which .containerignore leaves out of the CUDA image's build"
done < <(sed -n 's/^ *add_subdirectory(\([^) ]*\).*/\1/p' "$ROOT/CMakeLists.txt")

if [ "$failures" -gt 0 ]; then
  echo "$failures problem(s) in the Containerfiles"
  exit 1
fi
echo "PASS: ${#containerfiles[@]} Containerfiles use images/common; ${#rows[@]} copy host-built programs (the ones they check) and compile nothing; trainer images carry dljob, the operator image fits the chart, and they copy only what their context holds"
