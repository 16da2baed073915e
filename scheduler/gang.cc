#include "scheduler/gang.h"

#include "jobs/defaults.h"
#include "jobs/quantity.h"

namespace dljob::scheduler {
namespace {

// `per_gpu` × `gpus`, in thousandths of its unit (jobs/quantity.h).
Result<int64_t> PerWorkerMilli(const std::string& field, const std::string& per_gpu, int64_t gpus) {
  Result<std::string> product = MultiplyQuantity(per_gpu, gpus);
  if (!product.ok()) return product.status().WithContext(field);
  Result<int64_t> milli = QuantityMilli(*product);
  if (!milli.ok()) return milli.status().WithContext(field);
  return *milli;
}

// spec.scheduling.affinity's required node affinity as the scheduler's terms; none when unset.
std::vector<NodeSelectorTerm> RequiredTermsOf(const SchedulingSpec& s) {
  std::vector<NodeSelectorTerm> out;
  if (!s.affinity || !s.affinity->node_affinity) return out;
  const std::optional<dljob::NodeSelector>& required =
      s.affinity->node_affinity->required_during_scheduling_ignored_during_execution;
  if (!required) return out;
  for (const dljob::NodeSelectorTerm& term : required->node_selector_terms) {
    NodeSelectorTerm& t = out.emplace_back();
    for (const dljob::NodeSelectorRequirement& r : term.match_expressions) {
      t.match_expressions.push_back({r.key, r.operator_, r.values});
    }
  }
  return out;
}

}  // namespace

Result<Gang> GangOf(const DLJob& job) {
  const DLJobSpec& spec = job.spec;
  if (!spec.gpus || *spec.gpus <= 0) {
    return Status::InvalidArgument("spec.gpus: must be a positive number of GPUs");
  }
  const int64_t per_worker = spec.gpus_per_worker.value_or(DefaultGpusPerWorker(*spec.gpus));
  if (per_worker <= 0 || *spec.gpus % per_worker != 0) {
    return Status::InvalidArgument("spec.gpus: " + std::to_string(*spec.gpus) +
                                   " is not a multiple of spec.gpusPerWorker (" +
                                   std::to_string(per_worker) + ")");
  }
  Gang gang;
  gang.job = job.metadata.namespace_ + "/" + job.metadata.name;
  gang.workers = *spec.gpus / per_worker;
  gang.per_worker.gpus = per_worker;
  gang.per_worker.pods = 1;
  if (spec.resources.cpu_per_gpu) {
    Result<int64_t> cpu =
        PerWorkerMilli("spec.resources.cpuPerGpu", *spec.resources.cpu_per_gpu, per_worker);
    if (!cpu.ok()) return cpu.status();
    gang.per_worker.cpu_milli = *cpu;
  }
  if (spec.resources.memory_per_gpu) {
    Result<int64_t> memory =
        PerWorkerMilli("spec.resources.memoryPerGpu", *spec.resources.memory_per_gpu, per_worker);
    if (!memory.ok()) return memory.status();
    constexpr int64_t kMilliPerMib = int64_t{1000} << 20;
    gang.per_worker.memory_mib = (*memory + kMilliPerMib - 1) / kMilliPerMib;
  }
  gang.node_selector = spec.scheduling.node_selector;
  gang.tolerations = spec.scheduling.tolerations;
  gang.required_affinity = RequiredTermsOf(spec.scheduling);
  const std::optional<std::string>& topology = spec.scheduling.topology;
  if (!topology) {
    gang.topology = Topology::kAny;
  } else if (*topology == "Pack") {
    gang.topology = Topology::kPack;
  } else if (*topology == "Spread") {
    gang.topology = Topology::kSpread;
  } else {
    return Status::InvalidArgument("spec.scheduling.topology: \"" + *topology +
                                   "\" is not Pack or Spread");
  }
  for (const DataVolume& d : spec.data) gang.datasets.push_back(d.source);
  if (auto it = gang.node_selector.find(kGpuProductLabel); it != gang.node_selector.end()) {
    gang.gpu_model = it->second;
  }
  return gang;
}

}  // namespace dljob::scheduler
