#!/usr/bin/env bash
# The local demo: installs what dljob needs, builds it, and trains the Fashion-MNIST CNN on 2 MPI
# ranks on this machine (examples/mnist-job.yaml), then shows the job's record.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh dljob dljob-train
DLJOB=build/bin/dljob
$DLJOB delete mnist --ignore-not-found >/dev/null
$DLJOB submit --local -f examples/mnist-job.yaml
echo
$DLJOB list -o wide
echo
echo "The whole record: $DLJOB get mnist -o json   logs: $DLJOB logs mnist [--rank 1]"
