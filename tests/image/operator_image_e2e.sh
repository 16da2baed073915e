#!/usr/bin/env bash
# The operator image end to end: builds dljob/operator:0.1.0 from this checkout (dljob-operator
# compiled on this machine by scripts/cluster/build-image.sh --build-programs --image operator,
# into build-images/, then the image from it; both cached after the first time), then runs it the
# way the Helm chart's Deployment does, against the test API server on loopback:
#   1. `--help` lists every flag the chart passes (charts/manifests/dljob.yaml, the chart rendered);
#   2. the image runs as the numeric non-root user 65532;
#   3. with the chart's command (the program found on the image's PATH) and arguments, plus a
#      kubeconfig for the test API server, as a restricted pod runs it (a read-only root
#      filesystem, no capabilities, no privilege escalation), with the log archive
#      directory as an emptyDir would be (a world-writable volume): it takes the Lease, answers
#      /healthz and /readyz, and reconciles a DLJob until its launcher pod exists (the server's
#      simulated kubelet makes the workers Running).
# Usage: operator_image_e2e.sh DLJOB_TEST_APISERVER (the program, from this build tree)
# Exit codes: 0 pass, 1 fail, 77 skip (podman cannot be installed or run here, or
# DLJOB_SKIP_IMAGE_TEST=1). It removes the container and stops the server by ID on exit.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
APISERVER="${1:?usage: operator_image_e2e.sh DLJOB_TEST_APISERVER}"
IMAGE="${DLJOB_TEST_OPERATOR_IMAGE:-dljob/operator:0.1.0}"
# Bounds every wait below, so a broken operator fails the test instead of hanging it.
WAIT_SECONDS=120

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "${DLJOB_SKIP_IMAGE_TEST:-0}" = 1 ] && skip "DLJOB_SKIP_IMAGE_TEST=1"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/dljob-operator-image.XXXXXX")"
CONTAINER=""
SERVER_PID=""
cleanup() {
  if [ -n "$CONTAINER" ]; then podman rm -f -t 0 "$CONTAINER" >/dev/null 2>&1; fi
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Polls `$@` once a second until it succeeds; false after WAIT_SECONDS.
wait_for() {
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 1
  done
}

# --- the image, from the program compiled on this machine ---
t0=$SECONDS
"$ROOT/scripts/cluster/build-image.sh" --build-programs --image operator >"$TMP/programs.log" 2>&1 ||
  { tail -40 "$TMP/programs.log"; fail "scripts/cluster/build-image.sh --build-programs --image operator failed"; }
grep -E '^build-image:|^\[[0-9]+/[0-9]+\] (Building|Linking)' "$TMP/programs.log"
"$ROOT/scripts/cluster/build-image.sh" --image operator --tag "$IMAGE" >"$TMP/build.log" 2>&1
rc=$?
if [ $rc = 3 ]; then skip "$(tail -1 "$TMP/build.log")"; fi
if [ $rc != 0 ]; then tail -40 "$TMP/build.log"; fail "scripts/cluster/build-image.sh --image operator exited $rc"; fi
grep -E '^build-image:' "$TMP/build.log"
echo "image $IMAGE ready in $((SECONDS - t0))s"

# The operator container's command in the rendered chart: `- dljob-operator` and the `- --flag=`
# lines after it.
mapfile -t chart_command < <(awk '
  /^ *- dljob-operator$/ { on = 1; sub(/^ *- /, ""); print; next }
  on && /^ *- --/ { sub(/^ *- /, ""); print; next }
  on { exit }' "$ROOT/charts/manifests/dljob.yaml")
[ ${#chart_command[@]} -gt 1 ] || fail "no dljob-operator command in charts/manifests/dljob.yaml"

# --- 1. --help lists the chart's flags ---
podman run --rm --runtime runc "$IMAGE" --help >"$TMP/help.txt" 2>&1 ||
  { cat "$TMP/help.txt"; fail "podman run $IMAGE --help exited non-zero"; }
for arg in "${chart_command[@]:1}"; do
  flag="${arg%%=*}"
  grep -q -- "$flag" "$TMP/help.txt" || { cat "$TMP/help.txt"; fail "--help does not list $flag, which the chart passes"; }
done
echo "PASS: --help lists the ${#chart_command[@]} arguments' flags of the chart's command"

# --- 2. a non-root user ---
user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
[ "$user" = 65532:65532 ] || fail "$IMAGE runs as '$user', expected 65532:65532"
id_out="$(podman run --rm --runtime runc --entrypoint id "$IMAGE")" || fail "id in $IMAGE failed"
[[ "$id_out" == "uid=65532(dljob) gid=65532(dljob)"* ]] || fail "id in $IMAGE says '$id_out'"
echo "PASS: runs as $id_out"

# --- 3. the chart's command against the test API server ---
(cd "$ROOT" && exec "$APISERVER" --port 0 --port-file "$TMP/apiserver.port" \
   --kubeconfig-out "$TMP/kubeconfig" --nodes 1 --kubelet-delay-ms 0) >"$TMP/apiserver.log" 2>&1 &
SERVER_PID=$!
# Ready once the port file is written; a server that exits fails the test at once.
server_ready() {
  [ -s "$TMP/apiserver.port" ] && return 0
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$TMP/apiserver.log"; fail "the test API server exited"; }
  return 1
}
wait_for server_ready || { cat "$TMP/apiserver.log"; fail "the test API server did not start"; }
api="http://127.0.0.1:$(cat "$TMP/apiserver.port")"
# The container's user reads the kubeconfig and writes the log archive and the port file, as in a
# pod whose emptyDir is world-writable.
chmod 0644 "$TMP/kubeconfig"
mkdir -m 0777 "$TMP/logs" "$TMP/run"

# The chart's namespace, as `helm install --create-namespace` (or the manifest) makes it: the Lease
# lives there.
lease_namespace="$(printf '%s\n' "${chart_command[@]}" | sed -n 's/^--lease-namespace=//p')"
[ -n "$lease_namespace" ] || fail "the chart's command has no --lease-namespace"
curl -fsS -H 'Content-Type: application/json' \
  -d "{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"$lease_namespace\"}}" \
  "$api/api/v1/namespaces" >/dev/null || fail "creating the namespace $lease_namespace failed"

args=()
for arg in "${chart_command[@]:1}"; do
  case "$arg" in --metrics-port=*) continue ;; esac  # any free port, reported in the port file
  args+=("$arg")
done
CONTAINER="$(podman run -d --runtime runc --network host --read-only \
  --cap-drop=ALL --security-opt no-new-privileges \
  -e POD_NAME=dljob-operator-test-0 \
  -v "$TMP/kubeconfig:/etc/dljob/kubeconfig:ro" -v "$TMP/logs:/var/log/dljob" -v "$TMP/run:/run/dljob" \
  --entrypoint "${chart_command[0]}" "$IMAGE" "${args[@]}" \
  --kubeconfig=/etc/dljob/kubeconfig --metrics-port=0 --metrics-address=127.0.0.1 \
  --port-file=/run/dljob/port)" || fail "podman run could not start $IMAGE"
logs() { podman logs "$CONTAINER" 2>&1 | tail -30; }
# Ready once the port file is written; a container that exits fails the test at once.
operator_ready() {
  [ -s "$TMP/run/port" ] && return 0
  [ "$(podman inspect --format '{{.State.Running}}' "$CONTAINER")" = true ] ||
    { logs; fail "the operator container exited"; }
  return 1
}
wait_for operator_ready || { logs; fail "the operator wrote no port file"; }
metrics="http://127.0.0.1:$(cat "$TMP/run/port")"
curl -fsS "$metrics/healthz" >/dev/null || { logs; fail "/healthz does not answer 200"; }
wait_for curl -fsS -o /dev/null "$metrics/readyz" || { logs; fail "/readyz never answered 200"; }
holder() {
  curl -fsS "$api/apis/coordination.k8s.io/v1/namespaces/$lease_namespace/leases/dljob-operator" |
    jq -r '.spec.holderIdentity // ""'
}
wait_for test "$(holder)" = dljob-operator-test-0 || { logs; fail "the operator never took the Lease"; }
echo "PASS: the operator holds the Lease and answers /healthz and /readyz"

job='{"apiVersion": "dljob.io/v1alpha1", "kind": "DLJob",
      "metadata": {"name": "image-test", "namespace": "default"},
      "spec": {"image": "dljob/trainer:cpu", "gpus": 2,
               "command": ["dljob-train", "--model=mnist_cnn", "--data_name=synthetic"]}}'
curl -fsS -H 'Content-Type: application/json' -d "$job" \
  "$api/apis/dljob.io/v1alpha1/namespaces/default/dljobs" >/dev/null || fail "creating the DLJob failed"
launcher_exists() { curl -fsS -o /dev/null "$api/api/v1/namespaces/default/pods/image-test-launcher"; }
wait_for launcher_exists || { logs; fail "the operator never created the job's launcher pod"; }
phase="$(curl -fsS "$api/apis/dljob.io/v1alpha1/namespaces/default/dljobs/image-test" | jq -r '.status.phase // ""')"
[ -n "$phase" ] || fail "the DLJob has no status.phase"
echo "PASS: the operator in $IMAGE reconciled a DLJob to its launcher pod (phase $phase)"
