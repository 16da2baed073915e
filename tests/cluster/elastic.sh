#!/usr/bin/env bash
# An elastic DLJob training Fashion-MNIST for real on a real Kubernetes (issue 24), against a rigid
# run of the same training. The node has 8 GPUs.
#   rigid:  the reference, 4 workers × 1 GPU, --batch_size=16 (global batch 64), alone.
#   hold:   6 GPUs, waits for a gate file on the host, then trains a few steps and ends.
#   el:     spec.elastic {minGpus 2, maxGpus 4}, --batch_size=32 at its first size (2 ranks:
#           the same global batch 64, kept at every size), the same seed and steps as rigid.
# el starts on the 2 GPUs hold leaves; hold's gate opens and el grows to 4 workers once those GPUs
# have been idle for the operator's --elastic-grow-after (5 s here, and --min-run-time 0, below);
# `high` (6 GPUs, priority 10) then takes GPUs el has to give back, and el shrinks to 2 workers
# rather than being suspended. Each resize is a Resized Event and counts in status.resizes, never in
# restarts or preemptions. el Succeeds with its step count, every step trained once (its archived
# log, all three runs, through `dljob logs`: the resume lines and rank 0's metric lines), a loss
# curve that follows rigid's (the same samples each step, so the same losses but for float
# rounding, which over thousands of steps grows into run-to-run noise: each 500 steps' mean of
# every step's loss within 5%), and an accuracy within 1 point of rigid's (each job's mean of its
# last three evaluations).
# Usage: elastic.sh DLJOB (this build's dljob). Exit 0 pass, 1 fail.
# shellcheck source=tests/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DLJOB="${1:?usage: elastic.sh DLJOB}"
# el must still be training after it has grown and shrunk: about a minute of its run goes to the
# two restarts and the jobs around them, and 2 ranks train about 33 steps/s on 2 cores (4 ranks
# about 11: rigid takes about 6 minutes).
STEPS=4000
GROW_AFTER=5
# What rigid and el both train: lib.sh's TRAIN without its --batch_size and --display_every (each
# job sets its own: dljob-train refuses a flag given twice).
TRAIN_COMPARED=(dljob-train --model=mnist_cnn --data_name=fashion-mnist --data_dir=/data/fashion-mnist
        --learning_rate=0.05 --seed=1 --display_every=1)

# The operator's flags this test sets, as `helm upgrade --set queue.elasticGrowAfterSeconds=5
# --set queue.minRunTimeSeconds=0` would: --elastic-grow-after (el grows 5 s after GPUs go idle,
# not 300) and --min-run-time (a job that started less than this ago is not preempted, so `high`
# would wait 300 s while el trains on to its end). Each is replaced in the operator container's
# command (where the chart puts them), then the Deployment rolled out; put back on exit.
# flag_arg NAME: "PATH VALUE" of --NAME=VALUE (PATH a JSON-patch path).
flag_arg() {
  kubectl -n dljob-system get deployment dljob-operator -o json | python3 -c '
import json, sys
c = json.load(sys.stdin)["spec"]["template"]["spec"]["containers"][0]
for field in ("command", "args"):
    for i, a in enumerate(c.get(field, [])):
        if a.startswith("--" + sys.argv[1] + "="):
            print(f"/spec/template/spec/containers/0/{field}/{i}", a.split("=", 1)[1])
            sys.exit(0)
sys.exit(1)' "$1"
}
# set_flags NAME=VALUE...: one patch, one rollout.
set_flags() {
  local kv ops="" path
  for kv in "$@"; do
    read -r path _ <<<"$(flag_arg "${kv%%=*}")" && [ -n "$path" ] || return 1
    ops+="${ops:+,}{\"op\":\"replace\",\"path\":\"$path\",\"value\":\"--$kv\"}"
  done
  kubectl -n dljob-system patch deployment dljob-operator --type=json -p "[$ops]" >/dev/null \
    || return 1
  kubectl -n dljob-system rollout status deployment/dljob-operator --timeout=300s >/dev/null
}
ORIGINAL=()
put_back() { [ ${#ORIGINAL[@]} = 0 ] || set_flags "${ORIGINAL[@]}"; }
RESTORE=put_back
cluster_begin elastic
CKPT="$TMP/checkpoint"
GATE="$TMP/gate"
mkdir -m 0777 "$CKPT"
mkdir -m 0755 "$GATE"
for flag in elastic-grow-after min-run-time; do
  read -r _ value <<<"$(flag_arg $flag)"
  [ -n "$value" ] || fail "the operator Deployment has no --$flag argument"
  ORIGINAL+=("$flag=$value")
done
note "operator: --elastic-grow-after=$GROW_AFTER --min-run-time=0 (were ${ORIGINAL[*]})"
set_flags "elastic-grow-after=$GROW_AFTER" "min-run-time=0" || fail "could not set the operator's flags"
# The rollout is done when the new pods are Ready; the webhook's Service reaches them a moment
# later (kube-proxy), and until then the API server cannot call it ("no route to host").
webhook_answers() { kubectl get --raw /readyz >/dev/null && kubectl create --dry-run=server -f - \
  >/dev/null 2>&1 <<<"$(mnist_job probe 1 1 "" dljob-train --num_batches=1)"; }
wait_until "the admission webhook answering after the rollout" webhook_answers

gate_volume="    - name: gate
      source: 'hostPath:$GATE'
      mountPath: /gate"
gated() {  # NAME FILE: dljob-train after /gate/FILE exists
  printf '%s\n' sh -c "while ! test -e /gate/$1; do sleep 1; done; exec \"\$@\"" sh
}
# A job's rank-0 metric lines from its archived log: "step loss" per line. The archive is read
# with a bearer token (kube-up's exec credential, a system:masters user): `dljob logs` passes the
# user's token on to the operator, which a client certificate cannot be; any replica answers.
losses() {
  KUBECONFIG="$KUBE_DIR/kubeconfig-exec" "$DLJOB" logs "$1" -n "$NS" >"$TMP/$1.log" 2>&1 \
    || { tail "$TMP/$1.log"; fail "dljob logs $1"; }
  if grep -q '^dljob: job .* ran [0-9]* times' "$TMP/$1.log"; then
    grep '^dljob: job' "$TMP/$1.log"; fail "dljob logs $1: not the archive's whole log"
  fi
  untag <"$TMP/$1.log" | python3 -c '
import json, sys
for line in sys.stdin:
    at = line.find("DLJOB_METRIC {")
    if at < 0: continue
    m = json.loads(line[at + len("DLJOB_METRIC "):])
    if m.get("rank") == 0 and "loss" in m: print(m["step"], m["loss"])' >"$TMP/$1.losses"
}

note "rigid: 4 GPUs, $STEPS steps"
mnist_job rigid 4 1 "  runPolicy: {backoffLimit: 0}" "${TRAIN_COMPARED[@]}" --batch_size=16 \
  --num_batches=$STEPS >"$TMP/rigid.yaml"
kubectl apply -f "$TMP/rigid.yaml" || fail "kubectl apply -f rigid"
wait_until "rigid Succeeded" phase_or_fail rigid Succeeded
rigid_acc="$(jf rigid .status.throughput.accuracy)"
note "rigid: accuracy $rigid_acc at step $(jf rigid .status.throughput.step)"
losses rigid

mapfile -t hold_cmd < <(gated hold)
mnist_job hold 6 2 "$gate_volume
  runPolicy: {backoffLimit: 0}" "${hold_cmd[@]}" "${TRAIN[@]}" --num_batches=20 --eval=false \
  >"$TMP/hold.yaml"
kubectl apply -f "$TMP/hold.yaml" || fail "kubectl apply -f hold"
wait_until "hold Running" phase_or_fail hold Running

mnist_job el 4 1 "  elastic: {minGpus: 2, maxGpus: 4}
  checkpoint: {source: 'hostPath:$CKPT', everySteps: 100}
  runPolicy: {backoffLimit: 0}" "${TRAIN_COMPARED[@]}" --batch_size=32 --num_batches=$STEPS \
  >"$TMP/el.yaml"
kubectl apply -f "$TMP/el.yaml" || fail "kubectl apply -f el"
# desired workers, resizes and step of el, as "W R S"
# (0 for a field not there yet: `read` would take the next field for an empty one).
el_state() {
  local w r s
  w="$(jf el .status.workers.desired)" r="$(jf el .status.resizes)" s="$(jf el .status.throughput.step)"
  echo "${w:-0} ${r:-0} ${s:-0}"
}
trains_at() {  # WORKERS RESIZES MIN_STEP: el Running at that size and past that step
  phase_is el Succeeded && fail "el finished (step $(jf el .status.throughput.step)) before it trained on $1 workers after $2 resizes: raise STEPS for this machine"
  phase_or_fail el Running || return 1
  local w r s
  read -r w r s <<<"$(el_state)"
  [ "$w" = "$1" ] && [ "$r" = "$2" ] && [ "$s" -ge "$3" ]
}
wait_until "el training on 2 workers" trains_at 2 0 20
note "el on 2 workers: $(el_state); $(kubectl get dljobs -n "$NS" --no-headers | tr -s ' ' | paste -sd';')"
[ "$(kubectl get pods -n "$NS" -l dljob.io/job-name=el,dljob.io/role=worker -o name | wc -l)" = 2 ] \
  || { kubectl get pods -n "$NS" -o wide; fail "el does not have 2 worker pods"; }

note "opening hold's gate"
touch "$GATE/hold"
wait_until "hold Succeeded" phase_or_fail hold Succeeded
grown_step="$(jf el .status.throughput.step)"
wait_until "el grown to 4 workers and training" trains_at 4 1 $((grown_step + 40))
note "el grown: $(el_state)"
wait_for_event el Resized
# The 4-rank run trains for real before it is shrunk: 100 steps of rank 0 in its launcher's log
# (status.throughput.step may still be the 2-rank run's last, reported as it stopped).
trained_on_4() {
  local log
  log="$(kubectl logs el-launcher -n "$NS" 2>/dev/null)" || return 1
  grep -q 'on 4 ranks' <<<"$log" && [ "$(grep -c 'DLJOB_METRIC .*"rank":0,' <<<"$log")" -ge 100 ]
}
wait_until "el trained 100 steps on 4 ranks" trained_on_4
note "el trained on 4 ranks: $(el_state)"

mapfile -t high_cmd < <(gated high)
mnist_job high 6 2 "$gate_volume
  runPolicy: {backoffLimit: 0}" "${high_cmd[@]}" "${TRAIN[@]}" --num_batches=20 --eval=false \
  | sed 's/^  scheduling:$/  scheduling:\n    priority: 10/' >"$TMP/high.yaml"
grep -qx '    priority: 10' "$TMP/high.yaml" || fail "high.yaml has no priority"
kubectl apply -f "$TMP/high.yaml" || fail "kubectl apply -f high"
shrunk_step="$(jf el .status.throughput.step)"
wait_until "el shrunk to 2 workers and training" trains_at 2 2 $((shrunk_step + 20))
wait_until "high Running" phase_or_fail high Running
note "el shrunk: $(el_state); $(kubectl get dljobs -n "$NS" --no-headers | tr -s ' ' | paste -sd';')"

wait_until "el Succeeded" phase_or_fail el Succeeded
touch "$GATE/high"
kubectl get dljobs -n "$NS" -o wide
for field in restarts preemptions; do
  v="$(jf el .status.$field)"
  [ "${v:-0}" = 0 ] || fail "el: status.$field $v, expected 0"
done
[ "$(jf el .status.resizes)" = 2 ] || fail "el: status.resizes '$(jf el .status.resizes)', expected 2"
[ "$(jf el .status.throughput.step)" = $STEPS ] || fail "el: final step $(jf el .status.throughput.step)"
kubectl get events -n "$NS" --field-selector "involvedObject.kind=DLJob,involvedObject.name=el,reason=Resized" \
  -o custom-columns=MESSAGE:.message --no-headers >"$TMP/resized" || fail "kubectl get events"
cat "$TMP/resized"
grep -q '^grew 2 → 4 workers' "$TMP/resized" || fail "no Resized Event 'grew 2 → 4 workers'"
grep -q "^shrunk 4 → 2 workers for $NS/high" "$TMP/resized" || fail "no Resized Event 'shrunk 4 → 2 workers for $NS/high'"

losses el
untag <"$TMP/el.log" | grep -E '^Resuming from the checkpoint|resumed at step|test accuracy' \
  | tee "$TMP/resumes"
[ "$(grep -c '^Resuming from the checkpoint of step' "$TMP/resumes")" = 2 ] \
  || fail "el's log does not show 2 resumes from a checkpoint"
el_acc="$(jf el .status.throughput.accuracy)"
untag <"$TMP/rigid.log" | grep -oE 'test accuracy = [0-9.]+' | grep -oE '[0-9.]+$' >"$TMP/rigid.acc"
untag <"$TMP/el.log" | grep -oE 'test accuracy = [0-9.]+' | grep -oE '[0-9.]+$' >"$TMP/el.acc"
python3 - "$TMP/rigid.losses" "$TMP/el.losses" "$rigid_acc" "$el_acc" "$STEPS" \
  "$TMP/rigid.acc" "$TMP/el.acc" <<'PY' \
  || fail "el's training does not match rigid's"
import sys
def read(path):
    return [(int(s), float(l)) for s, l in (line.split() for line in open(path))]
rigid, el = dict(read(sys.argv[1])), read(sys.argv[2])
rigid_acc, el_acc, steps = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
# Accuracy: the mean of the last three evaluations (epoch ends and the last step). One
# evaluation swings by a point or more from the next, and between two runs that differ only in
# their rank count: the plain 2-rank run beside the 4-rank one ended 0.3 points below it at this
# learning rate, and 1.7 points below at 0.02, where the mean of the last three was 0.8 below.
def last3(path):
    accs = [float(a) for a in open(path).read().split()]
    assert len(accs) >= 3, f"{path}: {len(accs)} evaluations, expected at least 3"
    return sum(accs[-3:]) / 3
rigid_last3, el_last3 = last3(sys.argv[6]), last3(sys.argv[7])
el_steps = [s for s, _ in el]
# The run's closing summary line reports its last step once more (dljob-train's Trainer::Run).
if len(el_steps) > 1 and el_steps[-1] == el_steps[-2]:
    el_steps.pop()
# Every step once: the steps rank 0 reported only ever go forward (a run that went back to an
# older checkpoint would report some again), up to the last.
assert el_steps == sorted(set(el_steps)), f"steps reported twice or out of order: {el_steps}"
assert el_steps[-1] == steps, f"last reported step {el_steps[-1]}, expected {steps}"
pairs = [(s, l, rigid[s]) for s, l in el if s in rigid]
worst = max(abs(l - r) / r for _, l, r in pairs)
# The curve: mean loss over each 500 steps, el's against rigid's. One step's loss drifts apart as
# float rounding (2 or 4 ranks summing in another order) grows over thousands of steps: a plain
# 2-rank run beside the 4-rank one (no resize, the same flags; 2026-11-28) differed by up to 6%
# per step within the first 100 steps, and its 100-step means of every 10th step by up to 11%,
# but its 500-step means of every step by 2.4% at most. A model reset or a restart from the wrong
# place moves whole windows far more.
windows = {}
for s, l, r in pairs:
    w = windows.setdefault((s - 1) // 500, [0.0, 0.0])
    w[0] += l
    w[1] += r
worst_window = max(abs(a - b) / b for a, b in windows.values())
print(f"{len(pairs)} steps beside rigid's; relative loss difference: worst step {worst:.3g}, "
      f"worst 500-step mean {worst_window:.3g}; loss {el[0][1]:.3f} at step {el[0][0]} -> "
      f"{el[-1][1]:.3f} at step {steps}; accuracy {el_acc:.4f} (rigid {rigid_acc:.4f}), "
      f"mean of the last three evaluations {el_last3:.4f} (rigid {rigid_last3:.4f})")
assert len(pairs) >= steps - 50, f"only {len(pairs)} steps to compare"
assert worst_window < 0.05, "the loss curve leaves rigid's"
assert abs(el_last3 - rigid_last3) <= 0.01, "accuracy more than 1 point from rigid's"
PY
note "PASS: el trained 2 → 4 → 2 workers to step $STEPS, accuracy $el_acc against rigid's $rigid_acc"
