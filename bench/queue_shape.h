// The Kueue-shaped workload of queue_bench: Kueue's own scheduler performance test
// (kueue test/performance/scheduler, configs/baseline/generator.yaml) in DLJobs and DLQueues.
//
// 5 cohorts × 6 queues, each queue owning 20 GPUs and borrowing up to 100 more within its cohort.
// Each queue gets three sets of one-worker DLJobs, created one after another at a fixed interval
// from the start of the run, all sets at once:
//   small   350 jobs, one every 100 ms,  1 GPU,  priority  50, running 200 ms
//   medium  100 jobs, one every 500 ms,  5 GPUs, priority 100, running 500 ms
//   large    50 jobs, one every 1200 ms, 20 GPUs, priority 200, running 1000 ms
// 15,000 jobs in all, created over 60 s. A job "runs" from when its launcher pod is Running until
// the bench ends that pod (queue_bench: the annotation sim.dljob.io/exit-code=0), as Kueue's
// runner finishes a workload its runtime after admission.
//
// Pure: the plan, the objects and the statistics; queue_bench does the I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dljob::bench {

struct SizeClass {
  std::string name;  // "small", "medium", "large"
  int count = 0;     // jobs per queue
  int interval_ms = 0;
  int gpus = 0;  // of the job's one worker
  int priority = 0;
  int runtime_ms = 0;
};

struct QueueShape {
  int cohorts = 5;
  int queues_per_cohort = 6;
  int nominal = 20;  // GPUs each queue owns
  int borrowing_limit = 100;
  std::vector<SizeClass> classes = {{"small", 350, 100, 1, 50, 200},
                                    {"medium", 100, 500, 5, 100, 500},
                                    {"large", 50, 1200, 20, 200, 1000}};
};

// The shape with every class's count multiplied by `scale` (rounded, at least 1), for quick runs
// and CI; the intervals, sizes and runtimes stay.
QueueShape Scaled(QueueShape shape, double scale);

// "cohort-<c>" and "cohort-<c>-queue-<q>", from 0.
std::string CohortName(int cohort);
std::string QueueName(int cohort, int queue);

struct PlannedJob {
  std::string name;  // "<queue>-<class>-<i>": unique, a DNS label
  std::string queue;
  int size = 0;  // index into QueueShape::classes
  int64_t submit_ms = 0;
};

// Every job of the run, ordered by submit_ms (then by name).
std::vector<PlannedJob> Plan(const QueueShape& shape);

// The DLQueue of queue `queue` of cohort `cohort`.
nlohmann::json QueueObject(const QueueShape& shape, int cohort, int queue);
// The DLJob of `job`: one worker with its class's GPUs, in its queue, with its class's priority.
nlohmann::json JobObject(const QueueShape& shape, const PlannedJob& job, const std::string& ns);

// Nearest-rank statistics of one size class's times (seconds).
struct ClassSummary {
  std::string name;
  int jobs = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
// `seconds[i]` belongs to the class `sizes[i]`; a class with no times has jobs 0.
std::vector<ClassSummary> SummarizeByClass(const QueueShape& shape, const std::vector<int>& sizes,
                                           const std::vector<double>& seconds);

}  // namespace dljob::bench
