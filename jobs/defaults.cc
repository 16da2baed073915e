#include "jobs/defaults.h"

#include <algorithm>
#include <numeric>

namespace dljob {
namespace {

template <typename T, typename V>
void SetIfUnset(std::optional<T>& field, V value) {
  if (!field) field = T(value);
}

void DefaultMpi(const DLJobSpec& spec, MpiSpec& mpi) {
  SetIfUnset(mpi.implementation, "OpenMPI");
  // One rank per GPU; only meaningful once gpusPerWorker itself is.
  if (spec.gpus_per_worker && *spec.gpus_per_worker > 0) {
    SetIfUnset(mpi.slots_per_worker, *spec.gpus_per_worker);
  }
  SetIfUnset(mpi.ssh_port, kDefaultSshPort);
}

// dljob-train's own defaults (--checkpoint_every, --checkpoint_keep), written out so that the job
// says what every workload is told.
void DefaultCheckpoint(CheckpointSpec& c) {
  SetIfUnset(c.mount_path, kDefaultCheckpointMountPath);
  if (!c.every_seconds) SetIfUnset(c.every_steps, kDefaultCheckpointEverySteps);
  SetIfUnset(c.keep, kDefaultCheckpointKeep);
}

// An elastic job asks for at most maxGpus, and its workers must divide both ends of the range:
// gpusPerWorker defaults from their greatest common divisor, so the default never makes an
// elastic range invalid.
void DefaultElastic(DLJobSpec& spec) {
  if (!spec.elastic || !spec.elastic->max_gpus || *spec.elastic->max_gpus < 1) return;
  const int64_t max = *spec.elastic->max_gpus;
  SetIfUnset(spec.gpus, max);
  const std::optional<int64_t> min = spec.elastic->min_gpus;
  if (min && *min >= 1) SetIfUnset(spec.gpus_per_worker, DefaultGpusPerWorker(std::gcd(*min, max)));
}

}  // namespace

int64_t DefaultGpusPerWorker(int64_t gpus) {
  for (int64_t per_worker = std::min(gpus, kDefaultGpusPerNode); per_worker > 1; --per_worker) {
    if (gpus % per_worker == 0) return per_worker;
  }
  return 1;
}

void ApplyDefaults(DLJob& job) {
  if (job.metadata.namespace_.empty()) job.metadata.namespace_ = kDefaultNamespace;

  DLJobSpec& spec = job.spec;
  DefaultElastic(spec);
  if (spec.gpus && *spec.gpus > 0)
    SetIfUnset(spec.gpus_per_worker, DefaultGpusPerWorker(*spec.gpus));
  DefaultMpi(spec, spec.mpi);
  for (DataVolume& volume : spec.data) SetIfUnset(volume.read_only, true);
  if (spec.checkpoint) DefaultCheckpoint(*spec.checkpoint);

  RunPolicy& policy = spec.run_policy;
  SetIfUnset(policy.backoff_limit, kDefaultBackoffLimit);
  SetIfUnset(policy.clean_pod_policy, "Running");
  SetIfUnset(policy.suspend, false);

  SchedulingSpec& scheduling = spec.scheduling;
  SetIfUnset(scheduling.queue, kDefaultQueue);
  SetIfUnset(scheduling.priority, 0);
  SetIfUnset(scheduling.topology, "Pack");
}

}  // namespace dljob
