#!/bin/sh
# Checks, while an image is built, that each PROGRAM is installed in /usr/local/bin and finds every
# shared library it links against, so a missing runtime package fails the build that left it out,
# not the first pod that runs the image. Used by setup-runtime.sh (the trainer images) and by
# images/operator/Containerfile.
#   check-programs.sh PROGRAM...
# Exit codes: 0 all present and linked, 1 otherwise (naming the program or the libraries).
set -eu

[ $# -gt 0 ] || { echo "check-programs.sh: name at least one program" >&2; exit 2; }
for program in "$@"; do
  if [ ! -x "/usr/local/bin/$program" ]; then
    echo "check-programs.sh: /usr/local/bin/$program is missing" >&2
    exit 1
  fi
done
for program in "$@"; do
  if ldd "/usr/local/bin/$program" | grep 'not found'; then
    echo "check-programs.sh: $program lacks the shared libraries above: add their packages to the" \
         "Containerfile's runtime stage" >&2
    exit 1
  fi
done
