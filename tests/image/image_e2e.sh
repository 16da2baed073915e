#!/usr/bin/env bash
# The CPU image end to end: builds dljob/trainer:cpu from this checkout (dljob-train and dljob
# compiled on this machine by scripts/cluster/build-image.sh --build-programs, into build-images/,
# then the image from them; both cached after the first time), then runs 2-rank dljob-train jobs
# inside it under mpirun:
#   1. one container, `mpirun -np 2` inside it;
#   2. the operator's layout: two worker containers running sshd (127.0.0.2 and 127.0.0.3) and a
#      launcher container whose mpirun starts one rank on each worker over SSH with a fresh job key
#      mounted at /root/.ssh, as the operator's SSH secret is.
# All containers share the host network and talk over loopback only.
# Exit codes: 0 pass, 1 fail, 77 skip (podman cannot be installed or run here, or
# DLJOB_SKIP_IMAGE_TEST=1). Every container it starts is removed by ID on exit.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IMAGE="${DLJOB_TEST_IMAGE:-dljob/trainer:cpu}"
TRAIN=(dljob-train --model=mnist_cnn --data_name=synthetic --num_batches=10 --batch_size=16)
# Daemons and ranks reach each other over loopback only. Ranks in different containers share no
# /dev/shm, so between containers they use TCP.
MPI_LO=(--mca oob_tcp_if_include lo --mca btl_tcp_if_include lo)
MPI_TCP=(--mca btl self,tcp)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "${DLJOB_SKIP_IMAGE_TEST:-0}" = 1 ] && skip "DLJOB_SKIP_IMAGE_TEST=1"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/dljob-image-e2e.XXXXXX")"
# IDs of the containers started so far, one a line (a file: start() runs in a subshell).
IDS="$TMP/containers"
: >"$IDS"
cleanup() {
  local id
  while read -r id; do podman rm -f -t 0 "$id" >/dev/null 2>&1; done <"$IDS"
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Starts a detached container, records its ID for cleanup and prints it.
start() {
  local id
  id="$(podman run -d --runtime runc --network host "$@")" || return 1
  echo "$id" >>"$IDS"
  echo "$id"
}
# Waits for a container to exit; its output goes to $2, its exit code is returned.
finish() {
  local rc
  rc="$(podman wait "$1")"
  podman logs "$1" >"$2" 2>&1
  return "$rc"
}

# --- the image, from programs compiled on this machine ---
t0=$SECONDS
"$ROOT/scripts/cluster/build-image.sh" --build-programs --image cpu >"$TMP/programs.log" 2>&1 ||
  { tail -40 "$TMP/programs.log"; fail "scripts/cluster/build-image.sh --build-programs --image cpu failed"; }
grep -E '^build-image:|^\[[0-9]+/[0-9]+\] (Building|Linking)' "$TMP/programs.log"
"$ROOT/scripts/cluster/build-image.sh" --tag "$IMAGE" >"$TMP/build.log" 2>&1
rc=$?
if [ $rc = 3 ]; then skip "$(tail -1 "$TMP/build.log")"; fi
if [ $rc != 0 ]; then tail -40 "$TMP/build.log"; fail "scripts/cluster/build-image.sh exited $rc"; fi
grep -E '^build-image:' "$TMP/build.log"
echo "image $IMAGE ready in $((SECONDS - t0))s"

# --- 1. two ranks in one container ---
t0=$SECONDS
id="$(start "$IMAGE" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 \
      "${MPI_LO[@]}" "${TRAIN[@]}")" || fail "podman run could not start $IMAGE"
finish "$id" "$TMP/single.log"; rc=$?
cat "$TMP/single.log"
[ $rc = 0 ] || fail "mpirun -np 2 in one container exited $rc"
grep -q "total images/sec" "$TMP/single.log" || fail "no 'total images/sec' line in the job's output"
echo "PASS: 2 ranks in one container ($((SECONDS - t0))s)"

# --- 2. the operator's cache init container command ---
# A cached data entry becomes an init container running `dljob data cache` in the job's image
# (operator/controller/volumes.h); here it copies the image's Fashion-MNIST to an empty dir, and
# a second run finds the complete copy and copies nothing.
t0=$SECONDS
mkdir -p "$TMP/cache"
for run in first second; do
  podman run --rm --runtime runc --network host -v "$TMP/cache:/dljob/cache" "$IMAGE" \
    dljob data cache --from /usr/share/datasets/fashion-mnist --to /dljob/cache/fmnist \
    >"$TMP/cache-$run.log" 2>&1 || { cat "$TMP/cache-$run.log"; fail "dljob data cache ($run run) failed"; }
done
cat "$TMP/cache-first.log" "$TMP/cache-second.log"
grep -q "already a complete copy" "$TMP/cache-second.log" || fail "the second cache run copied again"
cmp "$TMP/cache/fmnist/train-images-idx3-ubyte.gz" \
  <(podman run --rm --runtime runc "$IMAGE" cat /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz) \
  || fail "the cached copy differs from the source"
echo "PASS: dljob data cache in the image ($((SECONDS - t0))s)"

# --- 3. launcher + two SSH workers ---
t0=$SECONDS
# A port nobody listens on at 127.0.0.2 and 127.0.0.3 (sshd binds those addresses only).
PORT=$(( 20000 + RANDOM % 20000 ))
mkdir -p "$TMP/ssh"
podman run --rm --runtime runc --network host -v "$TMP/ssh:/keys" "$IMAGE" \
  ssh-keygen -q -t ed25519 -N "" -C dljob-image-e2e -f /keys/id_rsa >/dev/null \
  || fail "ssh-keygen in the image failed"
cp "$TMP/ssh/id_rsa.pub" "$TMP/ssh/authorized_keys"
chmod 600 "$TMP/ssh/id_rsa" "$TMP/ssh/authorized_keys"
printf '127.0.0.2 slots=1\n127.0.0.3 slots=1\n' >"$TMP/hostfile"

workers=()
for addr in 127.0.0.2 127.0.0.3; do
  # The operator's worker command (operator/controller/builders.cc), bound to one address.
  w="$(start -v "$TMP/ssh:/root/.ssh:ro" "$IMAGE" \
        /usr/sbin/sshd -D -e -p "$PORT" -o "ListenAddress=$addr:$PORT")" \
    || fail "could not start the worker on $addr"
  workers+=("$w")
done
launcher="$(start -v "$TMP/ssh:/root/.ssh:ro" -v "$TMP/hostfile:/etc/dljob/hostfile:ro" \
             -e DLJOB_SSH_PORT="$PORT" -e DLJOB_SSH_WAIT_SECONDS=60 "$IMAGE" \
             launcher --allow-run-as-root -np 2 --tag-output --bind-to none "${MPI_LO[@]}" \
             "${MPI_TCP[@]}" "${TRAIN[@]}")" || fail "could not start the launcher"
finish "$launcher" "$TMP/launcher.log"; rc=$?
cat "$TMP/launcher.log"
[ $rc = 0 ] || fail "the launcher exited $rc"
grep -q "total images/sec" "$TMP/launcher.log" || fail "no 'total images/sec' line in the launcher's output"
# Each worker accepted the key once for the launcher's readiness probe and again for mpirun's
# daemon, which runs that worker's rank.
for i in 0 1; do
  podman logs "${workers[$i]}" >"$TMP/worker$i.log" 2>&1
  logins=$(grep -c "Accepted publickey for root" "$TMP/worker$i.log")
  [ "$logins" -ge 2 ] \
    || { cat "$TMP/worker$i.log"; fail "worker $i (127.0.0.$((i + 2))) saw $logins SSH logins; mpirun never reached it"; }
done
echo "PASS: launcher + 2 SSH workers ($((SECONDS - t0))s)"
