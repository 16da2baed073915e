// The plan of `dljob advise`: which settings to try for a job, and each trial's DLJob.
//
// Axes, run in this order, each starting from the settings the earlier ones chose (coordinate
// descent; advisor.h runs it):
//   threads  intra-op threads per rank (OMP_NUM_THREADS). Default grid: powers of two from 1 up to
//            min(cores, 2 × cores / ranks), plus that limit itself — one step past a fair share of
//            the cores, so oversubscription shows as a falling curve.
//   loader   dljob-train's --loader_threads (1, 2, 4, … up to the cores). Run only where it does
//            something: --data_name=imagenet (JPEG decode threads), or a command that sets
//            --loader_threads itself, or when the user gives --loader-threads. Fashion-MNIST is
//            read into memory at start and has no loader threads to size.
//   data     where the data is read from (trial.h): store and cache for oss:// and nas:// volumes;
//            hostPath and pvc volumes are on local disk already and are read in place (no axis).
//   memory   memory caps, as fractions of the peak the chosen setting used uncapped (the runner
//            measures it), largest first, stopping at the first cap that fails (a smaller one
//            would not be trusted anyway: saturation.h); run only when the runner can cap memory.
//
// A trial's job is the user's job, shortened and made safe to run many times: for dljob-train
// --num_batches=N (a fixed number of steps), --display_every so each trial gives several
// throughput windows, --eval=false; no checkpoint (a trial must neither resume from nor overwrite
// the job's checkpoints); backoffLimit 0 and an activeDeadlineSeconds. Another command runs as
// written (it should be short and print metric lines).
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/advise/trial.h"
#include "jobs/dljob_types.h"

namespace dljob::advise {

struct AdviseOptions {
  std::vector<int> threads;             // empty: the default grid
  std::vector<int> loader_threads;      // empty: the default grid where the axis applies
  std::vector<std::string> data_paths;  // empty: those that apply to the job's volumes
  std::vector<double> memory_fractions = {0.9, 0.75, 0.6, 0.45, 0.3};  // empty: no memory axis
  int64_t num_batches = 100;            // steps per trial (dljob-train)
  int ranks = 0;                        // 0: spec.gpus
  int repeats = 1;                      // trials per setting; the median counts
  double tolerance = 0.05;              // the saturation band's floor (saturation.h)
  int64_t trial_timeout_seconds = 600;  // activeDeadlineSeconds of each trial
  std::string cache_path;               // cache trials of nas:// volumes copy here
};

struct AdvisePlan {
  int ranks = 1;
  int cpus = 1;
  bool dljob_train = false;         // the command is dljob-train (its flags can be set)
  std::vector<int> threads;         // never empty
  std::vector<int> loader_threads;  // empty: not varied (loader_note says why)
  std::string loader_note;
  std::vector<std::string> data_paths;  // the trial default first; < 2: not varied (data_note)
  std::string data_note;
  std::vector<double> memory_fractions;  // empty: not varied (memory_note says why)
  std::string memory_note;
  std::vector<std::string> notices;  // things the user should know about the trials
};

// REQUIRES: job defaulted and valid. `cpus`: cores of this machine. Errors (a bad option) name
// the flag.
Result<AdvisePlan> PlanAdvice(const DLJob& job, const AdviseOptions& options, int cpus,
                              bool can_limit_memory, const std::string& memory_why_not);

// The trial's job for `setting` (see above). `index` numbers the trial (its name).
DLJob TrialJob(const DLJob& job, const AdvisePlan& plan, const AdviseOptions& options,
               const TrialSetting& setting, int index);

// The value of `flag` ("--loader_threads") in `command`, written as --flag=V or --flag V.
std::optional<std::string> FlagValue(const std::vector<std::string>& command,
                                     const std::string& flag);
// `command` with `flag` set to `value` (replacing --flag=V / --flag V, else appending
// --flag=value).
std::vector<std::string> WithFlag(std::vector<std::string> command, const std::string& flag,
                                  const std::string& value);
// `command` without `flag` (either form).
std::vector<std::string> WithoutFlag(std::vector<std::string> command, const std::string& flag);

// True when the command's program is dljob-train (by its file name).
bool IsDljobTrain(const DLJob& job);

}  // namespace dljob::advise
