// Which changes to a DLJob's spec the operator can honour, given how far the job has got: the
// rule the admission webhook applies to every UPDATE, so that an edit is either carried out or
// refused with its reason — never silently ignored.
//
// What the operator does with a spec (operator/controller/reconciler.cc) decides it:
//   - spec.runPolicy.* and spec.scheduling.priority are read again on every pass (the run policy,
//     the queue's order and preemption): they may change at any time before the job finishes.
//   - spec.scheduling.queue is read by the queue until the job's gang is bound: it may change
//     while the job is Queued (or not yet started, or Suspended), not once its GPUs are counted
//     in a queue (Scheduled, Running, Restarting) — unless the same update suspends it.
//   - spec.gpus, spec.gpusPerWorker, spec.elastic.* and spec.mpi.* shape the gang: its workers,
//     its ranks, the hostfile made with its other children when the job is first seen, the range
//     the queue resizes it in. They may change only before the job has a status; after that, a
//     different gang is a new job.
//   - Everything else (image, command, env, resources, data, checkpoint, placement constraints)
//     is baked into the job's pods when they are made: it may change until the job finishes, and
//     the operator applies a change by restarting the whole job with the new spec, from its
//     checkpoint (jobs/spec_revision.h; docs/concepts/run-policy.md).
//   - A finished job (Succeeded, Failed, Interrupted) runs no more: only
//     spec.runPolicy.ttlSecondsAfterFinished still has an effect.
// Both specs are compared defaulted (an unset field equals its default) and field by field, so
// each refused field is named once by its path, with the phase and what to do instead.
//
// Pure; thread-safe.
#pragma once

#include "jobs/dljob_types.h"
#include "jobs/field_error.h"

namespace dljob {

// The paths whose values differ between the two specs, sorted: "spec.image",
// "spec.runPolicy.backoffLimit", "spec.data" (a list changes as a whole). Both jobs are compared
// defaulted.
std::vector<std::string> ChangedSpecFields(const DLJob& old_job, const DLJob& new_job);

// Every changed field of `new_job`'s spec that `old_job` (as stored, with its status) does not
// allow to change, each with its reason, e.g.
//   spec.scheduling.queue: cannot change while the job is Running (its GPUs are counted in its
//   queue); set spec.runPolicy.suspend to true first (in this update or before), then change it:
//   the job starts again with the new spec, from its checkpoint
// Empty when the update may go ahead.
FieldErrors CheckSpecUpdate(const DLJob& old_job, const DLJob& new_job);

}  // namespace dljob
