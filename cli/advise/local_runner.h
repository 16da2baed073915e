// LocalTrialRunner: runs a trial on this machine the way `dljob submit --local` runs a job — the
// same plan (cli/local/local_plan.h: mpirun, volumes, the mount-path rewrite), the same data fetch
// (data_fetch.h: oss:// and cached volumes copied into the machine's cache before the launch, and
// timed apart) and the same supervisor (job_supervisor.h) — with the trial's record in a private
// job store (a temporary directory, removed by the destructor), so trials never show up in
// `dljob list`. The cache is the machine's own (the state directory's cache/), so a copy a cache
// trial made is the one the next `dljob submit --local` of the job finds.
//
// Memory: when memory_cgroup.h's Probe succeeds, every trial runs in a child memory cgroup (capped
// when asked), which measures its peak and tells an OOM kill; else CanLimitMemory says why and
// trials run uncapped and unmeasured.
//
// Throughput comes from the metric lines the ranks print (metrics.h). Not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "cli/advise/memory_cgroup.h"
#include "cli/advise/trial.h"
#include "cli/local/local_plan.h"
#include "storage/objstore/object_url.h"

namespace dljob::advise {

struct LocalRunnerOptions {
  LocalMachine machine;    // cache_root: where cache trials copy data (the state directory's)
  storage::EnvLookup env;  // endpoint and keys for oss:// fetches
  // The signal that asked to stop (Ctrl-C), else 0.
  std::function<int()> interrupt_requested = [] { return 0; };
  // Times the trials (wall, fetch, first metric) and runs the supervisor: RealClock() when null.
  // Must outlive the runner.
  Clock* clock = nullptr;
};

class LocalTrialRunner : public TrialRunner {
 public:
  // Creates the private job store; fails when the temporary directory cannot be made.
  static Result<std::unique_ptr<LocalTrialRunner>> Create(LocalRunnerOptions options);
  ~LocalTrialRunner() override;

  TrialMeasurement Run(const DLJob& job, std::optional<int64_t> memory_limit_bytes,
                       JobObserver& observer) override;
  bool CanLimitMemory(std::string* why_not) const override;
  bool Interrupted() const override { return options_.interrupt_requested() != 0; }

 private:
  LocalTrialRunner(LocalRunnerOptions options, std::string store_root);

  LocalRunnerOptions options_;
  Clock& clock_;  // *options_.clock or RealClock()
  std::string store_root_;
  std::optional<MemoryCgroups> cgroups_;
  std::string cgroup_why_not_;
};

}  // namespace dljob::advise
