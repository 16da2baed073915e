// GangOf: what placement needs of a DLJob (cluster.h's Gang), from its spec alone.
//
//   workers      spec.gpus / spec.gpusPerWorker (gpusPerWorker unset: DefaultGpusPerWorker)
//   per_worker   gpusPerWorker GPUs; resources.cpuPerGpu and memoryPerGpu × gpusPerWorker, as the
//                worker pod requests them (jobs/quantity.h; memory rounded up to MiB); 1 pod
//   where        scheduling.nodeSelector and tolerations; topology Pack / Spread / unset;
//                required_affinity from scheduling.affinity.nodeAffinity
//                .requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (none when
//                unset; a required node selector with no terms, which validation rejects, also
//                none)
//   datasets     spec.data[].source, for cache locality
//   gpu_model    the nodeSelector's nvidia.com/gpu.product, "" when it names none
// Pure; thread-safe.
#pragma once

#include "base/status.h"
#include "jobs/dljob_types.h"
#include "scheduler/cluster.h"

namespace dljob::scheduler {

// Errors: kInvalidArgument naming the field, for what validation would reject (spec.gpus unset
// or not positive, not a multiple of gpusPerWorker, a quantity that is not one, an unknown
// topology).
Result<Gang> GangOf(const DLJob& job);

}  // namespace dljob::scheduler
