// A dljob-sim trace: the cluster's nodes, the jobs in order of submission, and the queues, read
// from CSV files (and written back, for the trace generator).
//
//   nodes:  name,num_gpu,gpu_model,cpu_milli,memory_mib[,labels]       labels: k=v;k=v
//   jobs:   name,submit_time,duration,num_gpu,gpus_per_worker,queue,priority,gpu_model[,time_limit]
//           [,min_gpu,max_gpu]
//   queues: name,gpu_model,nominal,borrowing_limit[,cohort]            one row per queue and model
//
// Times are whole seconds. Columns are found by the header's names (any order; extra columns are
// ignored). Optional fields may be empty: gpus_per_worker (num_gpu up to 8, else 8), queue
// ("default"), priority (0), gpu_model (any), time_limit (none: the job's runs have no bound),
// cpu_milli/memory_mib (not accounted), nominal (unlimited), borrowing_limit (0; "unlimited"),
// cohort (the default cohort; the queues of one cohort lend each other idle quota, and every row
// of a queue names the same one), min_gpu/max_gpu (a rigid job). A job with min_gpu is elastic:
// it runs on min_gpu to num_gpu GPUs, both whole workers; max_gpu, when given, must equal num_gpu
// (as a DLJob's spec.gpus equals elastic.maxGpus). Its duration is at num_gpu GPUs.
// A node's gpu_model becomes its nvidia.com/gpu.product label; a job's its nodeSelector.
// Errors name the file, line and column and why. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "scheduler/cluster.h"
#include "scheduler/queue/queue_types.h"

namespace dljob::scheduler::sim {

struct TraceJob {
  std::string name;
  int64_t submit_time = 0;
  int64_t duration = 0;  // running time it needs, in total
  int64_t num_gpu = 1;
  int64_t gpus_per_worker = 1;
  std::string queue = kDefaultQueue;
  int64_t priority = 0;
  std::string gpu_model;  // "" any
  std::optional<int64_t> time_limit;
  std::optional<int64_t> min_gpu;  // set: elastic from min_gpu up to num_gpu GPUs
  bool operator==(const TraceJob&) const = default;
};

struct Trace {
  std::vector<Node> nodes;
  std::vector<TraceJob> jobs;     // by submit time, then name
  std::vector<QueueSpec> queues;  // empty: every queue the jobs name, unlimited
};

Result<std::vector<Node>> ParseNodes(std::string_view file, std::string_view text);
Result<std::vector<TraceJob>> ParseJobs(std::string_view file, std::string_view text);
Result<std::vector<QueueSpec>> ParseQueues(std::string_view file, std::string_view text);

// Reads and parses the files (queues_path may be empty). Errors name the file.
Result<Trace> LoadTrace(const std::string& nodes_path, const std::string& jobs_path,
                        const std::string& queues_path);

// The queues a replay uses: the trace's, or one unlimited queue per queue name the jobs use.
std::vector<QueueSpec> QueuesFor(const Trace& trace);

// The queue core's view of a trace job: its gang (workers of gpus_per_worker GPUs, 1 pod each,
// nodeSelector on the model), time limit, duration (for the sjf oracle) and elastic range.
JobRequest RequestOf(const TraceJob& job);

std::string NodesCsv(const std::vector<Node>& nodes);
std::string JobsCsv(const std::vector<TraceJob>& jobs);
std::string QueuesCsv(const std::vector<QueueSpec>& queues);

}  // namespace dljob::scheduler::sim
