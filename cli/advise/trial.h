// A trial of `dljob advise`: one short run of the job at one setting, and the interface that runs
// it.
//
// A TrialSetting says what the trial varies: intra-op threads per rank (OMP_NUM_THREADS, which
// dljob-train hands to LibTorch), loader threads (dljob-train's --loader_threads), where the data
// is read from, and a memory cap. plan.h turns a setting into the trial's DLJob; a TrialRunner
// runs that job and measures it. Two runners: LocalTrialRunner (local_runner.h) runs it on this
// machine as `dljob submit --local` would, under a cgroup memory limit; tests use a fake that
// computes throughput from the setting.
//
// A runner is used from one thread; the job and observer are borrowed for the call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/backend/backend.h"
#include "jobs/dljob_types.h"

namespace dljob::advise {

// Where a trial reads the job's data from (plan.h decides which apply to a job):
//   local  a hostPath/pvc volume, read in place (the data is on this machine's disk already)
//   store  straight from the source: an oss:// volume read by the workload from the object store
//          (no copy), a nas:// volume from its mount
//   cache  copied to local disk first (the local runner's verified, resumable fetch), then read
//          from the copy; the copy time is measured apart (fetch_seconds), since a node keeps the
//          copy for later jobs
inline constexpr char kDataLocal[] = "local";
inline constexpr char kDataStore[] = "store";
inline constexpr char kDataCache[] = "cache";

struct TrialSetting {
  int threads_per_rank = 1;
  std::optional<int> loader_threads;  // nullopt: as the job has it
  std::string data_path;              // "" (no data volume) or one of kData*
  std::optional<int64_t> memory_limit_bytes;
  bool operator==(const TrialSetting&) const = default;
};

struct TrialMeasurement {
  bool ok = false;
  std::string error;           // why it failed (a short line), when !ok
  bool out_of_memory = false;  // killed by the memory cap
  double throughput = 0;       // whole job, in `unit`
  std::string unit;            // "images/sec" or "words/sec", as the metric lines carry it
  double noise = 0;            // relative standard error of throughput (0: unknown)
  double startup_seconds = 0;  // launch to the first metric line
  double fetch_seconds = 0;    // filling the cache before the launch (cache trials)
  double wall_seconds = 0;     // launch to exit
  std::optional<int64_t> peak_memory_bytes;  // of all ranks together, when measurable
};

class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  // Runs the trial's job (plan.h's TrialJob) under `memory_limit_bytes` when set; progress goes
  // to `observer` (OnUpdate with the trial's record, OnNotice). Never throws; failures come back
  // as !ok with the error.
  virtual TrialMeasurement Run(const DLJob& job, std::optional<int64_t> memory_limit_bytes,
                               JobObserver& observer) = 0;
  // Whether this runner can cap and measure memory; when not, why (for the report).
  virtual bool CanLimitMemory(std::string* why_not) const = 0;
  // True once the user asked to stop (Ctrl-C): no further trials start.
  virtual bool Interrupted() const { return false; }
};

}  // namespace dljob::advise
