#include "jobs/child_names.h"

#include <algorithm>

namespace dljob {
namespace {

constexpr char kWorkerSuffix[] = "-worker";
constexpr char kLauncherSuffix[] = "-launcher";
constexpr char kConfigSuffix[] = "-config";
constexpr char kSshSuffix[] = "-ssh";

std::string WorkerSuffix(int64_t index) {
  return std::string(kWorkerSuffix) + "-" + std::to_string(index);
}

}  // namespace

std::string WorkerName(const DLJob& job, int64_t index) {
  return WorkerName(job.metadata.name, index);
}
std::string WorkerName(const std::string& job_name, int64_t index) {
  return job_name + WorkerSuffix(index);
}
std::string LauncherName(const DLJob& job) { return LauncherName(job.metadata.name); }
std::string LauncherName(const std::string& job_name) { return job_name + kLauncherSuffix; }
std::string ServiceName(const DLJob& job) { return job.metadata.name + kWorkerSuffix; }
std::string ConfigMapName(const DLJob& job) { return job.metadata.name + kConfigSuffix; }
std::string SshSecretName(const DLJob& job) { return job.metadata.name + kSshSuffix; }

int64_t WorkerCount(const DLJob& job) {
  int64_t per_worker = job.spec.gpus_per_worker.value_or(1);
  return per_worker > 0 ? job.spec.gpus.value_or(0) / per_worker : 0;
}

std::optional<WorkerRange> ElasticWorkers(const DLJob& job) {
  const std::optional<ElasticSpec>& e = job.spec.elastic;
  const int64_t per_worker = job.spec.gpus_per_worker.value_or(1);
  if (!e || per_worker <= 0) return std::nullopt;
  return WorkerRange{e->min_gpus.value_or(0) / per_worker, e->max_gpus.value_or(0) / per_worker};
}

std::string LongestChildSuffix(int64_t workers) {
  std::string longest;
  for (std::string suffix :
       {WorkerSuffix(std::max<int64_t>(workers, 1) - 1), std::string(kLauncherSuffix),
        std::string(kWorkerSuffix), std::string(kConfigSuffix), std::string(kSshSuffix)}) {
    if (suffix.size() > longest.size()) longest = std::move(suffix);
  }
  return longest;
}

size_t MaxJobNameLength(int64_t workers) {
  return kMaxChildNameLength - LongestChildSuffix(workers).size();
}

}  // namespace dljob
