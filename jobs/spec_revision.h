// The revision of a DLJob's spec that its pods are made from: what says, from a pod alone,
// whether it still runs the job as the job is now written.
//
// PodSpecRevision hashes the spec as EncodeTree writes it (after ApplyDefaults, so a field left
// to its default and the same default written out agree), leaving out the fields that change
// nothing in the pods and that the operator reads afresh on every pass:
//   - spec.runPolicy (backoffLimit, deadlines, ttl, cleanPodPolicy, suspend),
//   - spec.scheduling.queue and spec.scheduling.priority (they order the queue, not the pods),
//   - spec.gpus of an elastic job (the queue sizes its runs within spec.elastic, which is
//     covered; a run's pods are made for the size it was given).
// Every other field (image, command, env, gpus, resources, data, checkpoint, mpi, topology,
// nodeSelector, tolerations, affinity) shapes the pods: a different value is a different
// revision, and the operator applies it by restarting the whole job (docs/concepts/run-policy.md).
//
// The revision is 16 lower-case hex digits (64-bit FNV-1a of the canonical JSON, keys sorted):
// stable across processes, builds and operator versions, as long as the spec's encoding is.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "jobs/dljob_types.h"

namespace dljob {

std::string PodSpecRevision(const DLJob& job);

// Whether the spec field at `path` ("spec.image", "spec.runPolicy.backoffLimit", …) is one the
// revision covers: false for spec.runPolicy and everything under it, spec.scheduling.queue and
// spec.scheduling.priority. The one definition of that split (jobs/spec_update.h uses it too).
bool ShapesPods(std::string_view path);

}  // namespace dljob
